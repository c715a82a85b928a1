# What python3 does after a script, run by the host (MacroRunner.finish) once a macro's main
# returns or raises: wait for the non-daemon threads it started, run the atexit handlers, then
# flush stdout. `delivered` tells the host whether that flush reached stdout's reader (False:
# the reader had gone, `| head`, and the run ends with status 141). In the REPL (`in_session`
# set by the host) only the handlers the macro registered run (apimacro._atexit_scope).
# Executed into a fresh namespace, never imported.
import sys, atexit
if 'threading' in sys.modules:
    _threading = sys.modules['threading']
    for _t in _threading.enumerate():
        if _t is not _threading.main_thread() and not _t.daemon:
            _t.join()
if globals().get('in_session'):
    from apimacro._atexit_scope import end as _end_scope
    _end_scope()
else:
    atexit._run_exitfuncs()
# The flush itself inline: importing apimacro._stdout costs an empty run's end ~2 M
# instructions, and it is needed only when stdout's reader has gone.
delivered = True
try:
    if sys.stdout is not None:
        sys.stdout.flush()
except BrokenPipeError as _error:
    try:
        from apimacro._stdout import closed_stdout as _closed_stdout
    except ImportError:
        pass
    else:
        delivered = not _closed_stdout(_error)
except (OSError, ValueError):
    pass
