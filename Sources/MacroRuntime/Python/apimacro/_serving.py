"""Macros as tools for ``apimacro mcp`` (the host's ``Serving/MacroTools.swift``).

``describe(path, plugin_writes)`` reads a macro's source with ``ast`` (nothing of it runs) and
returns, as JSON: its description (the module's docstring, then ``main``'s), the JSON Schema
of ``main()``'s parameters, whether it writes (and why), or why it cannot be a tool.

``call(path, arguments, timeout, plugin_writes)`` checks the arguments against that schema
(an invalid one is answered without running anything), then runs the macro in a fresh module
namespace on the calling thread and returns, as JSON, what it printed, the rows it gave
(``apimacro.output`` and ``main``'s return value) and how it ended.

``install()`` (once, when the server starts) points ``sys.stdout`` at a router: what a call
prints goes into that call's result, anything else to stderr; never to the protocol stream.

A macro writes when its docstring has a line ``Writes: ...``, its ``main`` is decorated with
``@apimacro.writes``, or its source calls ``.post``, ``.put``, ``.patch`` or ``.delete``
(``github.post(...)``), ``request("POST", ...)`` with a writing method, or a plugin endpoint
whose method is not GET or HEAD.
"""

from __future__ import annotations

import ast
import datetime
import enum
import inspect
import io
import json
import sys
import threading
import traceback
import types
import typing
from collections.abc import Iterable, Mapping
from typing import Any

# The most a call's printed text keeps: the rest is cut, with a note.
PRINTED_LIMIT = 1 << 20
# The largest macro file offered as a tool.
SOURCE_LIMIT = 1 << 20
# How much of a wrong value an error message quotes.
SHOWN_LIMIT = 60

_WRITE_ATTRIBUTES = ("post", "put", "patch", "delete")
_WRITE_METHODS = ("POST", "PUT", "PATCH", "DELETE")

_local = threading.local()


class _Capture:
    """What one call printed and the rows it gave."""

    def __init__(self) -> None:
        self.printed = io.StringIO()
        self.size = 0
        self.cut = False
        self.rows: list[Any] = []
        self.columns: list[Any] | None = None
        self.gave_rows = False


class _Router(io.TextIOBase):
    """``sys.stdout`` while the server runs: the calling thread's call gets what is written;
    a thread outside any call writes to stderr."""

    encoding = "utf-8"
    errors = "strict"

    def __init__(self, fallback: Any) -> None:
        self._fallback = fallback

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return False

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        capture = getattr(_local, "capture", None)
        if capture is None:
            return self._fallback.write(text)
        if capture.size < PRINTED_LIMIT:
            kept = text[: PRINTED_LIMIT - capture.size]
            capture.printed.write(kept)
            capture.size += len(kept)
            if len(kept) < len(text):
                capture.cut = True
        else:
            capture.cut = True
        return len(text)

    def flush(self) -> None:
        if getattr(_local, "capture", None) is None:
            self._fallback.flush()


def install() -> None:
    """Route ``sys.stdout`` by call (once)."""
    if not isinstance(sys.stdout, _Router):
        sys.stdout = _Router(sys.stderr)


def collect(rows: Any, columns: Any) -> bool:
    """``apimacro.output(rows)`` inside a call: keep the rows as the call's result; False
    outside a call (then output prints as usual)."""
    capture = getattr(_local, "capture", None)
    if capture is None:
        return False
    from ._output import _collect_columns, _collect_rows

    capture.rows.extend(_collect_rows(rows))
    if columns is not None:
        capture.columns = _collect_columns(columns)
    capture.gave_rows = True
    return True


# ---------------------------------------------------------------- reading a macro (ast only)


class _Unsupported(Exception):
    """A parameter whose annotation cannot be a JSON Schema."""


