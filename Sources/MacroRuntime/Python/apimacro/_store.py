"""State between runs (``apimacro.state``), incremental sync (``apimacro.incremental``) and
rows written to files and databases (``apimacro.output(rows, to=...)``).

The native half (``_apimacro._state_load`` and friends, ``State/StoreBinding.swift``) takes the
macro's state lock, stages changes and commits them; nothing is written until the run ends
with exit 0 or the macro calls ``apimacro.state.commit()``.
"""

from __future__ import annotations

import datetime
import json
import math
from collections.abc import Iterable, Iterator, Mapping, MutableMapping
from typing import Any

import _apimacro

_NESTED = (dict, list, tuple)


def _check_value(value: Any, path: str) -> None:
    """Raise ``TypeError`` naming ``path`` unless ``value`` is a JSON value apimacro can store."""
    stack = [(value, path)]
    while stack:
        item, where = stack.pop()
        if item is None or isinstance(item, (str, bool)):
            continue
        if isinstance(item, int):
            continue
        if isinstance(item, float):
            if not math.isfinite(item):
                raise TypeError(f"cannot store {where}: {item!r} is not a JSON number")
            continue
        if isinstance(item, (list, tuple)):
            stack.extend((element, f"{where}[{index}]") for index, element in enumerate(item))
            continue
        if isinstance(item, dict):
            for key, element in item.items():
                if not isinstance(key, str):
                    raise TypeError(
                        f"cannot store {where}: its dict has the key {key!r}, and JSON keys are str"
                    )
                stack.append((element, f"{where}[{key!r}]"))
            continue
        name = type(item).__name__
        article = "an" if name[:1].lower() in "aeiou" else "a"
        raise TypeError(
            f"cannot store {where}: {article} {name} is not a JSON value "
            "(state holds str, int, float, bool, None, lists and dicts)"
        )


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


class State(MutableMapping):
    """This macro's persistent state: a mapping of str keys to JSON values.

    Read on first use (taking the macro's state lock: a second run of the same macro waits
    for this one to finish); changes are committed when the run ends with exit 0, or earlier
    by ``commit()``. A value that cannot be stored raises ``TypeError`` where it is assigned.
    """

    def __init__(self) -> None:
        self._values: dict[str, Any] | None = None
        self._stored: dict[str, str] = {}

    def _load(self) -> dict[str, Any]:
        if self._values is None:
            pairs = _apimacro._state_load()
            self._stored = dict(pairs)
            self._values = {key: json.loads(text) for key, text in pairs}
        return self._values

    def __getitem__(self, key: str) -> Any:
        return self._load()[key]

    def __setitem__(self, key: str, value: Any) -> None:
        if not isinstance(key, str):
            raise TypeError(f"apimacro.state keys are str, not {type(key).__name__}")
        _check_value(value, f"apimacro.state[{key!r}]")
        self._load()[key] = value

    def __delitem__(self, key: str) -> None:
        del self._load()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._load()))

    def __len__(self) -> int:
        return len(self._load())

    def __repr__(self) -> str:
        return f"apimacro.state({self._load()!r})"

    def _stage(self) -> None:
        """Hand the keys changed since the last commit to the native side."""
        if self._values is None:
            return
        changes: list[tuple[str, str | None]] = []
        texts: dict[str, str] = {}
        for key, value in self._values.items():
            # A nested value changed in place after its assignment is checked here.
            _check_value(value, f"apimacro.state[{key!r}]")
            text = _dumps(value)
            texts[key] = text
            if self._stored.get(key) != text:
                changes.append((key, text))
        changes.extend((key, None) for key in self._stored if key not in self._values)
        if changes:
            _apimacro._state_stage(changes)
        self._pending = texts

    def commit(self) -> None:
        """Commit the state (and the rows ``output(to=...)`` staged) now, before the run ends:
        after each page of a long sync, say. The state lock stays held until the run ends."""
        self._stage()
        _apimacro._store_commit()
        self._stored = dict(getattr(self, "_pending", {}))

    def _reset(self) -> None:
        self._values = None
        self._stored = {}


state = State()


def finish() -> None:
    """Called by the host when the run ended with exit 0, before it commits."""
    state._stage()


def reset() -> None:
    """Called by the host when a run starts (the REPL's ``:run`` starts another)."""
    state._reset()


# Incremental sync.


def _cursor_of(item: Any, cursor: str) -> Any:
    value = item
    for part in cursor.split("."):
        if not isinstance(value, Mapping) or part not in value:
            raise KeyError(
                f"apimacro.incremental: an item has no {cursor!r} (its cursor); "
                "name the field that grows with each change with cursor="
            )
        value = value[part]
    return value


