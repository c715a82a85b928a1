"""Tests for apimacro._main (main() support) and the apimacro package surface."""

import contextlib
import io
import pathlib
import sys
import typing
import unittest

import _apimacro
import apimacro
from apimacro._main import call_main, describe, module_help, option_flags


def run(func, argv, prog="demo"):
    """Call call_main, capturing stdout/stderr; return (result, exit code, out, err)."""
    out, err = io.StringIO(), io.StringIO()
    code = None
    result = None
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            result = call_main(func, argv, prog)
        except SystemExit as exit_:
            code = exit_.code
    return result, code, out.getvalue(), err.getvalue()


def basic_main(user: str, limit: int = 5):
    """List the repositories of a user.

    Prints one row per repository.
    """
    return user, limit


class CallMainTests(unittest.TestCase):
    def test_positional_and_option(self):
        result = call_main(basic_main, ["octocat", "--limit", "2"], "demo")
        self.assertEqual(result, ("octocat", 2))
        self.assertIs(type(result[1]), int)

    def test_default_used(self):
        self.assertEqual(call_main(basic_main, ["octocat"], "demo"), ("octocat", 5))
        self.assertEqual(call_main(basic_main, ["--limit=7", "octocat"], "demo"), ("octocat", 7))

    def test_help(self):
        result, code, out, err = run(basic_main, ["--help"])
        out = " ".join(out.split())  # independent of the help's line wrapping
        self.assertEqual(code, 0)
        self.assertIsNone(result)
        self.assertTrue(out.startswith("usage: demo"), out)
        self.assertIn("user", out)
        self.assertIn("--limit", out)
        self.assertIn("List the repositories of a user.", out)
        self.assertIn("Prints one row per repository.", out)
        self.assertIn("(int, default: 5)", out)
        self.assertEqual(err, "")
        self.assertEqual(run(basic_main, ["-h"])[1], 0)

    def test_wrong_type_is_usage_error(self):
        result, code, out, err = run(basic_main, ["octocat", "--limit", "x"])
        self.assertEqual(code, 2)
        self.assertIn("usage: demo", err)
        self.assertIn("invalid int value: 'x'", err)
        self.assertEqual(out, "")

    def test_missing_and_extra_arguments(self):
        _, code, _, err = run(basic_main, [])
        self.assertEqual(code, 2)
        self.assertIn("user", err)
        _, code, _, err = run(basic_main, ["a", "b"])
        self.assertEqual(code, 2)
        self.assertIn("unrecognized arguments: b", err)

    def test_bool_flags(self):
        def main(verbose: bool = False, color: bool = True):
            return verbose, color

        self.assertEqual(call_main(main, [], "m"), (False, True))
        self.assertEqual(call_main(main, ["--verbose", "--no-color"], "m"), (True, False))
        self.assertEqual(run(main, ["--verbose", "yes"])[1], 2)  # a flag takes no value
        self.assertEqual(run(main, ["--color"])[1], 2)  # only --no-color exists
        out = run(main, ["--help"])[2]
        self.assertIn("--no-color", out)

    def test_optional_bool_option(self):
        def main(draft: typing.Optional[bool] = None):
            return draft

        self.assertIsNone(call_main(main, [], "m"))
        self.assertIs(call_main(main, ["--draft"], "m"), True)
        self.assertIs(call_main(main, ["--no-draft"], "m"), False)

    def test_bool_positional(self):
        def main(enabled: bool):
            return enabled

        for text, expected in [("true", True), ("YES", True), ("1", True),
                               ("False", False), ("no", False), ("0", False)]:
            self.assertIs(call_main(main, [text], "m"), expected, text)
        _, code, _, err = run(main, ["maybe"])
        self.assertEqual(code, 2)
        self.assertIn("'maybe'", err)

    def test_list_positional(self):
        def main(names: list[str]):
            return names

        self.assertEqual(call_main(main, ["a", "b", "c"], "m"), ["a", "b", "c"])
        self.assertEqual(call_main(main, [], "m"), [])

    def test_list_option_repeats_and_keeps_default(self):
        default = []

        def main(*, ids: list[int] = default, tags: typing.List[str] = ["x"]):
            return ids, tags

        self.assertEqual(call_main(main, ["--ids", "1", "--ids", "2"], "m"), ([1, 2], ["x"]))
        self.assertEqual(call_main(main, ["--tags", "a"], "m"), ([], ["a"]))
        self.assertEqual(call_main(main, [], "m"), ([], ["x"]))
        self.assertEqual(default, [])  # argparse must not append to the default
        self.assertEqual(run(main, ["--ids", "one"])[1], 2)
        self.assertIn("repeat", run(main, ["--help"])[2])

    def test_optional_annotations(self):
        def main(limit: typing.Optional[int] = None, name: str | None = None,
                 ratio: float | None = 1.5):
            return limit, name, ratio

        self.assertEqual(call_main(main, [], "m"), (None, None, 1.5))
        result = call_main(main, ["--limit", "3", "--name", "n", "--ratio", "2"], "m")
        self.assertEqual(result, (3, "n", 2.0))
        self.assertIs(type(result[0]), int)
        self.assertIs(type(result[2]), float)

    def test_keyword_only(self):
        def main(*, token: str, retries: int = 3):
            return token, retries

        self.assertEqual(call_main(main, ["--token", "abc"], "m"), ("abc", 3))
        self.assertEqual(call_main(main, ["--token", "abc", "--retries", "1"], "m"), ("abc", 1))
        _, code, _, err = run(main, [])
        self.assertEqual(code, 2)
        self.assertIn("--token", err)

    def test_underscore_names(self):
        def main(max_items: int = 10):
            return max_items

        self.assertEqual(call_main(main, ["--max-items", "4"], "m"), 4)
        self.assertEqual(call_main(main, ["--max_items", "5"], "m"), 5)
        self.assertEqual(call_main(main, ["--max_items=6"], "m"), 6)
        self.assertIn("--max-items", run(main, ["--help"])[2])

    def test_var_positional_and_kwargs(self):
        def main(first: str, *rest: int, **extra):
            return first, rest, extra

        self.assertEqual(call_main(main, ["a", "1", "2"], "m"), ("a", (1, 2), {}))
        self.assertEqual(call_main(main, ["a"], "m"), ("a", (), {}))

    def test_unannotated_parameters_use_default_type(self):
        def main(name, n=3, ratio=0.5, flag=False, other=None):
            return name, n, ratio, flag, other

        result = call_main(main, ["x", "--n", "4", "--ratio", "2", "--flag", "--other", "7"], "m")
        self.assertEqual(result, ("x", 4, 2.0, True, "7"))
        self.assertIs(type(result[1]), int)
        self.assertIs(type(result[2]), float)

    def test_path(self):
        def main(path: pathlib.Path, out: pathlib.Path = pathlib.Path("out.txt")):
            return path, out

        path, out = call_main(main, ["data/in.csv"], "m")
        self.assertEqual(path, pathlib.Path("data/in.csv"))
        self.assertIsInstance(path, pathlib.PurePath)
        self.assertEqual(out, pathlib.Path("out.txt"))

    def test_future_annotations(self):
        source = (
            "from __future__ import annotations\n"
            "import pathlib\n"
            "from typing import Optional\n"
            "def main(user: str, limit: int = 5, out: Optional[pathlib.Path] = None,\n"
            "         tags: list[str] = [], verbose: bool = False):\n"
            "    '''Future-style main.'''\n"
            "    return user, limit, out, tags, verbose\n"
        )
        namespace = {}
        exec(source, namespace)
        main = namespace["main"]
        self.assertIsInstance(main.__annotations__["limit"], str)
        result = call_main(main, ["u", "--limit", "2", "--out", "o.txt", "--tags", "t", "--verbose"], "m")
        self.assertEqual(result, ("u", 2, pathlib.Path("o.txt"), ["t"], True))
        self.assertEqual(call_main(main, ["u"], "m"), ("u", 5, None, [], False))

    def test_unresolvable_annotation_is_refused(self):
        namespace = {}
        exec(
            "from __future__ import annotations\n"
            "def main(count: int = 1, thing: NoSuchType = None):\n"
            "    return count, thing\n",
            namespace,
        )
        _, code, out, err = run(namespace["main"], ["--help"], "apimacro run m")
        self.assertEqual((code, out), (2, ""))
        self.assertIn("apimacro run m: main() parameter 'thing': 'NoSuchType' (a name that does not resolve)", err)

    def test_literal_choices(self):
        def main(mode: typing.Literal["fast", "slow"] = "fast", level: typing.Literal[1, 2, 3] = 1):
            return mode, level

        self.assertEqual(call_main(main, ["--mode", "slow", "--level", "3"], "m"), ("slow", 3))
        self.assertEqual(call_main(main, [], "m"), ("fast", 1))
        _, code, _, err = run(main, ["--mode", "medium"])
        self.assertEqual(code, 2)
        self.assertIn("invalid choice: 'medium' (choose from fast, slow)", err)
        _, _, out, _ = run(main, ["--help"])
        self.assertIn("(one of fast, slow, default: 'fast')", out)

    def test_dates_and_datetimes(self):
        import datetime

        def main(since: datetime.date, until: datetime.datetime | None = None,
                 days: list[datetime.date] = []):
            return since, until, days

        since, until, days = call_main(
            main, ["2024-05-01", "--until", "2024-05-02T10:30:00+00:00", "--days", "2024-01-02"], "m")
        self.assertEqual(since, datetime.date(2024, 5, 1))
        self.assertEqual(until, datetime.datetime(2024, 5, 2, 10, 30, tzinfo=datetime.timezone.utc))
        self.assertEqual(days, [datetime.date(2024, 1, 2)])
        _, code, _, err = run(main, ["May 1st"])
        self.assertEqual(code, 2)
        self.assertIn("invalid date value: 'May 1st' (expected YYYY-MM-DD)", err)

        def later(when: datetime.date = datetime.date(2024, 1, 31)):
            return when

        _, _, out, _ = run(later, ["--help"])
        self.assertIn("(date, default: 2024-01-31)", out)

    def test_enum_by_name_or_value(self):
        import enum

        class Color(enum.Enum):
            RED = "r"
            GREEN = "g"

        def main(color: Color = Color.RED):
            return color

        self.assertIs(call_main(main, ["--color", "GREEN"], "m"), Color.GREEN)
        self.assertIs(call_main(main, ["--color", "green"], "m"), Color.GREEN)
        self.assertIs(call_main(main, ["--color", "g"], "m"), Color.GREEN)
        self.assertIs(call_main(main, [], "m"), Color.RED)
        _, code, _, err = run(main, ["--color", "blue"])
        self.assertEqual(code, 2)
        self.assertIn("choose from RED, GREEN", err)
        _, _, out, _ = run(main, ["--help"])
        self.assertIn("(one of RED, GREEN, default: RED)", out)

    def test_unsupported_annotations_are_refused_at_help_time(self):
        def main(data: dict = {}):
            return data

        for annotation, shown in ((dict, "dict"), (tuple[int, str], "tuple[int, str]"),
                                  (int | str, "int | str"), (typing.Literal[1.5], "Literal[1.5]")):
            main.__annotations__["data"] = annotation
            for argv in (["--help"], ["--data", "x"], []):
                _, code, out, err = run(main, argv, "apimacro run m")
                self.assertEqual((code, out), (2, ""), (annotation, argv))
                self.assertTrue(err.startswith(f"apimacro run m: main() parameter 'data': {shown}"), err)
                self.assertIn("use str, int, float, bool, pathlib.Path, datetime.date", err)

    def test_any_is_a_str(self):
        def main(value: typing.Any = None):
            return value

        self.assertEqual(call_main(main, ["--value", "7"], "m"), "7")

    def test_return_value_and_async(self):
        async def main(n: int = 1):
            return n * 2

        self.assertEqual(call_main(main, ["--n", "21"], "m"), 42)

    def test_positional_only_with_default(self):
        def main(a: int, b: int = 2, /):
            return a, b

        self.assertEqual(call_main(main, ["1"], "m"), (1, 2))
        self.assertEqual(call_main(main, ["1", "3"], "m"), (1, 3))