def _dotted(node: ast.AST) -> str:
    """``datetime.date`` for an attribute chain, ``date`` for a name, "" otherwise."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else ""
    return ""


def _enums(tree: ast.Module) -> dict[str, list[str]]:
    """The module's own Enum classes and their members' names."""
    found: dict[str, list[str]] = {}
    for node in tree.body:
        if not isinstance(node, ast.ClassDef):
            continue
        bases = {_dotted(base).rsplit(".", 1)[-1] for base in node.bases}
        if not bases & {"Enum", "IntEnum", "StrEnum", "Flag", "IntFlag"}:
            continue
        members = []
        for statement in node.body:
            if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
                target = statement.targets[0]
                if isinstance(target, ast.Name) and not target.id.startswith("_"):
                    members.append(target.id)
            elif isinstance(statement, ast.AnnAssign) and statement.value is not None:
                if isinstance(statement.target, ast.Name) and not statement.target.id.startswith("_"):
                    members.append(statement.target.id)
        found[node.name] = members
    return found


def _annotation_schema(node: ast.AST | None, enums: dict[str, list[str]]) -> dict[str, Any]:
    """The JSON Schema of an annotation read from the source."""
    if node is None:
        return {"type": "string"}
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        try:
            parsed = ast.parse(node.value, mode="eval").body
        except SyntaxError:
            raise _Unsupported(f"{node.value!r} does not parse") from None
        return _annotation_schema(parsed, enums)
    if isinstance(node, ast.Constant) and node.value is None:
        return {"type": "null"}
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        parts = [node.left, node.right]
        kept = [p for p in parts if not (isinstance(p, ast.Constant) and p.value is None)]
        if len(kept) == 1:
            return _annotation_schema(kept[0], enums)
        raise _Unsupported(f"{ast.unparse(node)} is not one type (only X | None is)")
    name = _dotted(node)
    short = name.rsplit(".", 1)[-1]
    if isinstance(node, ast.Subscript):
        outer = _dotted(node.value).rsplit(".", 1)[-1]
        inner = node.slice
        if outer == "Optional":
            return _annotation_schema(inner, enums)
        if outer == "Union":
            items = inner.elts if isinstance(inner, ast.Tuple) else [inner]
            kept = [p for p in items if not (isinstance(p, ast.Constant) and p.value is None)]
            if len(kept) == 1:
                return _annotation_schema(kept[0], enums)
            raise _Unsupported(f"{ast.unparse(node)} is not one type")
        if outer == "Literal":
            items = inner.elts if isinstance(inner, ast.Tuple) else [inner]
            values = []
            for item in items:
                if not isinstance(item, ast.Constant) or type(item.value) not in (str, int):
                    raise _Unsupported("a Literal's choices must be str or int")
                values.append(item.value)
            kinds = {type(v) for v in values}
            schema: dict[str, Any] = {"enum": values}
            if kinds == {str}:
                schema["type"] = "string"
            elif kinds == {int}:
                schema["type"] = "integer"
            return schema
        if outer in ("list", "List", "Sequence", "Iterable"):
            return {"type": "array", "items": _annotation_schema(inner, enums)}
        raise _Unsupported(f"{ast.unparse(node)} cannot be a tool's parameter")
    if short == "str" or short == "Any" or short in ("Path", "PurePath", "PosixPath"):
        return {"type": "string"}
    if short == "int":
        return {"type": "integer"}
    if short == "float":
        return {"type": "number"}
    if short == "bool":
        return {"type": "boolean"}
    if name in ("date", "datetime.date"):
        return {"type": "string", "format": "date"}
    if name in ("datetime", "datetime.datetime"):
        return {"type": "string", "format": "date-time"}
    if name in ("list", "List"):
        return {"type": "array", "items": {"type": "string"}}
    if short in enums and enums[short]:
        return {"type": "string", "enum": list(enums[short])}
    raise _Unsupported(f"{ast.unparse(node)} cannot be a tool's parameter")


def _default(node: ast.AST, enums: dict[str, list[str]]) -> tuple[bool, Any]:
    """A parameter's default as JSON when the source says it plainly: (known, value)."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in enums:
        return True, node.attr
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False, None
    if isinstance(value, tuple):
        value = list(value)
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return False, None
    return True, value


def _main(tree: ast.Module) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    main = None
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == "main":
            main = node
    return main


