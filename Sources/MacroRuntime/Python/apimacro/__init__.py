"""apimacro: the API available to macros.

Everything public in the native ``_apimacro`` module (exceptions, ``sleep``,
API clients, ...) is available here, plus:

* ``apimacro.args`` -- the macro's arguments (``sys.argv[1:]`` when read);
* ``apimacro.output(rows, columns=None, format=None, file=None, to=None, table=None, key=None,
  mode="append")`` -- print rows, or write them to a SQLite, CSV or JSON Lines file (``to=``);
* ``apimacro.state`` -- this macro's state, kept between runs;
* ``apimacro.incremental(items, cursor="updated_at", key="issues", ...)`` -- only what is new;
* ``apimacro.format_rows(rows, columns=None, format="table", width=None, color=False)`` -- render rows;
* ``apimacro.check(name, passed, seen=None, fatal=False)`` and ``check_equal``, ``check_in``,
  ``check_status`` -- named checks of what came back; a failed one makes the run exit 1.

Callables, classes and modules ``_apimacro`` holds at import are copied into
this module; any other name (for example ``default_format``, which the host
changes between runs, a client such as ``github``, which ``_apimacro`` builds
the first time it is read, or a name the host adds later) is looked up on
``_apimacro`` each time it is read.
"""

import sys as _sys

import _apimacro

__version__ = _apimacro.__version__


def _reexport() -> None:
    """Copy the public callables, classes and modules of ``_apimacro`` here.

    Plain data attributes are not copied: they stay live through
    ``__getattr__`` below. Nor is what ``_apimacro`` makes on first read (the
    clients, the exception classes, ``get``...): a value of that name kept from
    an earlier ``_apimacro`` (a notebook's ``%apimacro replay`` builds it again
    and reloads this module) is dropped, so that ``__getattr__`` finds the new one.
    """
    namespace = globals()
    made = vars(_apimacro)
    for name in dir(_apimacro):
        if name.startswith("_"):
            continue
        if name not in made:
            namespace.pop(name, None)
            continue
        value = made[name]
        if callable(value) or isinstance(value, type(_sys)):  # type(sys): ModuleType, no types import
            namespace[name] = value


_reexport()


def output(rows, columns=None, format=None, file=None, to=None, table=None, key=None, mode="append"):
    """Print rows (a list of dicts) as a table, json, csv or ndjson, or write them to ``to``.

    ``to`` names a file: ``.db``/``.sqlite`` (upserted into ``table`` by ``key``), ``.csv`` or
    ``.jsonl`` (appended; ``mode="replace"`` rewrites), or a ``postgresql://`` URL (upserted into
    ``table``; with ``APIMACRO_DATABASE_URL`` set, ``table=`` alone goes there). Rows are written when the run ends with
    exit 0 (with its state), or at ``apimacro.state.commit()``. With ``run --output FILE`` rows
    go to FILE instead of stdout.

    See ``apimacro._output.output``; the formatter is imported on first use,
    so macros that never print rows do not pay for csv, json and unicodedata.
    """
    # Inside `apimacro mcp`, a tool call's rows are its result (apimacro._serving).
    serving = _sys.modules.get("apimacro._serving")
    if serving is not None and to is None and file is None and serving.collect(rows, columns):
        return None
    if to is not None or (
        file is None and (_apimacro._run_output() or (table is not None and _apimacro._database_url()))
    ):
        from ._store import write_rows

        return write_rows(rows, to=to, table=table, key=key, mode=mode, columns=columns)
    if table is not None or key is not None:
        raise TypeError(
            "output(): table= and key= go with to= (a .db file or postgresql:// URL), run --output, "
            "or APIMACRO_DATABASE_URL"
        )
    notebook = _sys.modules.get("apimacro._notebook")
    if file is None and format is None and notebook is not None and notebook.displaying:
        return notebook.display(rows, columns)
    from ._output import output as _output

    return _output(rows, columns=columns, format=format, file=file)


def writes(func):
    """Mark a macro's ``main`` as one that writes (creates, changes or deletes something):
    ``apimacro mcp`` offers it as a tool only with ``--allow-writes``, marked destructive.
    Returns ``func`` unchanged; ``apimacro run`` ignores the mark."""
    func.__apimacro_writes__ = True
    return func


def format_rows(rows, columns=None, format="table", width=None, color=False):
    """Render rows to a string without printing (see ``output``); ``width`` fits a table in
    that many terminal cells, ``color`` paints it as a terminal shows it."""
    from ._output import format_rows as _format_rows

    return _format_rows(rows, columns=columns, format=format, width=width, color=color)

def incremental(items, cursor="updated_at", key="issues", initial=None, lag=None, primary_key="id"):
    """Yield only the items whose ``cursor`` is past the bookmark in ``apimacro.state[key]``,
    moving the bookmark as they are yielded (committed with the run). See ``apimacro._store``."""
    from ._store import incremental as _incremental

    return _incremental(items, cursor=cursor, key=key, initial=initial, lag=lag, primary_key=primary_key)


def check(name, passed, seen=None, fatal=False):
    """Record the check ``name``: whether it ``passed`` and what was ``seen``; returns ``passed``.
    A failed check makes the run exit 1 and is printed at the end; ``fatal=True`` raises
    ``CheckFailed`` at once. See ``apimacro._checks``."""
    from ._checks import check as _check

    return _check(name, passed, seen=seen, fatal=fatal)


def check_equal(name, seen, expected, fatal=False):
    """``check(name, seen == expected, seen)``, the expected value shown when it fails."""
    from ._checks import check_equal as _check_equal

    return _check_equal(name, seen, expected, fatal=fatal)


def check_in(name, seen, allowed, fatal=False):
    """``check(name, seen in allowed, seen)``."""
    from ._checks import check_in as _check_in

    return _check_in(name, seen, allowed, fatal=fatal)


def check_status(response, expected=200, name=None, fatal=False):
    """Check a response's status: one code or several (``(200, 201)``)."""
    from ._checks import check_status as _check_status

    return _check_status(response, expected, name=name, fatal=fatal)


_OWN_NAMES = (
    "CheckFailed",
    "args",
    "check",
    "check_equal",
    "check_in",
    "check_status",
    "format_rows",
    "incremental",
    "output",
    "state",
    "writes",
)


def _public_names() -> list:
    names = {n for n in dir(_apimacro) if not n.startswith("_")}
    names.update(_OWN_NAMES)
    return sorted(names)


def __getattr__(name: str):
    """Compute ``args`` on access and forward other names to ``_apimacro``."""
    if name == "args":
        return list(getattr(_sys, "argv", [])[1:])
    if name == "state":
        from ._store import state

        return state
    if name == "CheckFailed":
        from ._checks import CheckFailed

        return CheckFailed
    if name == "__all__":
        return _public_names()
    if not name.startswith("_"):
        try:
            value = getattr(_apimacro, name)
        except AttributeError:
            pass
        else:
            # A callable or module `_apimacro` made on first use: kept here as `_reexport` keeps
            # the others, so the next read is a plain lookup.
            if callable(value) or isinstance(value, type(_sys)):
                globals()[name] = value
            return value
    raise AttributeError(f"module 'apimacro' has no attribute {name!r}")


def __dir__() -> list:
    """List this module's names together with every public ``_apimacro`` name."""
    return sorted(set(globals()) | set(_public_names()))