class DescribeTests(unittest.TestCase):
    def test_describe(self):
        def documented():
            """
            First line.

            More text.
            """

        def undocumented():
            pass

        self.assertEqual(describe(documented), "First line.")
        self.assertEqual(describe(basic_main), "List the repositories of a user.")
        self.assertEqual(describe(undocumented), "")

    def test_module_help(self):
        self.assertEqual(module_help({"__doc__": "\nModule line.\nmore", "main": basic_main}),
                         "Module line.")
        self.assertEqual(module_help({"__doc__": None, "main": basic_main}),
                         "List the repositories of a user.")
        self.assertEqual(module_help({"__doc__": "   "}), "")
        self.assertEqual(module_help({}), "")


class PackageSurfaceTests(unittest.TestCase):
    EXCEPTIONS = ["APIError", "NetworkError", "Timeout", "HTTPError", "NotFound",
                  "Unauthorized", "Forbidden", "RateLimited", "ParseError", "AuthError",
                  "OfflineError", "MacroTimeout"]

    def test_args_follow_sys_argv(self):
        saved = getattr(sys, "argv", None)
        try:
            sys.argv = ["macro.py", "one", "two"]
            self.assertEqual(apimacro.args, ["one", "two"])
            sys.argv = ["other.py", "--x"]
            self.assertEqual(apimacro.args, ["--x"])
            from apimacro import args
            self.assertEqual(args, ["--x"])
            apimacro.args.append("mutated")
            self.assertEqual(sys.argv, ["other.py", "--x"])
        finally:
            if saved is None:
                del sys.argv
            else:
                sys.argv = saved

    def test_exceptions_reexported(self):
        for name in self.EXCEPTIONS:
            self.assertIs(getattr(apimacro, name), getattr(_apimacro, name), name)
        from apimacro import NotFound, RateLimited
        self.assertIs(NotFound, _apimacro.NotFound)
        self.assertTrue(issubclass(NotFound, apimacro.HTTPError))
        self.assertTrue(issubclass(apimacro.HTTPError, apimacro.APIError))
        self.assertTrue(issubclass(apimacro.Timeout, apimacro.NetworkError))
        self.assertTrue(issubclass(RateLimited, apimacro.HTTPError))
        self.assertFalse(issubclass(apimacro.MacroTimeout, Exception))
        self.assertTrue(issubclass(apimacro.MacroTimeout, BaseException))
        self.assertIsNone(apimacro.NotFound("missing").status)

    def test_version_and_sleep(self):
        self.assertEqual(apimacro.__version__, _apimacro.__version__)
        self.assertIs(apimacro.sleep, _apimacro.sleep)
        apimacro.sleep(0)

    def test_default_format_is_live(self):
        saved = _apimacro.default_format
        try:
            _apimacro.default_format = "csv"
            self.assertEqual(apimacro.default_format, "csv")
            _apimacro.default_format = None
            self.assertIsNone(apimacro.default_format)
        finally:
            _apimacro.default_format = saved

    def test_names_added_later_are_forwarded(self):
        marker = object()
        _apimacro.added_by_later_issue = marker
        _apimacro._private_thing = marker
        try:
            self.assertIs(apimacro.added_by_later_issue, marker)
            from apimacro import added_by_later_issue
            self.assertIs(added_by_later_issue, marker)
            self.assertIn("added_by_later_issue", dir(apimacro))
            with self.assertRaises(AttributeError):
                apimacro._private_thing
        finally:
            del _apimacro.added_by_later_issue
            del _apimacro._private_thing
        with self.assertRaises(AttributeError):
            apimacro.added_by_later_issue
        with self.assertRaises(AttributeError):
            apimacro.no_such_name_anywhere

    def test_star_import(self):
        namespace = {}
        exec("from apimacro import *", namespace)
        for name in ["output", "format_rows", "args", "NotFound", "sleep"]:
            self.assertIn(name, namespace)
        self.assertNotIn("_apimacro", namespace)
        self.assertIs(namespace["output"], apimacro.output)