def _schema(main: ast.FunctionDef | ast.AsyncFunctionDef | None, enums: dict[str, list[str]]) -> dict[str, Any]:
    properties: dict[str, Any] = {}
    required: list[str] = []
    if main is not None:
        arguments = main.args
        positional = arguments.posonlyargs + arguments.args
        defaults: list[ast.AST | None] = [None] * (len(positional) - len(arguments.defaults))
        defaults += list(arguments.defaults)
        pairs = list(zip(positional, defaults)) + list(zip(arguments.kwonlyargs, arguments.kw_defaults))
        for argument, default in pairs:
            try:
                schema = _annotation_schema(argument.annotation, enums)
            except _Unsupported as error:
                raise _Unsupported(f"parameter '{argument.arg}': {error}") from None
            if argument.annotation is None and default is not None:
                known, value = _default(default, enums)
                if known and type(value) in (int, float, bool):
                    schema = {"type": {int: "integer", float: "number", bool: "boolean"}[type(value)]}
            if default is None:
                required.append(argument.arg)
            else:
                known, value = _default(default, enums)
                if known and value is not None:
                    schema = dict(schema, default=value)
            properties[argument.arg] = schema
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


def _declared_write(doc: str | None) -> bool:
    return any(line.strip().lower().startswith("writes:") for line in (doc or "").splitlines())


def _writes(
    tree: ast.Module, main: Any, docs: list[str | None], plugin_writes: Iterable[str]
) -> str | None:
    """Why the macro writes, or None when nothing says it does."""
    if any(_declared_write(doc) for doc in docs):
        return "its docstring says Writes:"
    if main is not None:
        for decorator in main.decorator_list:
            if _dotted(decorator).rsplit(".", 1)[-1] == "writes":
                return "its main() is marked @apimacro.writes"
    endpoints = set(plugin_writes)
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not isinstance(node.func, (ast.Attribute, ast.Name)):
            continue
        called = node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id
        if isinstance(node.func, ast.Attribute) and called in _WRITE_ATTRIBUTES:
            return f"it calls {_dotted(node.func) or '.' + called}() (line {node.lineno})"
        if called == "request" and node.args:
            method = node.args[0]
            if isinstance(method, ast.Constant) and isinstance(method.value, str):
                if method.value.upper() in _WRITE_METHODS:
                    return f"it sends {method.value.upper()} with request() (line {node.lineno})"
            elif not isinstance(method, ast.Constant):
                return f"its request() method is not a constant (line {node.lineno})"
        if isinstance(node.func, ast.Attribute) and called in endpoints:
            return f"it calls the plugin endpoint {called}() (line {node.lineno})"
    return None


def _read(path: str) -> bytes:
    with open(path, "rb") as file:
        source = file.read(SOURCE_LIMIT + 1)
    if len(source) > SOURCE_LIMIT:
        raise _Unsupported(f"the file is larger than {SOURCE_LIMIT >> 20} MiB")
    return source


def _info(path: str, plugin_writes: Iterable[str]) -> dict[str, Any]:
    try:
        source = _read(path)
        tree = ast.parse(source, path)
    except (OSError, SyntaxError, ValueError, _Unsupported, RecursionError, MemoryError) as error:
        return {"problem": f"cannot be read: {error}"}
    main = _main(tree)
    module_doc = ast.get_docstring(tree)
    main_doc = ast.get_docstring(main) if main is not None else None
    description = "\n\n".join(doc for doc in (module_doc, main_doc) if doc)
    enums = _enums(tree)
    try:
        schema = _schema(main, enums)
    except _Unsupported as error:
        return {"problem": str(error), "description": description}
    writes = _writes(tree, main, [module_doc, main_doc], plugin_writes)
    return {
        "description": description,
        "inputSchema": schema,
        "writes": writes,
        "hasMain": main is not None,
        "source": source,
    }


def describe(path: str, plugin_writes: list[str]) -> str:
    """What the tool of the macro at ``path`` is, as JSON (see the module doc)."""
    info = _info(path, plugin_writes)
    info.pop("source", None)
    return json.dumps(info)


# ---------------------------------------------------------------- checking the arguments


def _shown(value: Any) -> str:
    text = json.dumps(value) if not isinstance(value, str) else repr(value)
    if len(text) > SHOWN_LIMIT:
        text = text[:SHOWN_LIMIT] + f"… ({len(text)} characters)"
    return text


_KIND_NAMES = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "true or false",
    "array": "an array",
    "null": "null",
}


