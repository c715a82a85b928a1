"""Stdout at the end of a run: telling a closed pipe (``apimacro run m | head -2``) from
the macro's own broken pipes, and the final flush.

Kept apart from ``apimacro._output`` so that every run's end
(``_finish.py``) imports only ``os`` and ``sys``, not the formatter's csv, json, re and
unicodedata: that import was about half of an empty macro's start-up.
"""

from __future__ import annotations

import os
import sys

# The exit status of a run whose stdout's reader went away (``| head``): 128 + SIGPIPE, what a
# shell reports for gh or jq there (the host's MacroRunner.ExitCode.closedOutput).
CLOSED_OUTPUT_STATUS = 141

# Set once stdout's reader was found gone; descriptor 1 is /dev/null from then on.
_stdout_closed = False


def _reader_gone(descriptor: int) -> bool:
    """Whether ``descriptor`` is a pipe or socket whose reading end has been closed."""
    import select

    try:
        poller = select.poll()
        poller.register(descriptor, select.POLLOUT)
        return any(events & (select.POLLERR | select.POLLHUP) for _, events in poller.poll(0))
    except (OSError, ValueError):
        return False


def _silence(descriptor: int) -> None:
    """Points ``descriptor`` at /dev/null: later writes to it succeed and go nowhere."""
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, descriptor)
    finally:
        os.close(null)


def closed_stdout(error: BaseException | None = None) -> bool:
    """Whether stdout's reader has gone (``apimacro run m | head -2``) and ``error``, when
    given, is the ``BrokenPipeError`` a write to it raised: the run then ends quietly with
    ``CLOSED_OUTPUT_STATUS``, as gh and jq end, with no traceback.

    The first time it is seen, descriptor 1 (and 2 when its reader is gone too, as with
    ``2>&1 | head``) is pointed at /dev/null, so what ``sys.stdout`` still holds and any later
    write are dropped instead of failing again.  A ``BrokenPipeError`` from anything else (a
    socket, a subprocess's pipe) is the macro's own error: False.
    """
    global _stdout_closed
    if error is not None and not isinstance(error, BrokenPipeError):
        return False
    if not _stdout_closed:
        if not _reader_gone(1):
            return False
        _silence(1)
        _stdout_closed = True
        if _reader_gone(2):
            _silence(2)
    return True


def flush_stdout() -> bool:
    """Flushes ``sys.stdout`` at the end of a run; False when its reader had gone and what it
    held was lost (see ``closed_stdout``).  Other flush errors are ignored, as before."""
    try:
        if sys.stdout is not None:
            sys.stdout.flush()
    except BrokenPipeError as error:
        return not closed_stdout(error)
    except (OSError, ValueError):
        pass
    return True