class OptionFlagsTests(unittest.TestCase):
    """option_flags: which --options a macro's main() takes, read without running it."""

    def test_options_of_main(self):
        source = (
            "import sys\n"
            "raise SystemExit('never run')\n"
            "async def main(user, /, limit=5, *items, max_items: int = 3, cache: bool = True, **extra):\n"
            "    pass\n"
        )
        flags = option_flags(source)
        for flag in ["--limit", "--max-items", "--max_items", "--cache", "--no-cache", "--no_cache"]:
            self.assertIn(flag, flags)
        for flag in ["--user", "--items", "--extra", "--format"]:
            self.assertNotIn(flag, flags)

    def test_positional_only_defaults_stay_positionals(self):
        self.assertEqual(option_flags("def main(a, b=1, /, c=2):\n    pass\n"),
                         ["--c", "--no-c", "--no_c"])

    def test_no_main_or_no_parse(self):
        self.assertEqual(option_flags("print('x')\n"), [])
        self.assertEqual(option_flags("def main(:\n"), [])
        self.assertEqual(option_flags("class A:\n    def main(self, x=1): pass\n"), [])

    def test_last_top_level_main_wins(self):
        self.assertEqual(option_flags("def main(a=1): pass\ndef main(b=1): pass\n"),
                         ["--b", "--no-b", "--no_b"])


if __name__ == "__main__":
    unittest.main()
