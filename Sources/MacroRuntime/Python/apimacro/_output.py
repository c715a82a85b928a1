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


# The column a row that is not a dict fills in a table or CSV (``output(["a", "b"])``).
VALUE_COLUMN = "value"


def _collect_rows(rows: Any) -> list[Any]:
    """Turn ``rows`` into a list of rows: a dict (or a string, or any value that is not an
    iterable) is one row; any other iterable gives one row per item."""
    if isinstance(rows, (Mapping, str, bytes, bytearray)) or not isinstance(rows, Iterable):
        return [rows]
    return list(rows)


def _as_mapping(row: Any) -> Mapping[Any, Any]:
    """A row as a table or CSV sees it: a dict as it is, any other value in ``VALUE_COLUMN``."""
    return row if isinstance(row, Mapping) else {VALUE_COLUMN: row}


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


def _union_of_keys(rows: list[Any]) -> list[Any]:
    """All keys of all rows, in order of first appearance."""
    seen: dict[Any, None] = {}
    for row in rows:
        for key in _as_mapping(row):
            seen.setdefault(key, None)
    return list(seen)


# A cut cell keeps at least this many cells (its "…" included) when a table is fitted.
_NARROWEST = 6
_ELLIPSIS = "\u2026"

# SGR styles: a table's header and rule; JSON as jq shows it (the child of `apimacro api` sets
# jq's colours to the same: null grey, strings green, brackets bold, keys bold blue).
_BOLD, _DIM, _RESET = "\x1b[1m", "\x1b[2m", "\x1b[0m"
JSON_COLORS = {
    "null": "0;90", "false": "0;39", "true": "0;39", "number": "0;39", "string": "0;32",
    "bracket": "1;39", "key": "34;1",
}


def _fit(widths: list[int], fixed: list[bool], limit: int) -> list[int]:
    """Column widths whose table, two cells between columns, fits in ``limit`` cells: the widest
    columns are cut first, to one common width, never below ``_NARROWEST`` (or their own width);
    a ``fixed`` column (numbers) keeps its width.  Unchanged when the table fits, or when even
    the narrowest widths do not (the terminal wraps it then)."""
    gaps = 2 * (len(widths) - 1)
    if sum(widths) + gaps <= limit:
        return widths
    floor = [w if keep else min(w, _NARROWEST) for w, keep in zip(widths, fixed)]
    if sum(floor) + gaps >= limit:
        return floor

    def total(cap: int) -> int:
        return sum(max(f, min(w, cap)) for f, w in zip(floor, widths)) + gaps

    low, high = 0, max(widths)
    while low < high:  # the widest common cap that fits
        middle = (low + high + 1) // 2
        if total(middle) <= limit:
            low = middle
        else:
            high = middle - 1
    fitted = [max(f, min(w, low)) for f, w in zip(floor, widths)]
    spare = limit - total(low)
    for index in sorted(range(len(widths)), key=lambda i: -widths[i]):
        if spare <= 0:
            break
        if fitted[index] < widths[index]:
            fitted[index] += 1
            spare -= 1
    return fitted


def _cut(text: str, width: int) -> str:
    """``text`` cut to ``width`` cells, ending in "…" when it was longer."""
    if display_width(text) <= width:
        return text
    kept, used = [], 0
    for char in text:
        cells = char_width(char)
        if used + cells > width - 1:
            break
        kept.append(char)
        used += cells
    return "".join(kept) + _ELLIPSIS


def _render_table(
    rows: list[Any], columns: list[Any], width: int | None = None, color: bool = False
) -> str:
    """The table; ``width``: fit it in that many cells (long cells cut with "…"); ``color``:
    its header bold and its rule dim.  With no rows, the header and the rule alone."""
    if not columns:
        return ""
    rows = [_as_mapping(row) for row in rows]
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
    if width is not None:
        widths = _fit(widths, numeric, width)

    def pad(text: str, width: int, right: bool) -> str:
        text = _cut(text, width)
        fill = " " * (width - display_width(text))
        return fill + text if right else text + fill

    lines = [
        "  ".join(pad(h, w, num) for h, w, num in zip(headers, widths, numeric)).rstrip(" "),
        "  ".join("-" * w for w in widths),
    ]
    if color:
        lines = [_BOLD + lines[0] + _RESET, _DIM + lines[1] + _RESET]
    for cells in body:
        lines.append(
            "  ".join(pad(text, w, num) for (text, num), w in zip(cells, widths)).rstrip(" ")
        )
    return "".join(line + "\n" for line in lines)


def _select(row: Any, columns: list[Any] | None) -> Any:
    if not isinstance(row, Mapping):
        return row
    if columns is None:
        return dict(row)
    return {column: row.get(column) for column in columns}


# The tokens of json.dumps' output: strings (a key when a colon follows), numbers, literals,
# brackets.
_JSON_TOKEN_RE = re.compile(
    r'("(?:[^"\\]|\\.)*")(\s*:)?|(-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|NaN|-?Infinity)'
    r"|(true|false|null)|([\[\]{}])"
)
# C1 controls, which some terminals obey as escape sequences; JSON may escape them.
_C1_RE = re.compile("[\x7f-\x9f]")


