"""Compares the type stubs (apimacro/__init__.pyi) with the live apimacro module.

Run inside the embedded interpreter (StubsTests): ``differences(stub_path)`` returns one line
per disagreement, [] when every public name of the module has a stub and every stub a name,
every class has the same public members in both, and every function and method takes the same
parameters (names, kinds, which have defaults) as ``inspect.signature`` reports for the live
one. A stub line ending in ``# awaiting issue N`` declares a member another issue adds: it may
be missing from the module, and its parameters are not compared until the marker goes.
"""

import ast
import inspect
import re

import apimacro

_AWAITING = re.compile(r"#\s*awaiting issue \d+")
def _public(name):
    return not name.startswith("_")


class _Stub:
    """The stub file, read with ast."""

    def __init__(self, path):
        with open(path, encoding="utf-8") as file:
            self.text = file.read()
        self.lines = self.text.splitlines()
        self.tree = ast.parse(self.text, path)

    def awaiting(self, node):
        return bool(_AWAITING.search(self.lines[node.lineno - 1]))


def _members(body):
    """name -> [nodes] of the definitions in a module or class body (overloads are several)."""
    members = {}
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            members.setdefault(node.name, []).append(node)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            members.setdefault(node.target.id, []).append(node)
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    members.setdefault(target.id, []).append(node)
    return members


def _stub_parameters(function):
    """[(name, kind, has_default)] of a stub's def, in inspect's terms."""
    arguments = function.args
    result = []
    positional = arguments.posonlyargs + arguments.args
    first_default = len(positional) - len(arguments.defaults)
    for index, argument in enumerate(positional):
        kind = "POSITIONAL_ONLY" if index < len(arguments.posonlyargs) else "POSITIONAL_OR_KEYWORD"
        result.append((argument.arg, kind, index >= first_default))
    if arguments.vararg:
        result.append((arguments.vararg.arg, "VAR_POSITIONAL", False))
    for argument, default in zip(arguments.kwonlyargs, arguments.kw_defaults):
        result.append((argument.arg, "KEYWORD_ONLY", default is not None))
    if arguments.kwarg:
        result.append((arguments.kwarg.arg, "VAR_KEYWORD", False))
    return result


def _live_parameters(function):
    signature = inspect.signature(function)
    return [
        (p.name, p.kind.name, p.default is not inspect.Parameter.empty) for p in signature.parameters.values()
    ]


def _is_property(nodes):
    return any(
        isinstance(n, ast.FunctionDef) and any(isinstance(d, ast.Name) and d.id == "property" for d in n.decorator_list)
        for n in nodes
    )


def _compare_function(where, nodes, live, stub, problems):
    if stub.awaiting(nodes[0]):
        return
    try:
        actual = _live_parameters(live)
    except (TypeError, ValueError) as error:
        problems.append(f"{where}: inspect.signature fails on the module's ({error})")
        return
    declared = [_stub_parameters(n) for n in nodes if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    if actual not in declared:
        problems.append(f"{where}: the module takes {actual}, the stub {declared[0] if declared else 'nothing'}")


def _live_class_members(cls):
    """The public members of ``cls`` and of its apimacro bases (not what Mapping or Exception bring)."""
    names = set()
    for klass in cls.__mro__:
        if klass.__module__ == "apimacro":
            names |= {n for n in vars(klass) if _public(n)}
    if issubclass(cls, BaseException):
        # Instance attributes set by __init__ (status, url, ...): make one and look.
        try:
            instance = cls("m")
        except Exception:
            instance = None
        if instance is not None:
            names |= {n for n in vars(instance) if _public(n)}
    return names


def _stub_class_members(node, classes):
    """The public members a stub class declares, with those of its bases declared in the stub."""
    members = {}
    for base in node.bases:
        if isinstance(base, ast.Name) and base.id in classes:
            members.update(_stub_class_members(classes[base.id], classes))
    members.update({n: nodes for n, nodes in _members(node.body).items() if _public(n)})
    return members


def _shared(prefix, declared, live, stub, problems):
    """The names both have, (name, nodes) in order; a name only one has is a problem (a stub
    member awaiting another issue may be missing from the module)."""
    for name in sorted(live - set(declared)):
        problems.append(f"{prefix}{name}: in the module, not in the stub")
    for name, nodes in sorted(declared.items()):
        if name in live:
            yield name, nodes
        elif not stub.awaiting(nodes[0]):
            problems.append(f"{prefix}{name}: in the stub, not in the module")


def _compare_class(name, node, cls, stub, classes, problems):
    declared = _stub_class_members(node, classes)
    for member, nodes in _shared(f"{name}.", declared, _live_class_members(cls), stub, problems):
        attribute = inspect.getattr_static(cls, member, None)
        if _is_property(nodes):
            if not isinstance(attribute, property) and not stub.awaiting(nodes[0]):
                problems.append(f"{name}.{member}: a property in the stub, not in the module")
        elif isinstance(nodes[0], ast.FunctionDef):
            _compare_function(f"{name}.{member}", nodes, getattr(cls, member), stub, problems)


def differences(stub_path):
    """Every disagreement between the stubs at ``stub_path`` and the live module, one line each."""
    stub = _Stub(stub_path)
    problems = []
    declared = {n: nodes for n, nodes in _members(stub.tree.body).items() if _public(n)}
    classes = {n: nodes[0] for n, nodes in declared.items() if isinstance(nodes[0], ast.ClassDef)}
    live = {n for n in dir(apimacro) if _public(n)}
    for name, nodes in _shared("", declared, live, stub, problems):
        value = getattr(apimacro, name)
        node = nodes[0]
        if isinstance(node, ast.ClassDef):
            if not isinstance(value, type):
                problems.append(f"{name}: a class in the stub, a {type(value).__name__} in the module")
            else:
                _compare_class(name, node, value, stub, classes, problems)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if not callable(value) or isinstance(value, type):
                problems.append(f"{name}: a function in the stub, a {type(value).__name__} in the module")
            else:
                _compare_function(name, nodes, value, stub, problems)
        elif isinstance(node, ast.AnnAssign):
            annotation = ast.unparse(node.annotation)
            expected = getattr(apimacro, annotation, None) if annotation.isidentifier() else None
            if isinstance(expected, type) and not isinstance(value, expected):
                problems.append(f"{name}: declared {annotation}, the module's is a {type(value).__name__}")
    if "__version__" not in _members(stub.tree.body) or not isinstance(getattr(apimacro, "__version__", None), str):
        problems.append("__version__: missing")
    return problems


def awaiting_count(stub_path):
    """How many stub lines are still marked ``# awaiting issue N``."""
    return sum(1 for line in _Stub(stub_path).lines if _AWAITING.search(line))
