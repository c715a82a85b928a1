"""Tests for apimacro.output / apimacro.format_rows."""

import contextlib
import csv
import io
import json
import os
import re
import tempfile
import unicodedata
import unittest

import _apimacro
import apimacro
from apimacro._output import display_width

# One CJK row, a combining accent, an emoji, None, bools, nested values,
# a newline and a tab.
ROWS = [
    {"name": "東京", "count": 14, "ok": True, "meta": {"a": [1, 2]}, "note": None},
    {"name": "e\u0301cole", "count": 2.5, "ok": False, "meta": None, "note": "line1\nline2"},
    {"name": "party 🎉", "count": -3, "ok": None, "meta": [], "note": "tab\there"},
]
COLUMNS = ["name", "count", "ok", "meta", "note"]

# Cell texts as the table must show them (control characters escaped).
TABLE_CELLS = [
    ["東京", "14", "true", '{"a":[1,2]}', ""],
    ["e\u0301cole", "2.5", "false", "", "line1\\nline2"],
    ["party 🎉", "-3", "", "[]", "tab\\there"],
]
NUMERIC_COLUMNS = {"count"}

# The same rows as csv.DictReader must read them back.
CSV_ROWS = [
    {"name": "東京", "count": "14", "ok": "true", "meta": '{"a":[1,2]}', "note": ""},
    {"name": "e\u0301cole", "count": "2.5", "ok": "false", "meta": "", "note": "line1\nline2"},
    {"name": "party 🎉", "count": "-3", "ok": "", "meta": "[]", "note": "tab\there"},
]


def spec_width(char):
    """The display-width rule of the spec, written independently for the tests."""
    if unicodedata.combining(char) or char in "\u200b\u200c\u200d\ufeff":
        return 0
    if "\ufe00" <= char <= "\ufe0f":
        return 0
    return 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1


def display_cells(line):
    """Split a line into terminal cells: one string per display column.

    A wide character fills its cell and leaves an empty string in the next;
    zero-width characters join the preceding cell.
    """
    cells = []
    for char in line:
        width = spec_width(char)
        if width == 0:
            if cells:
                cells[-1] += char
            else:
                cells.append(char)
        else:
            cells.append(char)
            if width == 2:
                cells.append("")
    return cells


def column_spans(dash_line):
    """(start, end) display columns of each run of dashes."""
    spans = []
    start = None
    for index, char in enumerate(dash_line + " "):
        if char == "-" and start is None:
            start = index
        elif char != "-" and start is not None:
            spans.append((start, index))
            start = None
    return spans


class TTYStringIO(io.StringIO):
    """A StringIO that claims to be a terminal."""

    def isatty(self):
        return True


class FlushCountingStringIO(io.StringIO):
    """A StringIO that counts flush() calls."""

    flushes = 0

    def flush(self):
        self.flushes += 1
        super().flush()


class OutputTestCase(unittest.TestCase):
    """The host's settings as a test sets them: no --format, colour never, --wide (a test of
    colour or width sets its own), restored afterwards."""

    def setUp(self):
        self._saved = (_apimacro.default_format, _apimacro.color, _apimacro.wide)
        _apimacro.default_format = None
        _apimacro.color = "never"
        _apimacro.wide = True

    def tearDown(self):
        _apimacro.default_format, _apimacro.color, _apimacro.wide = self._saved


class DisplayWidthTests(unittest.TestCase):
    def test_widths(self):
        self.assertEqual(display_width("abc"), 3)
        self.assertEqual(display_width("東京"), 4)
        self.assertEqual(display_width("ｘ"), 2)  # fullwidth
        self.assertEqual(display_width("e\u0301"), 1)  # combining accent
        self.assertEqual(display_width("é"), 1)  # precomposed
        self.assertEqual(display_width("🎉"), 2)
        self.assertEqual(display_width("a\u200bb\ufeff"), 2)
        self.assertEqual(display_width("\u2764\ufe0f"), 1)  # variation selector is 0
        self.assertEqual(display_width(""), 0)