def colorize_json(text: str) -> str:
    """JSON text (as json.dumps writes it) coloured as jq colours it; its C1 control
    characters escaped (``\\u009b``), so a server's text cannot drive the terminal."""

    def paint(style: str, token: str) -> str:
        return f"\x1b[{JSON_COLORS[style]}m{token}\x1b[0m"

    def replace(match: re.Match[str]) -> str:
        string, colon, number, literal, bracket = match.groups()
        if string is not None:
            return paint("key", string) + colon if colon else paint("string", string)
        if number is not None:
            return paint("number", number)
        if literal is not None:
            return paint(literal, literal)
        return paint("bracket", bracket)

    text = _C1_RE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    return _JSON_TOKEN_RE.sub(replace, text)


def _render_json(rows: list[Any], columns: list[Any] | None, color: bool = False) -> str:
    data = [_select(row, columns) for row in rows]
    text = json.dumps(data, indent=2, ensure_ascii=False, default=str)
    return (colorize_json(text) if color else text) + "\n"


def _render_ndjson(rows: list[Any], columns: list[Any] | None) -> str:
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
    ``-5`` and ``"+1.5e3"`` stay as they are, and so does a lone ``-`` (a table's
    "none"), which no spreadsheet runs.
    """
    text = cell_text(value)
    if text == "-" or not text.startswith(_FORMULA_START) or _is_number(value) or _PLAIN_NUMBER_RE.fullmatch(text):
        return text
    return "'" + text


def _render_csv(rows: list[Any], columns: list[Any]) -> str:
    if not columns:
        return ""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([csv_cell(column) for column in columns])
    for row in rows:
        row = _as_mapping(row)
        writer.writerow([csv_cell(row.get(column)) for column in columns])
    return buffer.getvalue()


def format_rows(
    rows: Any,
    columns: Iterable[Any] | None = None,
    format: str = "table",
    width: int | None = None,
    color: bool = False,
) -> str:
    """Render ``rows`` in ``format`` and return the text (ending in a newline).

    ``rows`` is an iterable of dicts (or a single dict).  A row that is not a
    dict (``["a", "b"]``) is one value: a table or CSV shows it in a column
    named "value", JSON and NDJSON write it as it is; a string or any other
    single value counts as one such row.  ``columns`` selects and orders the
    columns; by default they are the keys of all rows in order of first
    appearance.  Formats: "table", "json", "csv", "ndjson".

    ``width`` fits a table in that many terminal cells: the widest columns are
    cut, their cells ending in "…" (numbers are never cut).  ``color`` paints a
    table's header and a JSON document as a terminal shows them.

    With no rows, "table" gives the header line (with its rule) when
    ``columns`` is given, else ""; "ndjson" gives "", "json" gives "[]\\n" and
    "csv" gives just the header line when ``columns`` is given, else "".
    In json/ndjson, rows are written as they are unless ``columns`` is given;
    then each object has exactly those keys in that order (missing → null).

    Raises TypeError for ``columns`` that is not a list and ValueError for an
    unknown format.
    """
    fmt = _normalize_format(format)
    collected = _collect_rows(rows)
    explicit = _collect_columns(columns)
    if fmt == "json":
        return _render_json(collected, explicit, color)
    if fmt == "ndjson":
        return _render_ndjson(collected, explicit)
    all_columns = explicit if explicit is not None else _union_of_keys(collected)
    if fmt == "csv":
        return _render_csv(collected, all_columns)
    return _render_table(collected, all_columns, width, color)


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


def wants_color(file: Any) -> bool:
    """Whether what is written to ``file`` is coloured: the host's ``--color`` (with
    ``[ui] color`` and ``NO_COLOR`` folded in) is always or never, or auto and ``file`` is a
    terminal."""
    choice = getattr(_apimacro, "color", "auto")
    return choice == "always" or (choice == "auto" and _isatty(file))


def terminal_width(file: Any) -> int | None:
    """The width tables are fitted to: None with ``--wide`` or when ``file`` is not a terminal;
    else ``COLUMNS`` when it holds a number, else the terminal's own width."""
    if getattr(_apimacro, "wide", False) or not _isatty(file):
        return None
    columns = os.environ.get("COLUMNS", "").strip()
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    try:
        return os.get_terminal_size(file.fileno()).columns or None
    except (AttributeError, OSError, ValueError):
        return None


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
    for ``columns`` and the formats.  On a terminal, a table fits its width
    (unless ``--wide``) and a table's header and JSON are coloured (unless
    ``--color never`` or ``NO_COLOR``); an empty table with no known columns
    says ``(no rows)``.
    """
    if file is None:
        file = sys.stdout
    fmt = resolve_format(format, file)
    color = fmt in ("table", "json") and wants_color(file)
    width = terminal_width(file) if fmt == "table" else None
    text = format_rows(rows, columns, fmt, width, color)
    if not text and fmt == "table" and _isatty(file):
        text = (_DIM + "(no rows)" + _RESET if color else "(no rows)") + "\n"
    if text:
        file.write(text)
    flush = getattr(file, "flush", None)
    if flush is not None:
        flush()

