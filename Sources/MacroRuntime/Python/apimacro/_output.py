"""Rendering of rows (dicts) as table, JSON, NDJSON or CSV.

``output()`` is the user-facing printer; ``format_rows()`` renders to a string
without printing.  Both accept a list or any iterable (including a generator)
of mappings, or a single mapping, which counts as one row.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import sys
import unicodedata
from collections.abc import Iterable, Mapping
from typing import Any, TextIO

import _apimacro

FORMATS = ("table", "json", "csv", "ndjson")

# Characters that occupy no terminal cell, in addition to combining marks.
_ZERO_WIDTH = frozenset(
    ["\u200b", "\u200c", "\u200d", "\ufeff"] + [chr(c) for c in range(0xFE00, 0xFE10)]
)
# Control characters and line/paragraph separators would break a table line.
_CONTROL_RE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_NAMED_ESCAPES = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}


def char_width(char: str) -> int:
    """Return the number of terminal cells one character occupies (0, 1 or 2).

    Combining marks, other non-spacing/enclosing marks, format characters and
    the zero-width characters (U+200B..U+200D, U+FEFF, variation selectors)
    count 0; East Asian Wide and Fullwidth characters (CJK, most emoji)
    count 2; everything else counts 1.
    """
    if char in _ZERO_WIDTH or unicodedata.combining(char):
        return 0
    category = unicodedata.category(char)
    if category in ("Mn", "Me") or (category == "Cf" and char != "\u00ad"):
        return 0
    if "\U000e0100" <= char <= "\U000e01ef":  # variation selectors supplement
        return 0
    if unicodedata.east_asian_width(char) in ("W", "F"):
        return 2
    return 1


def display_width(text: str) -> int:
    """Return the display width of ``text`` in terminal cells."""
    if text.isascii():
        return len(text)
    return sum(char_width(c) for c in text)


def _escape_controls(text: str) -> str:
    """Show control characters visibly (``\\n``, ``\\t``, ``\\x1b``...)."""

    def replace(match: re.Match[str]) -> str:
        char = match.group()
        named = _NAMED_ESCAPES.get(char)
        if named is not None:
            return named
        code = ord(char)
        return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"

    return _CONTROL_RE.sub(replace, text)


def cell_text(value: Any) -> str:
    """Render one value as cell text (unescaped), as used by table and CSV.

    None becomes "", booleans "true"/"false", dicts, lists and tuples compact
    JSON, everything else ``str(value)``.
    """
    if value is None:
        return ""
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, (dict, list, tuple)):
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    return str(value)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _normalize_format(format: Any) -> str:
    """Validate a format name (case-insensitive) and return it in lower case."""
    if isinstance(format, str) and format.strip().lower() in FORMATS:
        return format.strip().lower()
    raise ValueError(
        f"unknown output format {format!r}; valid formats are: " + ", ".join(FORMATS)
    )


def _collect_rows(rows: Any) -> list[Mapping[Any, Any]]:
    """Turn ``rows`` into a list of mappings, checking every row."""
    if isinstance(rows, Mapping):
        return [rows]
    if isinstance(rows, (str, bytes, bytearray)) or not isinstance(rows, Iterable):
        raise TypeError(
            "rows must be a dict or an iterable of dicts, "
            f"not {type(rows).__name__}"
        )
    collected = []
    for index, row in enumerate(rows):
        if not isinstance(row, Mapping):
            raise TypeError(
                f"row {index} is a {type(row).__name__}, expected a dict "
                f"(every row must map column names to values): {row!r:.80}"
            )
        collected.append(row)
    return collected


def _collect_columns(columns: Any) -> list[Any] | None:
    """Return the explicit column list, or None if ``columns`` was not given."""
    if columns is None:
        return None
    if isinstance(columns, (str, bytes)) or not isinstance(columns, Iterable):
        raise TypeError(
            "columns must be a list of column names, "
            f"not {type(columns).__name__}"
        )
    return list(columns)


def _union_of_keys(rows: list[Mapping[Any, Any]]) -> list[Any]:
    """All keys of all rows, in order of first appearance."""
    seen: dict[Any, None] = {}
    for row in rows:
        for key in row:
            seen.setdefault(key, None)
    return list(seen)


def _render_table(rows: list[Mapping[Any, Any]], columns: list[Any]) -> str:
    if not rows or not columns:
        return ""
    headers = [_escape_controls(cell_text(column)) for column in columns]
    body = [
        [(_escape_controls(cell_text(row.get(c))), _is_number(row.get(c))) for c in columns]
        for row in rows
    ]
    widths = [max(1, display_width(h)) for h in headers]
    for cells in body:
        for i, (text, _) in enumerate(cells):
            widths[i] = max(widths[i], display_width(text))
    # A column whose non-empty values are all numbers has a right-aligned header.
    numeric = []
    for i, column in enumerate(columns):
        values = [row.get(column) for row in rows if row.get(column) is not None]
        numeric.append(bool(values) and all(_is_number(v) for v in values))

    def pad(text: str, width: int, right: bool) -> str:
        fill = " " * (width - display_width(text))
        return fill + text if right else text + fill

    lines = [
        "  ".join(pad(h, w, num) for h, w, num in zip(headers, widths, numeric)),
        "  ".join("-" * w for w in widths),
    ]
    for cells in body:
        lines.append(
            "  ".join(pad(text, w, num) for (text, num), w in zip(cells, widths))
        )
    return "".join(line.rstrip(" ") + "\n" for line in lines)


def _select(row: Mapping[Any, Any], columns: list[Any] | None) -> dict[Any, Any]:
    if columns is None:
        return dict(row)
    return {column: row.get(column) for column in columns}


def _render_json(rows: list[Mapping[Any, Any]], columns: list[Any] | None) -> str:
    data = [_select(row, columns) for row in rows]
    return json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n"


def _render_ndjson(rows: list[Mapping[Any, Any]], columns: list[Any] | None) -> str:
    return "".join(
        json.dumps(_select(row, columns), ensure_ascii=False, separators=(",", ":"), default=str)
        + "\n"
        for row in rows
    )


# A cell a spreadsheet would run as a formula (OWASP "CSV Injection").
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_PLAIN_NUMBER_RE = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def csv_cell(value: Any) -> str:
    """One CSV cell: ``cell_text``, with a ``'`` put in front of text starting with
    ``=``, ``+``, ``-``, ``@``, a tab or a carriage return, so a spreadsheet shows it
    instead of running it as a formula (OWASP's advice).  Numbers are left alone:
    ``-5`` and ``"+1.5e3"`` stay as they are.
    """
    text = cell_text(value)
    if not text.startswith(_FORMULA_START) or _is_number(value) or _PLAIN_NUMBER_RE.fullmatch(text):
        return text
    return "'" + text


def _render_csv(rows: list[Mapping[Any, Any]], columns: list[Any]) -> str:
    if not columns:
        return ""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([csv_cell(column) for column in columns])
    for row in rows:
        writer.writerow([csv_cell(row.get(column)) for column in columns])
    return buffer.getvalue()


def format_rows(rows: Any, columns: Iterable[Any] | None = None, format: str = "table") -> str:
    """Render ``rows`` in ``format`` and return the text (ending in a newline).

    ``rows`` is an iterable of dicts (or a single dict).  ``columns`` selects
    and orders the columns; by default they are the keys of all rows in order
    of first appearance.  Formats: "table", "json", "csv", "ndjson".

    With no rows, "table" and "ndjson" give "", "json" gives "[]\\n" and
    "csv" gives just the header line when ``columns`` is given, else "".
    In json/ndjson, rows are written as they are unless ``columns`` is given;
    then each object has exactly those keys in that order (missing → null).

    Raises TypeError for a row that is not a dict and ValueError for an
    unknown format.
    """
    fmt = _normalize_format(format)
    collected = _collect_rows(rows)
    explicit = _collect_columns(columns)
    if fmt == "json":
        return _render_json(collected, explicit)
    if fmt == "ndjson":
        return _render_ndjson(collected, explicit)
    all_columns = explicit if explicit is not None else _union_of_keys(collected)
    if fmt == "csv":
        return _render_csv(collected, all_columns)
    return _render_table(collected, all_columns)


def _isatty(file: Any) -> bool:
    isatty = getattr(file, "isatty", None)
    if isatty is None:
        return False
    try:
        return bool(isatty())
    except (ValueError, OSError):  # closed or detached stream
        return False


def resolve_format(format: str | None, file: Any) -> str:
    """Choose the output format: ``format`` if given, else the host's
    ``--format`` value (``_apimacro.default_format``), else "table" when
    ``file`` is a terminal and "json" otherwise."""
    if format is None:
        format = _apimacro.default_format
    if format is None:
        return "table" if _isatty(file) else "json"
    return _normalize_format(format)


def output(
    rows: Any,
    columns: Iterable[Any] | None = None,
    format: str | None = None,
    file: TextIO | None = None,
) -> None:
    """Print ``rows`` (a list/iterable of dicts, or one dict) to ``file``.

    ``file`` defaults to the current ``sys.stdout``.  The format is
    ``format`` if given, else the host's ``--format`` flag, else "table" on a
    terminal and "json" when the output is redirected.  See ``format_rows``
    for ``columns`` and the formats.
    """
    if file is None:
        file = sys.stdout
    text = format_rows(rows, columns, resolve_format(format, file))
    if text:
        file.write(text)
    flush = getattr(file, "flush", None)
    if flush is not None:
        flush()


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