class TableTests(OutputTestCase):
    def test_exact_ascii_table(self):
        text = apimacro.format_rows(
            [{"name": "a", "n": 1}, {"name": "bbb", "n": 22}], format="table"
        )
        self.assertEqual(text, "name   n\n----  --\na      1\nbbb   22\n")

    def test_exact_cjk_table(self):
        text = apimacro.format_rows(
            [{"city": "東京", "pop": 14}, {"city": "Paris", "pop": 2}], format="table"
        )
        self.assertEqual(text, "city   pop\n-----  ---\n東京    14\nParis    2\n")

    def test_alignment_by_display_width(self):
        text = apimacro.format_rows(ROWS, format="table")
        self.assertTrue(text.endswith("\n"))
        lines = text[:-1].split("\n")
        self.assertEqual(len(lines), 2 + len(ROWS), "a cell broke a line")
        for line in lines:
            self.assertFalse(line.endswith(" "), f"trailing space in {line!r}")
        self.assertEqual(set(lines[1]), {"-", " "})
        spans = column_spans(lines[1])
        self.assertEqual(len(spans), len(COLUMNS))
        # Two spaces between columns.
        for (_, end), (next_start, _) in zip(spans, spans[1:]):
            self.assertEqual(next_start - end, 2)
        total = spans[-1][1]
        expected_lines = [COLUMNS] + TABLE_CELLS
        for line, expected in zip([lines[0]] + lines[2:], expected_lines):
            cells = display_cells(line)
            self.assertLessEqual(len(cells), total)
            cells += [" "] * (total - len(cells))
            # Separators are blank on every line: the columns line up.
            for (_, end), (next_start, _) in zip(spans, spans[1:]):
                self.assertEqual(cells[end:next_start], [" ", " "], line)
            for column, (start, end), want in zip(COLUMNS, spans, expected):
                got = "".join(cells[start:end])
                self.assertEqual(got.strip(" "), want, line)
                if column in NUMERIC_COLUMNS:
                    self.assertTrue(got.endswith(want), f"{want!r} not right-aligned")
                else:
                    self.assertTrue(got.startswith(want), f"{want!r} not left-aligned")

    def test_control_characters_escaped(self):
        text = apimacro.format_rows([{"a": "x\x1by\r"}], format="table")
        self.assertEqual(text, "a\n--------\nx\\x1by\\r\n")

    def test_columns_order_and_missing_keys(self):
        rows = [{"b": 1}, {"a": "x", "b": 2}, {"c": "z"}]
        lines = apimacro.format_rows(rows, format="table").splitlines()
        self.assertEqual(lines[0].split(), ["b", "a", "c"])
        self.assertEqual(lines[2].split(), ["1"])
        self.assertEqual(lines[4].split(), ["z"])
        lines = apimacro.format_rows(rows, columns=["c", "b"], format="table").splitlines()
        self.assertEqual(lines[0].split(), ["c", "b"])
        self.assertEqual(len(lines), 5)
        self.assertNotIn("a", lines[0])

    def test_empty_table_prints_its_header(self):
        # Issue 27: an empty result shows its columns (or says so), not nothing.
        self.assertEqual(apimacro.format_rows([], format="table"), "")
        self.assertEqual(apimacro.format_rows([], columns=["a", "bb"], format="table"), "a  bb\n-  --\n")
        out = TTYStringIO()
        apimacro.output([], columns=["login", "id"], file=out)
        self.assertEqual(out.getvalue(), "login  id\n-----  --\n")
        out = TTYStringIO()
        apimacro.output([], file=out)
        self.assertEqual(out.getvalue(), "(no rows)\n")
        # Piped, an empty table stays empty (and JSON is []).
        out = io.StringIO()
        apimacro.output([], format="table", file=out)
        self.assertEqual(out.getvalue(), "")


