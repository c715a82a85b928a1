"""Tests for the Python the host executes itself (``_native_*.py``, ``_macro_help.py``).

Each file is executed here as the host executes it: in a namespace that already
holds what the native module defines (``request``, ``_redact``, the exception classes).
"""

import os
import tempfile
import unittest

import apimacro

PACKAGE = os.path.dirname(apimacro.__file__)


def load(name, **namespace):
    """The namespace after executing the package's file `name` in one holding `namespace`."""
    path = os.path.join(PACKAGE, name)
    with open(path, encoding="utf-8") as file:
        code = compile(file.read(), path, "exec")
    exec(code, namespace)
    return namespace


def fake_redact(value):
    """``_apimacro._redact`` for one known secret, ``s3cret``: in a str, or in the strs of a list."""
    if isinstance(value, str):
        return value.replace("s3cret", "REDACTED")
    if isinstance(value, list):
        return [fake_redact(item) for item in value]
    return value


class ExceptionsTest(unittest.TestCase):
    NAMES = ["APIError", "NetworkError", "Timeout", "HTTPError", "NotFound", "Unauthorized", "Forbidden",
             "RateLimited", "ParseError", "AuthError", "OfflineError", "GraphQLError", "MacroTimeout"]

    def setUp(self):
        self.ns = load("_native_exceptions.py", _redact=fake_redact)

    def test_classes_hierarchy_and_module(self):
        ns = self.ns
        parents = {name: ns[name].__mro__[1].__name__ for name in self.NAMES}
        self.assertEqual(parents, {
            "APIError": "Exception", "NetworkError": "APIError", "Timeout": "NetworkError",
            "HTTPError": "APIError", "NotFound": "HTTPError", "Unauthorized": "HTTPError",
            "Forbidden": "HTTPError", "RateLimited": "HTTPError", "ParseError": "APIError",
            "AuthError": "APIError", "OfflineError": "APIError", "GraphQLError": "APIError",
            "MacroTimeout": "BaseException"})
        for name in self.NAMES:
            self.assertEqual((ns[name].__module__, ns[name].__qualname__), ("apimacro", name))
        self.assertNotIn("_cls", ns)

    def test_attributes_are_redacted_and_bounded(self):
        error = self.ns["NotFound"]("no s3cret here", status=404, url="https://x/?t=s3cret", api="github",
                                    body=b"s3cret" + b"b" * 5000)
        self.assertEqual((str(error), error.message), ("no REDACTED here",) * 2)
        self.assertEqual(error.url, "https://x/?t=REDACTED")
        self.assertEqual((error.status, error.api, len(error.body)), (404, "github", 4096))
        self.assertTrue(error.body.startswith("REDACTEDbbb"))
        self.assertEqual(repr(error),
                         "NotFound('no REDACTED here', status=404, url='https://x/?t=REDACTED', api='github')")
        limited = self.ns["RateLimited"]("slow", status=429, reset_at=1700000000, retry_after=2.5)
        self.assertEqual((limited.reset_at, limited.retry_after, limited.status), (1700000000, 2.5, 429))
        graphql = self.ns["GraphQLError"]("bad", errors=("s3cret",), data={"a": 1})
        self.assertEqual((graphql.errors, graphql.data), (["REDACTED"], {"a": 1}))
        self.assertEqual(self.ns["GraphQLError"]("x").errors, [])
        self.assertFalse(issubclass(self.ns["MacroTimeout"], Exception))


class HelpersTest(unittest.TestCase):
    def setUp(self):
        self.sent = []
        self.ns = load("_native_helpers.py", request=lambda method, url, **kw: self.sent.append((method, url, kw)) or "ok")

    def test_headers_ignore_case_and_join_repeats(self):
        headers = self.ns["Headers"]([("Content-Type", "a/b"), ("Set-Cookie", "x"), ("set-cookie", "y")])
        self.assertEqual(headers["content-type"], "a/b")
        self.assertEqual(headers["SET-COOKIE"], "x, y")
        self.assertEqual(headers.get_all("Set-Cookie"), ["x", "y"])
        self.assertIn("CONTENT-TYPE", headers)
        self.assertNotIn(1, headers)
        self.assertEqual(list(headers), ["Content-Type", "Set-Cookie"])
        self.assertEqual(len(headers), 2)
        self.assertEqual(type(headers).__module__, "apimacro")

    def test_get_and_post_go_through_request(self):
        self.assertEqual(self.ns["get"]("http://x/", params={"a": 1}), "ok")
        self.ns["post"]("http://x/", json={})
        self.assertEqual(self.sent, [("GET", "http://x/", {"params": {"a": 1}}), ("POST", "http://x/", {"json": {}})])

    def test_map_threads_keeps_order_and_raises_the_first_error(self):
        map_threads = self.ns["_map_threads"]
        self.assertEqual(map_threads(lambda x: x * 2, [3, 1, 2], 2), [6, 2, 4])
        self.assertEqual(map_threads(str, [], 4), [])

        def fail_on_two(x):
            if x == 2:
                raise ValueError("two")
            return x

        with self.assertRaisesRegex(ValueError, "two"):
            map_threads(fail_on_two, [1, 2, 3], 1)

    def test_map_threads_return_exceptions_runs_every_call(self):
        map_threads = self.ns["_map_threads"]
        called = []

        def fail_on_even(x):
            called.append(x)
            if x % 2 == 0:
                raise ValueError(f"even {x}")
            return x * 10

        results = map_threads(fail_on_even, [1, 2, 3, 4, 5], 1, True)
        self.assertEqual(sorted(called), [1, 2, 3, 4, 5])
        self.assertEqual([r if isinstance(r, int) else str(r) for r in results], [10, "even 2", 30, "even 4", 50])
        self.assertIsInstance(results[1], ValueError)

        def interrupted(x):
            if x == 2:
                raise KeyboardInterrupt
            return x

        # A BaseException that is no Exception is never a result: it stops the map.
        with self.assertRaises(KeyboardInterrupt):
            map_threads(interrupted, [1, 2, 3], 1, True)


