"""Debugging a macro: ``breakpoint()``, ``run --pdb``, ``run --debugpy``, and re-importing
the modules a macro imported from its folder (``run --watch``, the REPL's ``:reload``).

The host sets ``sys.breakpointhook`` to a native function that calls ``breakpointhook`` here
(imported only then: a macro without a breakpoint never loads this module). The embedded
interpreter ignores ``PYTHON*`` variables, so the hook reads ``PYTHONBREAKPOINT`` itself, as
Python's own hook does: ``0`` skips breakpoints, ``module.function`` calls that instead, empty
or unset opens pdb.
"""

from __future__ import annotations

import os
import sys
from types import FrameType, ModuleType, TracebackType
from typing import Any

# The modules whose frames pdb steps over (`Pdb(skip=...)` patterns).
SKIPPED_MODULES = ["apimacro", "apimacro.*", "_apimacro*", "code", "codeop"]

# Set by `apimacro batch` in each job's environment: the job's name.
BATCH_JOB_VARIABLE = "APIMACRO_BATCH_JOB"


class BreakpointError(RuntimeError):
    """``breakpoint()`` where pdb cannot ask for commands: in a ``batch`` job, or with stdin not
    a terminal. Raised in the macro, at the breakpoint, instead of hanging or reading commands
    from a pipe."""


def _who() -> str:
    """How the running macro is named in messages: the batch job, the macro or the REPL."""
    job = os.environ.get(BATCH_JOB_VARIABLE)
    if job:
        return f"batch job '{job}'"
    main = sys.modules.get("__main__")
    if main is not None and getattr(main, "__name__", "") == "__console__":
        return "the REPL"
    name = sys.argv[0] if sys.argv and sys.argv[0] else ""
    return f"macro {name}" if name else "the REPL"


def _stdin_is_terminal() -> bool:
    try:
        return os.isatty(0)
    except OSError:
        return False


def breakpointhook(*args: Any, **kwargs: Any) -> Any:
    """``sys.breakpointhook``: what ``breakpoint()`` does (see the module's text)."""
    frame = sys._getframe(1)
    spec = os.environ.get("PYTHONBREAKPOINT", "")
    if spec == "0":
        return None
    if spec and spec != "pdb.set_trace":
        module_name, dot, attribute = spec.rpartition(".")
        try:
            hook = getattr(__import__(module_name if dot else "builtins", fromlist=[attribute]), attribute)
        except Exception:
            import warnings

            warnings.warn(f'Ignoring unimportable $PYTHONBREAKPOINT: "{spec}"', RuntimeWarning, stacklevel=2)
            return None
        return hook(*args, **kwargs)
    error = _refusal(frame)
    if error is not None:
        raise error
    _set_trace(frame, *args, **kwargs)
    return None


def refusal() -> BreakpointError | None:
    """The error ``breakpoint()`` raises in the caller's frame (pdb would open where it cannot
    ask for commands), or None. The host's hook raises it itself, so the traceback ends at the
    macro's ``breakpoint()`` line, not in this module."""
    spec = os.environ.get("PYTHONBREAKPOINT", "")
    if spec not in ("", "pdb.set_trace"):
        return None
    return _refusal(sys._getframe(1))


def _refusal(frame: FrameType) -> BreakpointError | None:
    where = f"{frame.f_code.co_filename}:{frame.f_lineno}"
    if os.environ.get(BATCH_JOB_VARIABLE):
        return BreakpointError(
            f"breakpoint() at {where} in {_who()}: a batch job has no terminal for pdb; run it alone with "
            "`apimacro run` on a terminal to debug it, or set PYTHONBREAKPOINT=0 to skip breakpoints"
        )
    if not _stdin_is_terminal():
        return BreakpointError(
            f"breakpoint() at {where} in {_who()}: stdin is not a terminal, so pdb cannot ask for commands; "
            "run it on a terminal to debug it, or set PYTHONBREAKPOINT=0 to skip breakpoints"
        )
    return None


