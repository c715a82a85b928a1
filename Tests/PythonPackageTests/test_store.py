"""Tests for apimacro._store: incremental's bookmark rules, what state can hold, rows checked."""

import datetime
import re
import unittest
from unittest import mock

from apimacro import _store


class IncrementalTests(unittest.TestCase):
    def setUp(self):
        # A plain dict stands in for apimacro.state (no macro, no lock, nothing committed).
        self.state = {}
        patcher = mock.patch.object(_store, "state", self.state)
        patcher.start()
        self.addCleanup(patcher.stop)

    def ids(self, items, **options):
        return [item["id"] for item in _store.incremental(items, **options)]

    def test_first_run_yields_everything_then_nothing(self):
        items = [{"id": 1, "updated_at": "2024-01-01"}, {"id": 2, "updated_at": "2024-01-02"}]
        self.assertEqual(self.ids(items), [1, 2])
        self.assertEqual(self.state["issues"], {"cursor": "2024-01-02", "seen": [2]})
        self.assertEqual(self.ids(items), [])

    def test_equal_cursor_told_apart_by_primary_key(self):
        self.state["issues"] = {"cursor": 5, "seen": [1]}
        items = [{"id": 1, "updated_at": 5}, {"id": 2, "updated_at": 5}, {"id": 3, "updated_at": 4}]
        self.assertEqual(self.ids(items), [2])
        self.assertEqual(self.state["issues"], {"cursor": 5, "seen": [1, 2]})

    def test_initial_and_numeric_lag(self):
        items = [{"id": n, "updated_at": n} for n in range(10)]
        self.assertEqual(self.ids(items, initial=7), [7, 8, 9])
        self.assertEqual(self.ids(items, lag=2), [7, 8, 9])

    def test_iso_lag_keeps_the_z(self):
        self.assertEqual(_store._minus_lag("2024-01-02T00:00:00Z", 3600), "2024-01-01T23:00:00Z")
        self.assertEqual(
            _store._minus_lag("2024-01-02T00:00:00+02:00", datetime.timedelta(days=1)), "2024-01-01T00:00:00+02:00"
        )

    def test_dotted_cursor_and_primary_key(self):
        items = [{"starred_at": "b", "user": {"id": 7}}, {"starred_at": "a", "user": {"id": 6}}]
        got = list(_store.incremental(items, cursor="starred_at", key="stars", primary_key="user.id"))
        self.assertEqual(len(got), 2)
        self.assertEqual(self.state["stars"], {"cursor": "b", "seen": [7]})

    def test_partly_consumed_moves_only_over_what_was_yielded(self):
        items = [{"id": n, "updated_at": n} for n in range(5)]
        iterator = _store.incremental(items)
        next(iterator)
        next(iterator)
        self.assertEqual(self.state["issues"]["cursor"], 1)

    def test_missing_cursor_names_the_field(self):
        with self.assertRaisesRegex(KeyError, "updated_at"):
            list(_store.incremental([{"id": 1}]))


class ValueTests(unittest.TestCase):
    def test_json_values_pass(self):
        _store._check_value({"a": [1, 2.5, None, True, "x", (1, 2)]}, "k")

    def test_unstorable_values_name_the_key(self):
        for value, words in [
            ({1, 2}, "a set is not a JSON value"),
            ({"a": object()}, re.escape("apimacro.state['k']['a']: an object is not")),
            ({1: "x"}, "JSON keys are str"),
            (float("nan"), "is not a JSON number"),
        ]:
            with self.subTest(value=value), self.assertRaisesRegex(TypeError, words):
                _store._check_value(value, "apimacro.state['k']")

    def test_rows_that_are_not_dicts(self):
        with self.assertRaisesRegex(TypeError, "row 2 is a list, not a dict"):
            _store.write_rows([{"a": 1}, [1]], to="x.csv", table=None, key=None, mode="append")
        with self.assertRaisesRegex(TypeError, "not str"):
            _store.write_rows("abc", to="x.csv", table=None, key=None, mode="append")


if __name__ == "__main__":
    unittest.main()