def _check(name: str, value: Any, schema: dict[str, Any]) -> str | None:
    """Why ``value`` does not fit ``schema``, or None."""
    kind = schema.get("type")
    ok = {
        "string": isinstance(value, str),
        "integer": isinstance(value, int) and not isinstance(value, bool),
        "number": isinstance(value, (int, float)) and not isinstance(value, bool),
        "boolean": isinstance(value, bool),
        "array": isinstance(value, list),
        "null": value is None,
        None: True,
    }.get(kind, True)
    if not ok:
        return f"parameter '{name}' must be {_KIND_NAMES.get(kind, kind)}, not {_shown(value)}"
    if "enum" in schema and value not in schema["enum"]:
        choices = ", ".join(json.dumps(choice) for choice in schema["enum"])
        return f"parameter '{name}' must be one of {choices}, not {_shown(value)}"
    fmt = schema.get("format")
    if fmt in ("date", "date-time"):
        try:
            if fmt == "date":
                datetime.date.fromisoformat(value)
            else:
                datetime.datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            shape = "YYYY-MM-DD" if fmt == "date" else "an ISO 8601 date and time"
            return f"parameter '{name}' must be a date as {shape}, not {_shown(value)}"
    if kind == "array":
        for index, item in enumerate(value):
            problem = _check(f"{name}[{index}]", item, schema.get("items", {}))
            if problem:
                return problem
    return None


def _invalid(arguments: Any, schema: dict[str, Any]) -> str | None:
    """Why ``arguments`` do not fit the tool's input schema, or None."""
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        return f"the arguments must be an object of named parameters, not {_shown(arguments)}"
    properties = schema["properties"]
    for name in arguments:
        if name not in properties:
            known = ", ".join(properties) or "none"
            return f"unknown parameter '{_shown(name)[1:-1]}' (the parameters are: {known})"
    for name in schema["required"]:
        if name not in arguments:
            return f"parameter '{name}' is required"
    for name, value in arguments.items():
        if value is None and name not in schema["required"]:
            continue
        problem = _check(name, value, properties[name])
        if problem:
            return problem
    return None


# ---------------------------------------------------------------- running a call


def _convert(value: Any, annotation: Any) -> Any:
    """A JSON value as ``main``'s annotation wants it (dates, Enums, paths)."""
    from ._main import _scalar_type, _unwrap_optional

    if value is None:
        return None
    annotation = _unwrap_optional(annotation)
    if isinstance(value, list):
        arguments = typing.get_args(annotation)
        element = arguments[0] if arguments else str
        return [_convert(item, element) for item in value]
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        if value in annotation.__members__:
            return annotation[value]
        return annotation(value)
    if annotation in (int, float, bool, str, inspect.Parameter.empty, typing.Any) or not isinstance(value, str):
        return value
    try:
        return _scalar_type(annotation).convert(value)
    except Exception:
        return value


def _jsonable(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): v for k, v in value.items()}
    if isinstance(value, (datetime.date, datetime.datetime)):
        return value.isoformat()
    if isinstance(value, enum.Enum):
        return value.name
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


def _to_json(value: Any) -> Any:
    return json.loads(json.dumps(value, default=_jsonable))


class _Timer:
    """Raises MacroTimeout in the calling thread after ``seconds`` (at its next Python
    instruction: a request in flight ends first, within --request-timeout)."""

    def __init__(self, seconds: float | None) -> None:
        self.fired = False
        self._lock = threading.Lock()
        self._done = False
        self._thread = threading.get_ident()
        self._timer = None
        if seconds is not None and seconds > 0:
            self._timer = threading.Timer(seconds, self._fire)
            self._timer.daemon = True
            self._timer.start()

    def _fire(self) -> None:
        import ctypes

        import _apimacro

        with self._lock:
            if self._done:
                return
            self.fired = True
            ctypes.pythonapi.PyThreadState_SetAsyncExc(
                ctypes.c_ulong(self._thread), ctypes.py_object(_apimacro.MacroTimeout)
            )

    def cancel(self) -> None:
        with self._lock:
            self._done = True
        if self._timer is not None:
            self._timer.cancel()


def _failure(error: BaseException, path: str) -> str:
    """The exception as ``python script.py`` shows it, from the macro's first frame on."""
    frames = traceback.extract_tb(error.__traceback__)
    start = next((i for i, frame in enumerate(frames) if frame.filename == path), None)
    lines = ["Traceback (most recent call last):\n"]
    if start is not None:
        kept = [f for f in frames[start:] if f.filename not in ("<apimacro>", "<_apimacro>")]
        lines += traceback.format_list(kept)
    lines += traceback.format_exception_only(type(error), error)
    return "".join(lines)