def _set_trace(frame: FrameType, *, header: str | None = None) -> None:
    """``pdb.set_trace(header=...)`` stopping in ``frame`` (the caller of ``breakpoint()``)."""
    import pdb

    # Stepping never stops in apimacro's own Python (the REPL's display hook, the code that
    # calls main()) nor in the console under the REPL: from `breakpoint()` typed at the prompt,
    # pdb stops on the line's return, as in python3's REPL.
    debugger = pdb.Pdb(skip=SKIPPED_MODULES)
    if header is not None:
        debugger.message(header)
    debugger.set_trace(frame)


def post_mortem(traceback: TracebackType | None) -> bool:
    """``run --pdb``: pdb at the frame that raised (as ``pytest --pdb``); False, with a line on
    stderr, when stdin is not a terminal."""
    if traceback is None:
        return False
    if not _stdin_is_terminal():
        sys.stderr.write("apimacro: --pdb needs a terminal on stdin; no post-mortem debugger opened\n")
        return False
    import pdb

    sys.stderr.write("apimacro: entering the post-mortem debugger (pdb) at the frame that raised; "
                     "q quits\n")
    sys.stderr.flush()
    debugger = pdb.Pdb(skip=SKIPPED_MODULES)
    debugger.reset()
    debugger.interaction(None, traceback)
    return True


def listen(host: str, port: int, wait: bool, python: str) -> None:
    """``run --debugpy``: debugpy listening on ``host:port`` for a Debug Adapter Protocol client
    (VS Code's "attach"), its adapter run by ``python``; with ``wait``, until one attached.

    Raises ``ImportError`` when debugpy cannot be imported and ``OSError`` when it cannot listen.
    """
    # The macro runs from its own file, not a frozen module: debugpy's warning about frozen
    # modules (the standard library's) would only worry.
    os.environ.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")
    import debugpy

    debugpy.configure(python=python)
    try:
        debugpy.listen((host, port))
    except Exception as error:  # debugpy reports its adapter's failure as a RuntimeError
        raise OSError(str(error)) from None
    shown = f"[{host}]" if ":" in host else host
    if wait:
        sys.stderr.write(f"apimacro: debugpy listening on {shown}:{port}; waiting for a debugger to attach\n")
        sys.stderr.flush()
        debugpy.wait_for_client()
        sys.stderr.write("apimacro: debugger attached\n")
    else:
        sys.stderr.write(f"apimacro: debugpy listening on {shown}:{port}\n")
    sys.stderr.flush()


def port_in_use(host: str, port: int) -> bool:
    """Whether ``host:port`` cannot be listened on now (another program holds it)."""
    import socket

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as error:
            import errno

            return error.errno == errno.EADDRINUSE
    return False


def _inside(path: str, folders: list[str]) -> bool:
    return any(path == folder or path.startswith(folder.rstrip(os.sep) + os.sep) for folder in folders)


def _is_local(name: str, module: ModuleType, folders: list[str], installed: list[str]) -> bool:
    path = getattr(module, "__file__", None)
    if name == "__main__" or name.split(".")[0] == "apimacro" or not isinstance(path, str):
        return False
    real = os.path.realpath(path)
    if os.sep + "site-packages" + os.sep in real or os.sep + "dist-packages" + os.sep in real:
        return False
    return _inside(real, folders) and not _inside(real, installed)


def _installed() -> list[str]:
    return [os.path.realpath(prefix) for prefix in {sys.prefix, sys.base_prefix, sys.exec_prefix}]


def local_modules(folders: list[str]) -> dict[str, ModuleType]:
    """The imported modules whose file is in one of ``folders`` (or below), by name: not those
    of a Python installation or virtualenv kept there (``site-packages``), nor apimacro's own."""
    folders = [os.path.realpath(folder) for folder in folders]
    installed = _installed()
    return {
        name: module for name, module in list(sys.modules.items()) if _is_local(name, module, folders, installed)
    }


