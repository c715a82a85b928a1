"""apimacro: the API available to macros.

Everything public in the native ``_apimacro`` module (exceptions, ``sleep``,
API clients, ...) is available here, plus:

* ``apimacro.args`` -- the macro's arguments (``sys.argv[1:]`` when read);
* ``apimacro.output(rows, columns=None, format=None, file=None, to=None, table=None, key=None,
  mode="append")`` -- print rows, or write them to a SQLite, CSV or JSON Lines file (``to=``);
* ``apimacro.state`` -- this macro's state, kept between runs;
* ``apimacro.incremental(items, cursor="updated_at", key="issues", ...)`` -- only what is new;
* ``apimacro.format_rows(rows, columns=None, format="table", width=None, color=False)`` -- render rows.

Callables, classes and modules of ``_apimacro`` are copied into this module
at import; any other name (for example ``default_format``, which the host
changes between runs, or a name the host adds later) is looked up on
``_apimacro`` each time it is read.
"""

import sys as _sys

import _apimacro

__version__ = _apimacro.__version__


def _reexport() -> None:
    """Copy the public callables, classes and modules of ``_apimacro`` here.

    Plain data attributes are not copied: they stay live through
    ``__getattr__`` below.
    """
    namespace = globals()
    for name in dir(_apimacro):
        if not name.startswith("_"):
            value = getattr(_apimacro, name)
            if callable(value) or isinstance(value, type(_sys)):  # type(sys): ModuleType, no types import
                namespace[name] = value


_reexport()


def output(rows, columns=None, format=None, file=None, to=None, table=None, key=None, mode="append"):
    """Print rows (a list of dicts) as a table, json, csv or ndjson, or write them to ``to``.

    ``to`` names a file: ``.db``/``.sqlite`` (upserted into ``table`` by ``key``), ``.csv`` or
    ``.jsonl`` (appended; ``mode="replace"`` rewrites). Rows are written when the run ends with
    exit 0 (with its state), or at ``apimacro.state.commit()``. With ``run --output FILE`` rows
    go to FILE instead of stdout.

    See ``apimacro._output.output``; the formatter is imported on first use,
    so macros that never print rows do not pay for csv, json and unicodedata.
    """
    if to is not None or (file is None and _apimacro._run_output()):
        from ._store import write_rows

        return write_rows(rows, to=to, table=table, key=key, mode=mode, columns=columns)
    if table is not None or key is not None:
        raise TypeError("output(): table= and key= go with to= (a .db file) or run --output")
    from ._output import output as _output

    return _output(rows, columns=columns, format=format, file=file)


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


_OWN_NAMES = ("args", "format_rows", "incremental", "output", "state")


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
    if name == "__all__":
        return _public_names()
    if not name.startswith("_"):
        try:
            return getattr(_apimacro, name)
        except AttributeError:
            pass
    raise AttributeError(f"module 'apimacro' has no attribute {name!r}")


def __dir__() -> list:
    """List this module's names together with every public ``_apimacro`` name."""
    return sorted(set(globals()) | set(_public_names()))