class OtherFormatTests(OutputTestCase):
    def test_json(self):
        text = apimacro.format_rows(ROWS, format="json")
        self.assertEqual(json.loads(text), ROWS)
        self.assertIn("東京", text)  # ensure_ascii=False
        self.assertTrue(text.startswith('[\n  {\n    "name"'))  # indent=2
        self.assertTrue(text.endswith("]\n"))

    def test_json_with_columns_fills_nulls_in_order(self):
        rows = [{"b": 1, "a": 2}, {"a": 3}]
        data = json.loads(apimacro.format_rows(rows, columns=["a", "b", "z"], format="json"))
        self.assertEqual(data, [{"a": 2, "b": 1, "z": None}, {"a": 3, "b": None, "z": None}])
        self.assertEqual(list(data[0]), ["a", "b", "z"])
        # Without columns, rows are written as they are.
        data = json.loads(apimacro.format_rows(rows, format="json"))
        self.assertEqual(data, rows)
        self.assertEqual(list(data[0]), ["b", "a"])

    def test_json_default_str(self):
        class Thing:
            def __str__(self):
                return "thing!"

        data = json.loads(apimacro.format_rows([{"t": Thing()}], format="json"))
        self.assertEqual(data, [{"t": "thing!"}])

    def test_ndjson(self):
        text = apimacro.format_rows(ROWS, format="ndjson")
        self.assertTrue(text.endswith("\n"))
        lines = text[:-1].split("\n")
        self.assertEqual(len(lines), len(ROWS))
        self.assertEqual([json.loads(line) for line in lines], ROWS)
        self.assertIn("東京", text)
        self.assertNotIn(": ", lines[0])  # compact separators
        data = json.loads(apimacro.format_rows([{"b": 1}], columns=["a", "b"], format="ndjson"))
        self.assertEqual(data, {"a": None, "b": 1})

    def test_csv_round_trip(self):
        text = apimacro.format_rows(ROWS, format="csv")
        reader = csv.DictReader(io.StringIO(text, newline=""))
        self.assertEqual(reader.fieldnames, COLUMNS)
        self.assertEqual(list(reader), CSV_ROWS)
        self.assertTrue(text.startswith("name,count,ok,meta,note\n"))
        self.assertNotIn("\r", text)

    def test_csv_formula_injection_guard(self):
        # Issue 18, item 12: cells a spreadsheet would run as formulas get a leading ' (OWASP).
        rows = [
            {"cell": "=HYPERLINK(\"http://evil\")"}, {"cell": "+cmd|' /C calc'!A0"}, {"cell": "-2+3"},
            {"cell": "@SUM(1)"}, {"cell": "\tx"}, {"cell": -5}, {"cell": "-5"},
            {"cell": "+1.5e3"}, {"cell": -2.5}, {"cell": "a=b"}, {"cell": "plain"},
        ]
        text = apimacro.format_rows(rows, format="csv")
        cells = [row["cell"] for row in csv.DictReader(io.StringIO(text, newline=""))]
        self.assertEqual(cells, [
            "'=HYPERLINK(\"http://evil\")", "'+cmd|' /C calc'!A0", "'-2+3", "'@SUM(1)", "'\tx",
            "-5", "-5", "+1.5e3", "-2.5", "a=b", "plain",
        ])
        header = apimacro.format_rows([{"=bad": 1}], format="csv").split("\n")[0]
        self.assertEqual(header, "'=bad")
        self.assertEqual(apimacro.format_rows([{"c": "\rx"}], format="csv"), "c\n'\rx\n")
        # Issue 36: a lone "-" (a table's "none") cannot start a formula and stays as it is.
        self.assertEqual(apimacro.format_rows([{"c": "-"}, {"c": "--"}], format="csv"), "c\n-\n'--\n")

    def test_csv_columns_and_empty(self):
        text = apimacro.format_rows([{"a": 1, "b": 2}, {"b": 3}], columns=["b", "a"], format="csv")
        self.assertEqual(text, "b,a\n2,1\n3,\n")
        self.assertEqual(apimacro.format_rows([], columns=["x", "y"], format="csv"), "x,y\n")
        self.assertEqual(apimacro.format_rows([], format="csv"), "")

    def test_empty_json_and_ndjson(self):
        self.assertEqual(apimacro.format_rows([], format="json"), "[]\n")
        self.assertEqual(apimacro.format_rows([], format="ndjson"), "")