def forget_local_modules(folders: list[str]) -> list[str]:
    """Drops the modules imported from ``folders`` from ``sys.modules`` (the next import reads
    them afresh) and returns their files."""
    modules = local_modules(folders)
    files = []
    for name, module in modules.items():
        files.append(os.path.realpath(module.__file__ or ""))
        sys.modules.pop(name, None)
        _forget_bytecode(module.__file__ or "")
    import importlib

    importlib.invalidate_caches()
    return sorted(set(files))


class Reloader:
    """The REPL's ``:reload``: re-imports the modules imported from the session's folders (the
    working directory and the macro folders) whose file changed since it was imported.

    ``note()`` (after each line the console runs) records when each such module was imported.
    """

    def __init__(self, folders: list[str]) -> None:
        self.folders = [os.path.realpath(folder) for folder in folders if folder]
        self.installed = _installed()
        # Each module looked at once (by identity): after every line, only the new ones are.
        self.looked: dict[str, int] = {}
        self.seen: dict[str, tuple[str, int]] = {}

    @staticmethod
    def _stamp(path: str) -> int:
        """The file's content as a number (not its time: two saves within the file system's
        clock tick would look the same); -1 when it cannot be read."""
        import zlib

        try:
            with open(path, "rb") as file:
                return zlib.crc32(file.read())
        except OSError:
            return -1

    def note(self) -> None:
        for name, module in list(sys.modules.items()):
            if self.looked.get(name) == id(module):
                continue
            self.looked[name] = id(module)
            if _is_local(name, module, self.folders, self.installed):
                path = module.__file__ or ""
                self.seen[name] = (path, self._stamp(path))

    def reload(self) -> tuple[list[str], list[str]]:
        """Re-imports the changed modules; returns the names reloaded and the names whose file
        is gone (or failed to import: the error is raised after the others were reloaded)."""
        import importlib

        self.note()
        importlib.invalidate_caches()
        reloaded: list[str] = []
        gone: list[str] = []
        failure: BaseException | None = None
        for name, (path, stamp) in sorted(self.seen.items()):
            module = sys.modules.get(name)
            if module is None:
                del self.seen[name]
                continue
            now = self._stamp(path)
            if now == stamp:
                continue
            if now == -1:
                gone.append(name)
                continue
            try:
                _reload(module, path)
            except BaseException as error:  # the others are still reloaded; this one is raised
                failure = failure or error
                continue
            self.seen[name] = (module.__file__ or path, self._stamp(module.__file__ or path))
            reloaded.append(name)
        if failure is not None:
            raise failure
        return reloaded, gone


def _reload(module: ModuleType, path: str) -> None:
    """``importlib.reload(module)``, with the folder it was imported from on ``sys.path`` meanwhile
    (a macro's folder is there only while the macro runs)."""
    import importlib

    root = os.path.dirname(path)
    depth = module.__name__.count(".") + (1 if os.path.basename(path) == "__init__.py" else 0)
    for _ in range(depth):
        root = os.path.dirname(root)
    _forget_bytecode(path)
    added = root not in sys.path
    if added:
        sys.path.insert(0, root)
    try:
        importlib.reload(module)
    finally:
        if added and root in sys.path:
            sys.path.remove(root)


def _forget_bytecode(path: str) -> None:
    """Removes the ``__pycache__`` copy of ``path``: Python trusts it while the source keeps its
    size and its modification time in whole seconds, so an edit within the same second that
    keeps the size (``VALUE = 1`` to ``VALUE = 2``) would import the old code."""
    # Without a cache tag Python writes no bytecode (and cache_from_source cannot name it).
    if not path.endswith(".py") or sys.implementation.cache_tag is None:
        return
    import importlib.util

    try:
        os.remove(importlib.util.cache_from_source(path))
    except (OSError, ValueError):
        pass
