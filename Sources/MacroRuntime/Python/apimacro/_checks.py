"""Checks of what came back (``apimacro.check`` and its helpers).

A check records its name, whether it passed and what was seen; it does not stop the macro
(unless ``fatal=True``). When the macro ends, the host (``MacroRunner``) takes the failed
checks with ``take_failed()``, prints them on stderr (redacted, control characters escaped)
and makes the run exit 1.
"""

from __future__ import annotations

from typing import Any

_SEEN_LIMIT = 300

_records: list[tuple[str, bool, str | None]] = []

# The checks of a call that runs beside others on a thread of its own (an `apimacro mcp` tool
# call, apimacro._serving): thread id -> that call's list, so that two calls at once never see
# each other's checks. Anything else (a run, a batch job) records into `_records`.
_calls: dict[int, list[tuple[str, bool, str | None]]] = {}


def _current() -> list[tuple[str, bool, str | None]]:
    if not _calls:
        return _records
    import _thread

    return _calls.get(_thread.get_ident(), _records)


def begin_call() -> None:
    """From now on the checks made on this thread are this call's (until ``end_call``)."""
    import _thread

    _calls[_thread.get_ident()] = []


def end_call() -> list[tuple[str, str | None]]:
    """The failed checks of this thread's call (name, what was seen); the call's list is dropped."""
    import _thread

    records = _calls.pop(_thread.get_ident(), [])
    return [(name, seen) for name, ok, seen in records if not ok]


class CheckFailed(AssertionError):
    """A check made with ``fatal=True`` failed: the macro stops here."""


def _shown(seen: Any) -> str | None:
    """``repr(seen)``, cut to a few hundred characters; None for None (nothing to show)."""
    if seen is None:
        return None
    try:
        text = repr(seen)
    except Exception as error:  # a repr that raises must not hide the check
        text = f"<{type(seen).__name__} whose repr() failed: {error!r}>"
    if len(text) > _SEEN_LIMIT:
        text = text[:_SEEN_LIMIT] + f"… ({len(text) - _SEEN_LIMIT} more characters)"
    return text


def check(name: str, passed: Any, seen: Any = None, fatal: bool = False) -> bool:
    """Records the check ``name``: whether it ``passed`` and what was ``seen``; returns ``passed``.

    A failed check does not stop the macro, but makes the run exit 1 and is printed at the end
    with what was seen; with ``fatal=True`` it raises ``CheckFailed`` at once.
    """
    if not isinstance(name, str) or not name:
        raise TypeError("check(): name must be a non-empty string, such as 'status is 200'")
    ok = bool(passed)
    shown = _shown(seen)
    _current().append((name, ok, shown))
    if not ok and fatal:
        detail = f": seen {shown}" if shown is not None else ""
        raise CheckFailed(f"check {name!r} failed{detail}")
    return ok


def check_equal(name: str, seen: Any, expected: Any, fatal: bool = False) -> bool:
    """``check(name, seen == expected, seen)``; the expected value is shown when it fails."""
    ok = seen == expected
    return check(name, ok, seen if ok else _Expected(seen, "==", expected), fatal=fatal)


def check_in(name: str, seen: Any, allowed: Any, fatal: bool = False) -> bool:
    """``check(name, seen in allowed, seen)``."""
    try:
        ok = seen in allowed
    except TypeError:
        ok = False
    return check(name, ok, seen if ok else _Expected(seen, "in", allowed), fatal=fatal)


def check_status(response: Any, expected: Any = 200, name: str | None = None, fatal: bool = False) -> bool:
    """Checks a response's status: one code (200) or several (``(200, 201)``), named
    ``"status of URL"`` unless ``name`` says otherwise."""
    status = getattr(response, "status", None)
    allowed = tuple(expected) if isinstance(expected, (list, tuple, set, range)) else (expected,)
    label = name or f"status of {getattr(response, 'url', 'the response')}"
    ok = status in allowed
    return check(label, ok, status if ok else _Expected(status, "in", allowed), fatal=fatal)


class _Expected:
    """What a comparison saw and what it expected, as ``repr`` shows it: ``404 (expected 200)``."""

    def __init__(self, seen: Any, operator: str, expected: Any) -> None:
        self.seen = seen
        self.operator = operator
        self.expected = expected

    def __repr__(self) -> str:
        wanted = repr(self.expected)
        if len(wanted) > _SEEN_LIMIT // 2:
            wanted = wanted[: _SEEN_LIMIT // 2] + "…"
        if self.operator == "in" and isinstance(self.expected, tuple) and len(self.expected) == 1:
            return f"{self.seen!r} (expected {self.expected[0]!r})"
        word = "expected" if self.operator == "==" else "expected one of"
        return f"{self.seen!r} ({word} {wanted})"


def take_failed() -> list[tuple[str, str | None]]:
    """The failed checks of the run (name, what was seen), forgetting every check."""
    failed = [(name, seen) for name, ok, seen in _records if not ok]
    _records.clear()
    return failed


def records() -> list[tuple[str, bool, str | None]]:
    """Every check of the run so far (name, passed, what was seen), for the host's reports."""
    return list(_records)


def counts() -> tuple[int, int]:
    """How many checks were made and how many failed, so far."""
    return len(_records), sum(1 for _, ok, _ in _records if not ok)