def call(path: str, arguments_json: str, timeout: float | None, plugin_writes: list[str]) -> str:
    """Runs one tool call (see the module doc); the result as JSON:
    ``{"invalid": message}`` (nothing ran), or ``{"ok": bool, "printed": str, "rows": [...] |
    None, "value": ..., "error": str}``."""
    info = _info(path, plugin_writes)
    if "problem" in info:
        return json.dumps({"unavailable": info["problem"]})
    try:
        arguments = json.loads(arguments_json)
    except (ValueError, RecursionError):
        return json.dumps({"invalid": "the arguments are not JSON"})
    problem = _invalid(arguments, info["inputSchema"])
    if problem:
        return json.dumps({"invalid": problem})
    capture = _Capture()
    _local.capture = capture
    from . import _checks

    _checks.begin_call()
    result: dict[str, Any] = {"ok": True}
    timer = _Timer(timeout)
    try:
        try:
            result.update(_run(path, info, arguments or {}))
        finally:
            timer.cancel()
    except BaseException as error:  # noqa: BLE001 - a call's end, whatever it is
        import _apimacro

        result["ok"] = False
        if timer.fired and isinstance(error, _apimacro.MacroTimeout):
            result["error"] = f"the macro ran longer than its --timeout of {timeout:g} s"
        elif isinstance(error, SystemExit):
            code = error.code
            if code is None or code == 0 or code is False:
                result["ok"] = True
            else:
                result["error"] = f"the macro exited with status {code}"
        elif isinstance(error, KeyboardInterrupt):
            result["error"] = "the call was interrupted"
        else:
            result["error"] = _failure(error, path)
    finally:
        _local.capture = None
    failed = _checks.end_call()
    if failed:
        result["ok"] = False
        lines = [f"{len(failed)} check{'s' if len(failed) != 1 else ''} failed:"]
        lines += [f"  FAILED {name}" + (f": seen {seen}" if seen else "") for name, seen in failed]
        result["error"] = (result.get("error", "") + "\n" + "\n".join(lines)).strip()
    printed = capture.printed.getvalue()
    if capture.cut:
        printed += f"\n[apimacro: printed text cut at {PRINTED_LIMIT >> 20} MiB]\n"
    result["printed"] = printed
    if capture.gave_rows:
        try:
            result["rows"] = _to_json(capture.rows)
        except (TypeError, ValueError, RecursionError) as error:
            result["ok"] = False
            result["error"] = f"the rows cannot be given as JSON: {error}"
    try:
        return json.dumps(result)
    except (TypeError, ValueError, RecursionError) as error:
        return json.dumps({"ok": False, "printed": printed, "error": f"the result cannot be given as JSON: {error}"})


def _run(path: str, info: dict[str, Any], arguments: dict[str, Any]) -> dict[str, Any]:
    # A macro with main() is imported, then main is called (its `if __name__ == "__main__"`
    # guard does not fire); one without runs as __main__, as `apimacro run` runs it.
    module = types.ModuleType("__main__" if not info["hasMain"] else "__apimacro_tool__")
    module.__file__ = path
    module.__builtins__ = __builtins__
    code = compile(info["source"], path, "exec")
    exec(code, module.__dict__)
    main = module.__dict__.get("main")
    if not info["hasMain"] or not callable(main):
        return {}
    from ._main import _resolve_annotations, _signature

    signature = _signature(main)
    hints = _resolve_annotations(main, signature)
    positional: list[Any] = []
    keywords: dict[str, Any] = {}
    for parameter in signature.parameters.values():
        if parameter.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            continue
        if parameter.name in arguments and arguments[parameter.name] is not None:
            value = _convert(arguments[parameter.name], hints.get(parameter.name, parameter.annotation))
        elif parameter.default is not inspect.Parameter.empty:
            value = parameter.default
        else:
            value = None
        if parameter.kind is inspect.Parameter.POSITIONAL_ONLY:
            positional.append(value)
        else:
            keywords[parameter.name] = value
    value = main(*positional, **keywords)
    if inspect.iscoroutine(value):
        import asyncio

        value = asyncio.run(value)
    if value is None:
        return {}
    if isinstance(value, int) and not isinstance(value, bool):
        if value == 0:
            return {}
        return {"ok": False, "error": f"the macro returned the exit status {value}"}
    return {"value": _to_json(value)}
