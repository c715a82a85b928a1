"""``atexit`` for a macro the REPL runs (``:run``): the session goes on after the macro, so
only the handlers the macro registered run when it ends, as ``python3 macro.py`` would run
them at exit; the session's own (``rlcompleter``'s, which clears the Tab completer, and any
the user registered at the prompt) wait for the session's end.

The host calls ``begin()`` before the macro runs and ``end()`` when it has finished (after
its non-daemon threads, before stdout's last flush: ``_finish.py``).
"""

import atexit
import sys
import traceback

_saved = None
_handlers = []


def _register(func, *args, **kwargs):
    _handlers.append((func, args, kwargs))
    return func


def _unregister(func):
    _handlers[:] = [entry for entry in _handlers if entry[0] != func]


def begin():
    """From now on ``atexit.register`` and ``unregister`` keep the macro's handlers aside."""
    global _saved
    if _saved is None:
        _saved = (atexit.register, atexit.unregister)
    _handlers.clear()
    atexit.register = _register
    atexit.unregister = _unregister


def end():
    """Puts ``atexit`` back and runs the macro's handlers, last registered first, as atexit
    does: one that raises is reported on stderr and the others still run."""
    global _saved
    if _saved is None:
        return
    atexit.register, atexit.unregister = _saved
    _saved = None
    handlers = _handlers[:]
    _handlers.clear()
    for func, args, kwargs in reversed(handlers):
        try:
            func(*args, **kwargs)
        except SystemExit:
            pass
        except BaseException:  # noqa: BLE001 - atexit reports every error and goes on
            print(f"Exception ignored in atexit callback: {func!r}", file=sys.stderr)
            traceback.print_exc()
