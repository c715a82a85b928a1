"""Command-line support for a macro's ``main()`` function.

The host executes the macro's module, then calls
``call_main(module.main, argv, prog)``, which turns ``main``'s signature into
an ``argparse`` parser, parses ``argv`` and calls ``main`` with the values:

* parameters without a default are positional arguments;
* parameters with a default, and keyword-only parameters, are options
  ``--name VALUE`` (``max_items`` → ``--max-items``; ``--max_items`` is
  accepted too); a keyword-only parameter without a default is a required
  option.  Positional-only parameters with a default are optional positionals;
* ``*args`` is a positional taking zero or more values; ``**kwargs`` is ignored;
* annotations ``int``, ``float``, ``str``, ``bool``, ``pathlib.Path``,
  ``datetime.date`` (``2024-05-01``), ``datetime.datetime`` (ISO 8601),
  an ``Enum`` (a member's name, or its value), ``Literal["a", "b"]`` (of str
  or int: the choices), ``list[X]`` and ``Optional[X]`` / ``X | None``
  convert the values (``typing.Any`` is a str); an unannotated parameter takes
  the type of its default when that is an int, float or bool, and is a str
  otherwise. Any other annotation (``dict``, ``tuple``, ``int | str``, a name
  that does not resolve...) is refused with a clear message and exit status
  2, also for ``--help``, rather than read as a str;
* a bool option defaulting to False is a flag ``--name``; one defaulting to
  True is ``--no-name``; one defaulting to None accepts both; a bool
  positional takes true/false/yes/no/1/0;
* a list positional takes zero or more values; a list option is repeated
  once per value (``--tag a --tag b``).

``--help`` prints the usage, the docstring and the arguments to stdout and
raises ``SystemExit(0)``; a bad command line prints the usage and an error to
stderr and raises ``SystemExit(2)``.
"""

from __future__ import annotations

# Only what every main() with parameters needs is imported here (argparse, inspect): the modules
# an annotation may name (pathlib, datetime, typing, enum) are looked up in sys.modules, where the
# macro that names them has put them, and typing is imported only to resolve string annotations
# (issue 43: start-up pays for what the macro uses).
import _collections_abc
import argparse
import ast
import inspect
import os
import sys
import types

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Mapping

_TRUE = ("true", "yes", "1")
_FALSE = ("false", "no", "0")
_SCALARS = (int, float, str, bool)


def parse_bool(text: str) -> bool:
    """Parse true/false/yes/no/1/0 (any case); raise ArgumentTypeError otherwise."""
    lowered = text.strip().lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise argparse.ArgumentTypeError(
        f"invalid bool value: {text!r} (expected true/false, yes/no or 1/0)"
    )


class _ValueType:
    """How the command-line strings of one parameter are converted."""

    __slots__ = ("convert", "name", "is_bool", "is_list")

    def __init__(self, convert: Callable[[str], Any], name: str, is_bool: bool = False, is_list: bool = False) -> None:
        self.convert = convert
        self.name = name
        self.is_bool = is_bool
        self.is_list = is_list


def _loaded(name: str) -> Any:
    """The module ``name`` if something imported it, else None: an annotation can only be one
    of its classes when the macro imported it."""
    return sys.modules.get(name)


def _origin(annotation: Any) -> Any:
    """``typing.get_origin`` without importing typing when the macro did not."""
    typing = _loaded("typing")
    if typing is not None:
        return typing.get_origin(annotation)
    if isinstance(annotation, types.UnionType):
        return types.UnionType
    return getattr(annotation, "__origin__", None)


def _arguments(annotation: Any) -> tuple:
    """``typing.get_args`` without importing typing when the macro did not."""
    typing = _loaded("typing")
    if typing is not None:
        return typing.get_args(annotation)
    return getattr(annotation, "__args__", ())


class AnnotationError(TypeError):
    """A ``main()`` annotation that cannot be read from a command line."""


SUPPORTED_ANNOTATIONS = (
    "str, int, float, bool, pathlib.Path, datetime.date, datetime.datetime, an Enum, "
    "Literal[...] of str or int, list[X] of one of these, or X | None"
)


def _unwrap_optional(annotation: Any) -> Any:
    """``Optional[X]`` / ``X | None`` → ``X``; anything else unchanged."""
    typing = _loaded("typing")
    origin = _origin(annotation)
    if origin is types.UnionType or (typing is not None and origin is typing.Union):
        members = [a for a in _arguments(annotation) if a is not type(None)]
        if len(members) == 1:
            return members[0]
    return annotation


