# What python3 does after a script, run by the host (MacroRunner.finish) once a macro's main
# returns or raises: wait for the non-daemon threads it started, then run the atexit handlers.
# Executed into a fresh namespace, never imported.
import sys, atexit
if 'threading' in sys.modules:
    _threading = sys.modules['threading']
    for _t in _threading.enumerate():
        if _t is not _threading.main_thread() and not _t.daemon:
            _t.join()
atexit._run_exitfuncs()