class InputTests(OutputTestCase):
    def test_generator_input(self):
        expected = apimacro.format_rows(ROWS, format="table")
        self.assertEqual(apimacro.format_rows((row for row in ROWS), format="table"), expected)
        out = io.StringIO()
        apimacro.output((row for row in ROWS), format="json", file=out)
        self.assertEqual(json.loads(out.getvalue()), ROWS)

    def test_single_dict_is_one_row(self):
        self.assertEqual(json.loads(apimacro.format_rows({"a": 1}, format="json")), [{"a": 1}])
        self.assertEqual(apimacro.format_rows({"a": 1}, format="table"), "a\n-\n1\n")

    def test_rows_that_are_not_dicts_are_one_column(self):
        # Issue 27: output(["a", "b"]) is a one-column table, not a TypeError.
        self.assertEqual(apimacro.format_rows(["a", "bb"], format="table"), "value\n-----\na\nbb\n")
        self.assertEqual(apimacro.format_rows([3, 14], format="table"), "value\n-----\n    3\n   14\n")
        self.assertEqual(apimacro.format_rows(["a", "b"], format="csv"), "value\na\nb\n")
        self.assertEqual(json.loads(apimacro.format_rows(["a", 1, None], format="json")), ["a", 1, None])
        self.assertEqual(apimacro.format_rows([1, "x"], format="ndjson"), '1\n"x"\n')
        # A list row is one value too; a string or a number alone is one row.
        self.assertEqual(apimacro.format_rows([["a", 1]], format="table"), 'value\n-------\n["a",1]\n')
        self.assertEqual(apimacro.format_rows("hello", format="table"), "value\n-----\nhello\n")
        self.assertEqual(apimacro.format_rows(5, format="json"), "[\n  5\n]\n")
        # Mixed: the dicts' columns and "value" side by side.
        self.assertEqual(
            apimacro.format_rows([{"a": 1}, "x"], format="table"), "a  value\n-  -----\n1\n   x\n"
        )
        with self.assertRaises(TypeError):
            apimacro.format_rows([{"a": 1}], columns="a")

    def test_unknown_format_raises_value_error(self):
        out = io.StringIO()
        with self.assertRaises(ValueError) as caught:
            apimacro.output(ROWS, format="xml", file=out)
        for name in ("table", "json", "csv", "ndjson"):
            self.assertIn(name, str(caught.exception))
        self.assertEqual(out.getvalue(), "")
        _apimacro.default_format = "yaml"
        with self.assertRaises(ValueError):
            apimacro.output(ROWS, file=out)


class TerminalTests(OutputTestCase):
    """Issue 27: tables fit the terminal, and tables and JSON are coloured on it."""

    WIDE = [
        {"name": "octocat", "description": "A very long description that goes on and on", "stars": 123456},
        {"name": "x", "description": "short", "stars": 7},
    ]

    def setUp(self):
        super().setUp()
        _apimacro.wide = False
        self._columns = os.environ.get("COLUMNS")

    def tearDown(self):
        if self._columns is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = self._columns
        super().tearDown()

    def test_a_table_fits_the_width_cutting_long_cells(self):
        os.environ["COLUMNS"] = "40"
        out = TTYStringIO()
        apimacro.output(self.WIDE, file=out)
        lines = out.getvalue().splitlines()
        self.assertTrue(all(display_width(line) <= 40 for line in lines), lines)
        self.assertEqual(max(display_width(line) for line in lines), 40)
        self.assertIn("A very long descriptio…", lines[2])
        self.assertTrue(lines[2].endswith("123456"), "numbers are never cut")
        self.assertTrue(lines[3].rstrip().endswith("7"))

    def test_wide_and_a_pipe_keep_long_cells(self):
        os.environ["COLUMNS"] = "40"
        whole = apimacro.format_rows(self.WIDE, format="table")
        _apimacro.wide = True
        out = TTYStringIO()
        apimacro.output(self.WIDE, file=out)
        self.assertEqual(out.getvalue(), whole)
        _apimacro.wide = False
        out = io.StringIO()
        apimacro.output(self.WIDE, format="table", file=out)
        self.assertEqual(out.getvalue(), whole)

    def test_cut_by_display_width(self):
        text = apimacro.format_rows([{"a": "東京東京東京東京", "b": "x"}], format="table", width=12)
        lines = text.splitlines()
        self.assertTrue(all(display_width(line) <= 12 for line in lines), lines)
        self.assertIn("東京…", lines[2])

    def test_colour_on_a_terminal_never_in_a_pipe(self):
        _apimacro.color = "auto"
        out = TTYStringIO()
        apimacro.output([{"a": 1}], format="table", file=out)
        self.assertEqual(out.getvalue(), "\x1b[1ma\x1b[0m\n\x1b[2m-\x1b[0m\n1\n")
        out = TTYStringIO()
        apimacro.output([{"k": "v", "n": None, "t": True, "x": 1.5}], format="json", file=out)
        text = out.getvalue()
        self.assertIn('\x1b[34;1m"k"\x1b[0m: \x1b[0;32m"v"\x1b[0m', text)
        self.assertIn("\x1b[0;90mnull\x1b[0m", text)
        self.assertIn("\x1b[0;39mtrue\x1b[0m", text)
        self.assertIn("\x1b[0;39m1.5\x1b[0m", text)
        self.assertEqual(json.loads(re.sub("\x1b\\[[0-9;]*m", "", text)), [{"k": "v", "n": None, "t": True, "x": 1.5}])
        for fmt in ("csv", "ndjson"):
            out = TTYStringIO()
            apimacro.output([{"a": 1}], format=fmt, file=out)
            self.assertNotIn("\x1b", out.getvalue())
        out = io.StringIO()
        apimacro.output([{"a": 1}], format="table", file=out)
        self.assertNotIn("\x1b", out.getvalue())

    def test_always_and_never(self):
        _apimacro.color = "always"
        out = io.StringIO()
        apimacro.output([{"a": 1}], format="table", file=out)
        self.assertIn("\x1b[1m", out.getvalue())
        _apimacro.color = "never"
        out = TTYStringIO()
        apimacro.output([{"a": 1}], format="json", file=out)
        self.assertNotIn("\x1b", out.getvalue())

    def test_coloured_json_escapes_c1_controls(self):
        _apimacro.color = "always"
        out = io.StringIO()
        apimacro.output([{"a": "x\x9b31my"}], format="json", file=out)
        self.assertNotIn("\x9b", out.getvalue())
        self.assertIn("\\u009b", out.getvalue())