class GraphQLHelpersTest(unittest.TestCase):
    def setUp(self):
        exceptions = load("_native_exceptions.py", _redact=fake_redact)
        self.ns = load("_native_graphql.py", ParseError=exceptions["ParseError"],
                       GraphQLError=exceptions["GraphQLError"])

    def page(self, payload, path="repository.issues"):
        return self.ns["_graphql_page"](payload, path, 200, "https://api/graphql", "{}")

    def test_walks_nodes_and_edges(self):
        issues = {"pageInfo": {"hasNextPage": True, "endCursor": "c1"}, "nodes": [1, 2]}
        self.assertEqual(self.page({"data": {"repository": {"issues": issues}}}), [[1, 2], "c1"])
        edges = {"pageInfo": {"hasNextPage": False, "endCursor": None}, "edges": [{"node": 3}, "junk"]}
        self.assertEqual(self.page({"data": {"repository": {"issues": edges}}}, "data.repository.issues"), [[3, None], None])

    def test_errors_and_bad_shapes(self):
        with self.assertRaises(self.ns["GraphQLError"]) as raised:
            self.page({"errors": [{"message": "bad\x1b[31m", "type": "NOT_FOUND"}, {}], "data": None})
        self.assertEqual(str(raised.exception), "bad [31m (NOT_FOUND) (and 1 more)")
        with self.assertRaises(self.ns["ParseError"]):
            self.page([1, 2])
        with self.assertRaisesRegex(ValueError, "has no 'repository.pulls'"):
            self.page({"data": {"repository": {}}}, "repository.pulls")
        issues = {"pageInfo": {"hasNextPage": True, "endCursor": ""}, "nodes": []}
        with self.assertRaisesRegex(self.ns["ParseError"], "hasNextPage but no endCursor"):
            self.page({"data": {"repository": {"issues": issues}}})


class PluginsTest(unittest.TestCase):
    def test_generated_client_calls_the_native_half(self):
        ns = load("_native_plugins.py")

        class Native:
            def call(self, endpoint, **params):
                return (endpoint, params)

        spec = ("demo_api", "Demo.", [("items", ["q", "page"], [True, False], True, "items(q, page=None)")], None)
        ns["_install_plugins"]([Native()], [spec], {"broken": "bad manifest"})
        client = ns["client"]("demo_api")
        self.assertEqual(type(client).__name__, "DemoApiClient")
        self.assertEqual(client.items("x", limit=3), ("items", {"_cache": None, "q": "x", "limit": 3}))
        self.assertEqual(client.items("x", cache="1h"), ("items", {"_cache": "1h", "q": "x"}))
        self.assertEqual(client.endpoints, ["items"])
        self.assertEqual(list(ns["plugins"]), ["demo_api"])
        with self.assertRaisesRegex(ImportError, "did not load: bad manifest"):
            ns["client"]("broken")
        with self.assertRaises(LookupError):
            ns["client"]("nothing")


class MacroHelpTest(unittest.TestCase):
    def test_first_docstring_line_else_main_or_why_not(self):
        help_of = load("_macro_help.py")["help_of"]
        with tempfile.TemporaryDirectory() as folder:
            def write(name, text):
                path = os.path.join(folder, name)
                with open(path, "w", encoding="utf-8") as file:
                    file.write(text)
                return path

            self.assertEqual(help_of(write("a.py", '"""\n  Stars of a user.\nMore."""\n')), "Stars of a user.")
            self.assertEqual(help_of(write("b.py", 'def main():\n    """Main help."""\n')), "Main help.")
            self.assertEqual(help_of(write("c.py", "x = 1\n")), "")
            self.assertTrue(help_of(write("d.py", "def (:\n")).startswith("(does not parse: "))
            self.assertEqual(help_of(folder), "(cannot read: not a regular file)")


if __name__ == "__main__":
    unittest.main()
