"""apimacro in a notebook (the kernel of ``apimacro.kernel``, or ``%load_ext apimacro._notebook``).

* ``%apimacro record FILE`` / ``%apimacro replay FILE`` / ``%apimacro live``: the session from
  now on records every exchange to FILE (written at the next switch and when the kernel ends),
  answers from FILE with no network, or goes back to the network. ``%apimacro save`` writes
  the recording now.
* ``apimacro.output(rows)`` displays an HTML table (every value escaped) instead of printing.

A switch builds apimacro's native module again with the new settings (its clients, cache and
recorder), and rebinds ``apimacro`` and the names the notebook took from it
(``from apimacro import github``) to the new objects.
"""

import html
import importlib
import importlib.util
import os
import shlex
import sys

# Whether ``apimacro.output`` displays rows (set when the extension is loaded into a shell).
displaying = False
_shell = None


class Rows:
    """Rows (a list of dicts) shown as an HTML table in a notebook, as text elsewhere."""

    def __init__(self, rows, columns=None):
        self.rows = [dict(row) for row in rows]
        if columns is None:
            columns = []
            for row in self.rows:
                columns.extend(key for key in row if key not in columns)
        self.columns = list(columns)

    def _repr_html_(self):
        def cell(value):
            return "" if value is None else html.escape(str(value))

        head = "".join(f"<th>{html.escape(str(column))}</th>" for column in self.columns)
        body = "".join(
            "<tr>" + "".join(f"<td>{cell(row.get(column))}</td>" for column in self.columns) + "</tr>"
            for row in self.rows)
        return f'<table class="apimacro-rows"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'

    def __repr__(self):
        import apimacro

        return apimacro.format_rows(self.rows, columns=self.columns, format="table")


# The display a long pagination's progress is drawn in, while it runs (see ``progress``).
_progress = None


def progress(text):
    """Draws a pagination's progress (``github: 3 pages · 250 items · 4 requests``) in one
    display under the cell, updated in place; None takes it away (the pagination ended)."""
    global _progress
    from IPython.display import Pretty, display as show

    if text is None:
        if _progress is not None:
            _progress.update(Pretty(""))
            _progress = None
        return
    if _progress is None:
        _progress = show(Pretty(text), display_id=True)
    else:
        _progress.update(Pretty(text))


def display(rows, columns=None):
    """What ``apimacro.output(rows)`` does in a notebook: displays the rows as a table."""
    from IPython.display import display as show

    show(Rows(rows, columns))


def switch(record=None, replay=None):
    """Builds the native module again, recording to ``record`` or replaying ``replay`` (neither:
    live), after writing the recording so far; rebinds ``apimacro`` and the notebook's names."""
    old = sys.modules["_apimacro"]
    old._save_recording()
    for variable, value in (("APIMACRO_RECORD", record), ("APIMACRO_REPLAY", replay)):
        if value is None:
            os.environ.pop(variable, None)
        else:
            os.environ[variable] = os.path.abspath(value)
    try:
        new = importlib.util.module_from_spec(old.__spec__)
    except BaseException:
        sys.modules["_apimacro"] = old
        raise
    sys.modules["_apimacro"] = new
    package = importlib.reload(sys.modules["apimacro"])
    for name, module in list(sys.modules.items()):
        if name.startswith("apimacro.") and getattr(module, "_apimacro", None) is old:
            module._apimacro = new
    if _shell is not None:
        namespace = _shell.user_ns
        for name, value in list(namespace.items()):
            if name.startswith("_"):
                continue
            for attribute in dir(old):
                if not attribute.startswith("_") and getattr(old, attribute, None) is value:
                    namespace[name] = getattr(package, attribute, getattr(new, attribute))
                    break
    return package


def _magic(line):
    words = shlex.split(line)
    usage = "usage: %apimacro record FILE | %apimacro replay FILE | %apimacro live | %apimacro save"
    if len(words) == 2 and words[0] == "record":
        switch(record=words[1])
        print(f"apimacro: recording to {os.path.abspath(words[1])}")
    elif len(words) == 2 and words[0] == "replay":
        switch(replay=words[1])
        print(f"apimacro: replaying {os.path.abspath(words[1])} (no network)")
    elif words == ["live"]:
        switch()
        print("apimacro: live (the network, the cache)")
    elif words == ["save"]:
        sys.modules["_apimacro"]._save_recording()
    else:
        from IPython.core.error import UsageError

        raise UsageError(usage)


def load_ipython_extension(shell):
    """Registers ``%apimacro`` and the rows display in ``shell`` (``%load_ext apimacro._notebook``)."""
    global displaying, _shell
    _shell = shell
    displaying = True
    shell.register_magic_function(_magic, magic_kind="line", magic_name="apimacro")