class FormatPrecedenceTests(OutputTestCase):
    def test_not_a_tty_gives_json(self):
        out = io.StringIO()
        apimacro.output(ROWS, file=out)
        self.assertEqual(json.loads(out.getvalue()), ROWS)

    def test_tty_gives_table(self):
        out = TTYStringIO()
        apimacro.output(ROWS, file=out)
        self.assertEqual(out.getvalue(), apimacro.format_rows(ROWS, format="table"))

    def test_default_format_beats_tty_detection(self):
        _apimacro.default_format = "csv"
        for out in (io.StringIO(), TTYStringIO()):
            apimacro.output(ROWS, file=out)
            self.assertEqual(out.getvalue(), apimacro.format_rows(ROWS, format="csv"))

    def test_default_format_read_at_call_time(self):
        out = io.StringIO()
        _apimacro.default_format = "ndjson"
        apimacro.output({"a": 1}, file=out)
        _apimacro.default_format = "csv"
        apimacro.output({"a": 1}, file=out)
        self.assertEqual(out.getvalue(), '{"a":1}\na\n1\n')

    def test_argument_beats_default_format(self):
        _apimacro.default_format = "csv"
        out = TTYStringIO()
        apimacro.output(ROWS, format="ndjson", file=out)
        self.assertEqual(out.getvalue(), apimacro.format_rows(ROWS, format="ndjson"))

    def test_writes_to_current_stdout_and_flushes(self):
        out = FlushCountingStringIO()
        with contextlib.redirect_stdout(out):
            apimacro.output(ROWS)
        self.assertEqual(json.loads(out.getvalue()), ROWS)
        self.assertGreaterEqual(out.flushes, 1)


class ClosedStdoutTests(unittest.TestCase):
    """Telling stdout's closed pipe (``| head``) from the macro's own broken pipes."""

    def test_a_pipe_whose_reader_closed_is_seen(self):
        from apimacro._stdout import _reader_gone

        reader, writer = os.pipe()
        try:
            self.assertFalse(_reader_gone(writer))
            os.close(reader)
            reader = None
            self.assertTrue(_reader_gone(writer))
        finally:
            os.close(writer)
            if reader is not None:
                os.close(reader)

    def test_a_file_is_never_gone(self):
        from apimacro._stdout import _reader_gone

        with tempfile.TemporaryFile() as file:
            self.assertFalse(_reader_gone(file.fileno()))

    def test_other_errors_and_a_live_stdout_are_not_a_closed_stdout(self):
        from apimacro import _stdout

        self.assertFalse(_stdout.closed_stdout(ValueError("x")))
        self.assertFalse(_stdout.closed_stdout(OSError(5, "Input/output error")))
        # The test process's stdout has its reader: a BrokenPipeError is someone else's.
        self.assertFalse(_stdout.closed_stdout(BrokenPipeError(32, "Broken pipe")))
        self.assertFalse(_stdout._stdout_closed)


if __name__ == "__main__":
    unittest.main()