def _shown(annotation: Any) -> str:
    """An annotation as a user wrote it: ``dict``, ``tuple[int, str]``, ``'Foo'``."""
    if isinstance(annotation, str):
        return repr(annotation) + " (a name that does not resolve)"
    if isinstance(annotation, type) and not _arguments(annotation):
        return annotation.__qualname__
    return repr(annotation).replace("typing.", "")


def _parse_date(text: str) -> Any:
    try:
        return _loaded("datetime").date.fromisoformat(text.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid date value: {text!r} (expected YYYY-MM-DD)") from None


def _parse_datetime(text: str) -> Any:
    try:
        return _loaded("datetime").datetime.fromisoformat(text.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"invalid datetime value: {text!r} (expected ISO 8601, e.g. 2024-05-01T12:30:00 or 2024-05-01)"
        ) from None


# What a choice's ``find`` returns for text that names no choice.
_MISSING = object()


def _choice_type(shown: list[str], find: Callable[[str], Any]) -> _ValueType:
    """A parameter that takes one of the choices ``shown``; ``find`` maps text to a choice."""

    def convert(text: str) -> Any:
        value = find(text)
        if value is _MISSING:
            raise argparse.ArgumentTypeError(
                f"invalid choice: {text!r} (choose from {', '.join(shown)})"
            )
        return value

    return _ValueType(convert, "one of " + ", ".join(shown))


def _enum_type(annotation: Any) -> _ValueType:
    members = list(annotation)

    def find(text: str) -> Any:
        for match in (
            lambda m: m.name == text,
            lambda m: m.name.lower() == text.lower(),
            lambda m: str(m.value) == text,
        ):
            for member in members:
                if match(member):
                    return member
        return _MISSING

    return _choice_type([m.name for m in members], find)


def _literal_type(annotation: Any) -> _ValueType:
    values = [v for v in _arguments(annotation) if v is not None]
    if not values or any(type(v) not in (str, int) for v in values):
        raise AnnotationError(f"{_shown(annotation)}: a Literal's choices must be str or int")

    def find(text: str) -> Any:
        for value in values:
            if str(value) == text:
                return value
        return _MISSING

    return _choice_type([str(v) for v in values], find)


def _scalar_type(annotation: Any) -> _ValueType:
    annotation = _unwrap_optional(annotation)
    if annotation is bool:
        return _ValueType(parse_bool, "bool", is_bool=True)
    if annotation in _SCALARS:
        return _ValueType(annotation, annotation.__name__)
    typing, pathlib, datetime, enum = (_loaded(name) for name in ("typing", "pathlib", "datetime", "enum"))
    if typing is not None and annotation is typing.Any:
        return _ValueType(str, "str")
    if pathlib is not None and isinstance(annotation, type) and issubclass(annotation, pathlib.PurePath):
        return _ValueType(annotation, "path")
    if datetime is not None and annotation is datetime.datetime:
        return _ValueType(_parse_datetime, "datetime")
    if datetime is not None and annotation is datetime.date:
        return _ValueType(_parse_date, "date")
    if enum is not None and isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return _enum_type(annotation)
    if typing is not None and typing.get_origin(annotation) is typing.Literal:
        return _literal_type(annotation)
    raise AnnotationError(f"{_shown(annotation)} cannot be read from the command line")


_LIST_ORIGINS = (list, _collections_abc.Sequence, _collections_abc.Iterable)


def _value_type(annotation: Any, default: Any) -> _ValueType:
    """Work out the conversion for a parameter from its annotation/default.

    Raises AnnotationError for an annotation the command line cannot give."""
    if annotation is inspect.Parameter.empty:
        if type(default) in (int, float, bool):
            return _scalar_type(type(default))
        return _ValueType(str, "str")
    annotation = _unwrap_optional(annotation)
    if annotation is list:
        return _ValueType(str, "list of str", is_list=True)
    if _origin(annotation) in _LIST_ORIGINS:
        arguments = _arguments(annotation)
        element = _scalar_type(arguments[0] if arguments else str)
        return _ValueType(element.convert, f"list of {element.name}", is_list=True)
    return _scalar_type(annotation)


def _resolve_annotations(func: Callable[..., Any], signature: inspect.Signature) -> dict:
    """Resolve string annotations (``from __future__ import annotations``).

    Uses ``typing.get_type_hints``; if that fails (one unresolvable name makes
    it fail for the whole function), each string annotation is evaluated on
    its own, and the raw annotation is kept when that fails too. Without a
    string annotation there is nothing to resolve, and typing is not imported.
    """
    if not any(isinstance(p.annotation, str) for p in signature.parameters.values()):
        return {name: p.annotation for name, p in signature.parameters.items()}
    import typing

    try:
        return typing.get_type_hints(func)
    except Exception:
        pass
    namespace = getattr(inspect.unwrap(func), "__globals__", {})
    resolved = {}
    for name, parameter in signature.parameters.items():
        annotation = parameter.annotation
        if isinstance(annotation, str):
            try:
                annotation = eval(annotation, dict(namespace))  # noqa: S307
            except Exception:
                pass
        resolved[name] = annotation
    return resolved


def _docstring(func: Any) -> str | None:
    doc = getattr(func, "__doc__", None)
    if not isinstance(doc, str) or not doc.strip():
        return None
    return inspect.cleandoc(doc)


def _first_line(doc: Any) -> str:
    if not isinstance(doc, str):
        return ""
    for line in doc.splitlines():
        if line.strip():
            return line.strip()
    return ""


def _show_default(value: Any) -> str:
    pathlib, enum, datetime = (_loaded(name) for name in ("pathlib", "enum", "datetime"))
    if pathlib is not None and isinstance(value, pathlib.PurePath):
        return str(value)
    if enum is not None and isinstance(value, enum.Enum):
        return value.name
    if datetime is not None and isinstance(value, (datetime.date, datetime.datetime)):
        return value.isoformat()
    return repr(value)


def _columns() -> int:
    """``shutil.get_terminal_size().columns`` (COLUMNS, else the terminal's, else 80), without
    shutil, which argparse's help formatter imports (and with it bz2, lzma and fnmatch)."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns > 0:
        return columns
    try:
        columns = os.get_terminal_size(sys.__stdout__.fileno()).columns
    except (AttributeError, ValueError, OSError):
        columns = 0
    return columns or 80


def _formatter(prog: str) -> argparse.HelpFormatter:
    """argparse's RawDescriptionHelpFormatter at the width it would pick itself."""
    return argparse.RawDescriptionHelpFormatter(prog, width=_columns() - 2)


def _help(text: str) -> str:
    """Escape ``%`` for argparse, which %-formats help strings."""
    return text.replace("%", "%%")


def _dashed(name: str) -> str:
    """``max_items`` → ``max-items`` (the option spelling of a parameter)."""
    return name.strip("_").replace("_", "-") or name


class _MacroArgumentParser(argparse.ArgumentParser):
    """An ArgumentParser that also accepts the underscore spelling of options.

    ``--max_items`` is rewritten to ``--max-items`` before parsing, so the help
    lists only the dashed spelling.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.underscore_aliases: dict[str, str] = {}

    def add_option(self, name: str, prefix: str = "", **kwargs: Any) -> str:
        """Add the option for parameter ``name`` and return its flag."""
        flag = f"--{prefix}{_dashed(name)}"
        underscored = f"--{prefix.replace('-', '_')}{name}"
        if underscored != flag:
            self.underscore_aliases[underscored] = flag
        self.add_argument(flag, **kwargs)
        return flag

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        if args is None:
            args = sys.argv[1:]
        rewritten = []
        arguments = list(args)
        for index, argument in enumerate(arguments):
            if argument == "--":
                rewritten.extend(arguments[index:])
                break
            option, equals, value = argument.partition("=")
            if option in self.underscore_aliases:
                argument = self.underscore_aliases[option] + equals + value
            rewritten.append(argument)
        return super().parse_known_args(rewritten, namespace)

    def error(self, message: str) -> Any:
        """argparse's error, with "did you mean" for a mistyped option (``--limt``)."""
        prefix = "unrecognized arguments: "
        if message.startswith(prefix):
            import difflib  # only on this error: start-up imports as little as it can

            known = [flag for action in self._actions for flag in action.option_strings if flag.startswith("--")]
            for word in message[len(prefix):].split():
                option = word.partition("=")[0]
                if option.startswith("--"):
                    near = difflib.get_close_matches(option, known, n=1, cutoff=0.7)
                    if near:
                        message += f"; did you mean '{near[0]}'?"
                        break
        return super().error(message)


def _add_positional(
    parser: _MacroArgumentParser, parameter: inspect.Parameter, value_type: _ValueType
) -> None:
    name = parameter.name
    if parameter.kind is inspect.Parameter.VAR_POSITIONAL or value_type.is_list:
        parser.add_argument(
            name, nargs="*", type=value_type.convert, metavar=name,
            help=_help(f"({value_type.name}, zero or more)"),
        )
    elif parameter.default is not inspect.Parameter.empty:  # positional-only
        parser.add_argument(
            name, nargs="?", type=value_type.convert, default=parameter.default,
            metavar=name,
            help=_help(f"({value_type.name}, default: {_show_default(parameter.default)})"),
        )
    else:
        parser.add_argument(
            name, type=value_type.convert, metavar=name,
            help=_help(f"({value_type.name})"),
        )


def _add_option(
    parser: _MacroArgumentParser, parameter: inspect.Parameter, value_type: _ValueType
) -> None:
    name = parameter.name
    default = parameter.default
    required = default is inspect.Parameter.empty
    shown = "required" if required else f"default: {_show_default(default)}"
    if value_type.is_bool and not value_type.is_list and not required:
        if default is False:
            parser.add_option(
                name, dest=name, action="store_true",
                help=_help(f"(bool flag, {shown})"),
            )
            return
        if default is True:
            negated = "--no-" + _dashed(name)
            parser.add_option(
                name, "no-", dest=name, action="store_false",
                help=_help(f"(bool, {shown}; {negated} sets it to False)"),
            )
            return
        parser.add_option(
            name, dest=name, action="store_const", const=True, default=default,
            help=_help(f"(bool, {shown}; sets it to True)"),
        )
        parser.add_option(
            name, "no-", dest=name, action="store_const", const=False, default=default,
            help=_help("(bool; sets it to False)"),
        )
        return
    if value_type.is_list:
        flag = "--" + _dashed(name)
        # argparse's "append" would add to the default list itself, so the
        # default is filled in after parsing (see call_main).
        parser.add_option(
            name, dest=name, action="append", type=value_type.convert,
            required=required, default=None,
            help=_help(
                f"({value_type.name}; repeat the option for each value, "
                f"e.g. {flag} A {flag} B; {shown})"
            ),
        )
        return
    parser.add_option(
        name, dest=name, type=value_type.convert,
        required=required, default=None if required else default,
        help=_help(f"({value_type.name}, {shown})"),
    )


def _signature(func: Callable[..., Any]) -> inspect.Signature:
    try:
        return inspect.signature(func)
    except (TypeError, ValueError) as error:
        raise TypeError(f"cannot build a command line for {func!r}: {error}") from None


def build_parser(func: Callable[..., Any], prog: str | None = None) -> argparse.ArgumentParser:
    """Build the ``argparse`` parser for ``func``'s signature (see module doc)."""
    signature = _signature(func)
    hints = _resolve_annotations(func, signature)
    parser = _MacroArgumentParser(
        prog=prog,
        description=_docstring(func),
        formatter_class=_formatter,
    )
    for parameter in signature.parameters.values():
        kind = parameter.kind
        if kind is inspect.Parameter.VAR_KEYWORD:
            continue
        try:
            value_type = _value_type(hints.get(parameter.name, parameter.annotation), parameter.default)
        except AnnotationError as error:
            raise AnnotationError(
                f"{getattr(func, '__name__', 'main')}() parameter {parameter.name!r}: {error}; "
                f"use {SUPPORTED_ANNOTATIONS}"
            ) from None
        is_option = kind is inspect.Parameter.KEYWORD_ONLY or (
            kind is inspect.Parameter.POSITIONAL_OR_KEYWORD
            and parameter.default is not inspect.Parameter.empty
        )
        if is_option:
            if parameter.name == "help":
                raise TypeError(
                    f"parameter 'help' of {getattr(func, '__name__', func)!r} "
                    "would clash with --help; please rename it"
                )
            _add_option(parser, parameter, value_type)
        else:
            _add_positional(parser, parameter, value_type)
    return parser


def call_main(func: Callable[..., Any], argv: list[str] | None = None, prog: str | None = None) -> Any:
    """Parse ``argv`` according to ``func``'s signature and call ``func``.

    Returns ``func``'s return value (a coroutine returned by an ``async def``
    main is run to completion with ``asyncio.run``).  ``--help`` raises
    ``SystemExit(0)`` after printing the help to stdout; an invalid command
    line raises ``SystemExit(2)`` after printing the error to stderr.
    ``argv`` defaults to ``sys.argv[1:]``.
    """
    if argv is None:
        argv = sys.argv[1:]
    signature = _signature(func)
    try:
        parser = build_parser(func, prog)
    except AnnotationError as error:
        # The macro's command line cannot be built: a usage error, as for a bad argument.
        sys.stderr.write(f"{prog or 'apimacro'}: {error}\n")
        raise SystemExit(2) from None
    values = vars(parser.parse_args(list(argv)))
    positional: list[Any] = []
    keywords: dict[str, Any] = {}
    for parameter in signature.parameters.values():
        kind = parameter.kind
        if kind is inspect.Parameter.VAR_KEYWORD:
            continue
        value = values[parameter.name]
        if value is None and parameter.default is not inspect.Parameter.empty:
            default = parameter.default
            value = list(default) if isinstance(default, list) else default
        if kind is inspect.Parameter.VAR_POSITIONAL:
            positional.extend(value)
        elif kind is inspect.Parameter.KEYWORD_ONLY:
            keywords[parameter.name] = value
        else:
            positional.append(value)
    result = func(*positional, **keywords)
    if inspect.iscoroutine(result):
        import asyncio

        result = asyncio.run(result)
    return result


def _main_node(source: str | bytes, filename: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The last top-level ``def main`` of ``source`` (the one Python would call), read with
    ``ast``; None when there is none or the source does not parse."""
    try:
        tree = ast.parse(source, filename)
    except (SyntaxError, ValueError):
        return None
    main = None
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == "main":
            main = node
    return main


def option_flags(source: str | bytes, filename: str = "<macro>") -> list[str]:
    """Return the option flags the ``main()`` of a macro's ``source`` takes, read
    with ``ast`` without running anything: for each parameter that becomes an
    option (see the module doc), ``--name``, its underscore spelling, and the
    ``--no-name`` spellings a bool option may have.  The host uses them to tell
    apimacro's own options after the macro's name from the macro's.  Returns
    ``[]`` when there is no top-level ``main`` or the source does not parse.
    """
    main = _main_node(source, filename)
    if main is None:
        return []
    arguments = main.args
    plain = arguments.args
    defaults = len(arguments.defaults)
    # Defaults belong to the last positional parameters; positional-only ones stay positionals.
    first_default = len(arguments.posonlyargs) + len(plain) - defaults
    names = [a.arg for i, a in enumerate(plain, len(arguments.posonlyargs)) if i >= first_default]
    names += [a.arg for a in arguments.kwonlyargs]
    flags = []
    for name in names:
        for prefix in ("", "no-"):
            flags.append(f"--{prefix}{_dashed(name)}")
            flags.append(f"--{prefix.replace('-', '_')}{name}")
    return sorted(set(flags))


def parameters(source: str | bytes, filename: str = "<macro>") -> list[tuple[str, str, bool, str]]:
    """Return the parameters of the ``main()`` of a macro's ``source``, read with ``ast``
    without running anything, for ``batch --each``: (name, how it is passed, whether it is
    required, what kind of bool flag it is), in order.  How: ``"positional"``,
    ``"--dashed-name"`` (an option), ``"*"`` (``*args``) or ``"**"`` (``**kwargs``).  The flag
    kind: ``""`` (not a flag), ``"false"`` (``--name`` only), ``"true"`` (``--no-name`` only) or
    ``"none"`` (both).  ``[]`` without a ``main``.
    """
    main = _main_node(source, filename)
    if main is None:
        return []
    arguments = main.args

    def flag(argument: ast.arg, default: ast.expr | None) -> str:
        annotation = argument.annotation
        named = (isinstance(annotation, ast.Name) and annotation.id == "bool") or (
            isinstance(annotation, ast.Constant) and annotation.value == "bool"
        )
        if isinstance(default, ast.Constant) and isinstance(default.value, bool):
            return "true" if default.value else "false"
        if named and isinstance(default, ast.Constant) and default.value is None:
            return "none"
        return ""

    plain = list(arguments.posonlyargs) + list(arguments.args)
    first_default = len(plain) - len(arguments.defaults)
    found: list[tuple[str, str, bool, str]] = []
    for index, argument in enumerate(plain):
        if index < first_default:
            found.append((argument.arg, "positional", True, ""))
        else:
            default = arguments.defaults[index - first_default]
            how = "positional" if index < len(arguments.posonlyargs) else f"--{_dashed(argument.arg)}"
            found.append((argument.arg, how, False, flag(argument, default) if how != "positional" else ""))
    if arguments.vararg is not None:
        found.append((arguments.vararg.arg, "*", False, ""))
    for argument, default in zip(arguments.kwonlyargs, arguments.kw_defaults):
        found.append((argument.arg, f"--{_dashed(argument.arg)}", default is None, flag(argument, default)))
    if arguments.kwarg is not None:
        found.append((arguments.kwarg.arg, "**", False, ""))
    return found


def describe(func: Any) -> str:
    """Return the one-line help of a callable: the first non-empty line of its
    docstring, or "" if it has none."""
    return _first_line(_docstring(func))


def module_help(module_globals: Mapping[str, Any]) -> str:
    """Return the one-line help of a macro module from its globals: the first
    line of the module docstring, else that of its ``main``, else ""."""
    line = _first_line(module_globals.get("__doc__"))
    if line:
        return line
    main = module_globals.get("main")
    if callable(main):
        return describe(main)
    return ""