def _identity(item: Any, primary_key: str) -> Any:
    """The item's ``primary_key`` (a dotted path, like ``user.id``), or None."""
    value = item
    for part in primary_key.split("."):
        if not isinstance(value, Mapping):
            return None
        value = value.get(part)
    return value


def _minus_lag(bookmark: Any, lag: Any) -> Any:
    """The bookmark moved back by ``lag`` (seconds, or a ``timedelta``)."""
    seconds = lag.total_seconds() if isinstance(lag, datetime.timedelta) else float(lag)
    if isinstance(bookmark, (int, float)) and not isinstance(bookmark, bool):
        return bookmark - seconds
    if isinstance(bookmark, str):
        text = bookmark[:-1] + "+00:00" if bookmark.endswith("Z") else bookmark
        moment = datetime.datetime.fromisoformat(text) - datetime.timedelta(seconds=seconds)
        shown = moment.isoformat()
        if bookmark.endswith("Z") and shown.endswith("+00:00"):
            shown = shown[: -len("+00:00")] + "Z"
        return shown
    raise TypeError(f"apimacro.incremental: lag= needs a number or ISO-8601 cursor, not {bookmark!r}")


def incremental(
    items: Iterable[Any],
    cursor: str = "updated_at",
    key: str = "issues",
    initial: Any = None,
    lag: Any = None,
    primary_key: str = "id",
) -> Iterator[Any]:
    """Yield the items of ``items`` whose ``cursor`` is past the bookmark kept in
    ``apimacro.state[key]``, and move the bookmark over each item yielded (committed with the run).

    Items whose cursor equals the bookmark are yielded once (told apart by ``primary_key``);
    ``lag`` (seconds or a ``timedelta``) re-reads that much before the bookmark, for writes
    that land late. ``initial`` is the bookmark of the first run (None: everything).
    """
    stored = state.get(key)
    bookmark = stored.get("cursor", initial) if isinstance(stored, dict) else initial
    seen = set(stored.get("seen", [])) if isinstance(stored, dict) else set()
    floor = bookmark
    if lag is not None and bookmark is not None:
        floor = _minus_lag(bookmark, lag)
    newest = bookmark
    newest_ids = set(seen)
    for item in items:
        value = _cursor_of(item, cursor)
        if value is None:
            continue
        ident = _identity(item, primary_key)
        if floor is not None:
            if value < floor:
                continue
            if lag is None and value == bookmark and ident in seen:
                continue
        # The bookmark moves over the item as it is handed out (committed only with the run).
        if newest is None or value > newest:
            newest = value
            newest_ids = {ident}
        elif value == newest:
            newest_ids.add(ident)
        state[key] = {"cursor": newest, "seen": sorted((i for i in newest_ids if i is not None), key=str)}
        yield item


# Rows into files and databases.


def _cell(value: Any, row: int, field: str) -> Any:
    if isinstance(value, _NESTED):
        try:
            return (json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":")),)
        except (TypeError, ValueError) as error:
            raise TypeError(f"row {row} field {field!r} cannot be written as JSON: {error}") from None
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    raise TypeError(
        f"row {row} field {field!r} is of type {type(value).__name__}; "
        "rows hold str, int, float, bool, None, lists and dicts"
    )


def _explain(rows: list[Any]) -> None:
    """Raise the precise ``TypeError`` for the first value of ``rows`` that cannot be written."""
    for number, row in enumerate(rows, start=1):
        for name, value in row.items():
            if not isinstance(name, str):
                raise TypeError(f"output() row {number} has the key {name!r}; column names are str")
            _cell(value, number, name)


def write_rows(rows: Any, to: str | None, table: str | None, key: Any, mode: str, columns: Any = None) -> None:
    """Stage ``rows`` for ``to`` (or ``run --output``'s file); written when the run commits."""
    if isinstance(rows, Mapping):
        rows = [rows]
    elif isinstance(rows, (str, bytes)) or not isinstance(rows, Iterable):
        raise TypeError(f"output() rows must be dicts (a list or iterable of them), not {type(rows).__name__}")
    chosen = None if columns is None else set(columns)
    prepared = []
    for number, row in enumerate(rows, start=1):
        if type(row) is not dict:
            if not isinstance(row, Mapping):
                raise TypeError(f"output() row {number} is a {type(row).__name__}, not a dict; nothing was written")
            row = dict(row)
        if chosen is not None:
            row = {name: value for name, value in row.items() if name in chosen}
        prepared.append(row)
    try:
        _apimacro._output_rows(prepared, to, table, key, mode)
    except TypeError:
        # The native conversion names no row for a value of a type it does not know: say which.
        _explain(prepared)
        raise
