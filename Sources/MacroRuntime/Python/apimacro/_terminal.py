"""What a run on a terminal adds to the macro's streams: the progress line's erasure.

When the host shows a progress line on stderr (a long pagination or ``map`` on a terminal),
``install`` wraps ``sys.stdout`` and ``sys.stderr`` so that whatever the macro writes first
erases the line (``_apimacro._progress_erase``, which does nothing when no line is shown):
the output never lands in the middle of it.  Nothing is wrapped anywhere else.
"""

import sys


class ErasingStream:
    """A text stream whose writes erase the progress line first; everything else is the stream's."""

    def __init__(self, stream, erase):
        self._stream = stream
        self._erase = erase

    def write(self, text):
        self._erase()
        return self._stream.write(text)

    def writelines(self, lines):
        self._erase()
        return self._stream.writelines(lines)

    def __getattr__(self, name):
        return getattr(self._stream, name)


def install(erase):
    """Wraps ``sys.stdout`` and ``sys.stderr`` (once)."""
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name, None)
        if stream is not None and not isinstance(stream, ErasingStream):
            setattr(sys, name, ErasingStream(stream, erase))
