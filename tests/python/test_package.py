"""The package as a package: its modules import without cycles and each on its own, it
ships py.typed, and the stubs of the extension say what the compiled module has."""

import ast
import inspect
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

import rocelab
from rocelab import _rocelab

PACKAGE_DIR = pathlib.Path(rocelab.__file__).resolve().parent  # build/python/rocelab, as ctest runs it
SOURCE_PACKAGE_DIR = pathlib.Path(__file__).resolve().parents[2] / "bindings" / "python" / "rocelab"
MODULES = sorted(p.stem for p in SOURCE_PACKAGE_DIR.glob("*.py") if p.stem != "__init__")


def package_imports(path):
    """The package's modules that ``path`` imports, at any depth (a function-level import
    counts: it is a cycle waiting for the call)."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            if node.module:
                out.add(node.module.split(".")[0])
            else:
                out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("rocelab."):
            out.add(node.module.split(".")[1])
        elif isinstance(node, ast.Import):
            out.update(a.name.split(".")[1] for a in node.names if a.name.startswith("rocelab."))
    return out


def find_cycle(graph):
    """A cycle of ``graph`` (module -> modules it imports) as a list of modules, or None."""
    state = {}

    def visit(node, path):
        state[node] = "open"
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == "open":
                return path[path.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt, path + [nxt])
                if found:
                    return found
        state[node] = "done"
        return None

    for start in sorted(graph):
        if start not in state:
            found = visit(start, [start])
            if found:
                return found
    return None


def test_the_cycle_finder_finds_a_cycle_and_only_one():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None


def test_no_module_of_the_package_imports_itself_back():
    graph = {p.stem: package_imports(p) - {p.stem} for p in SOURCE_PACKAGE_DIR.glob("*.py")}
    # __init__ re-exports every module; no module imports the package's __init__.
    assert all("__init__" not in targets for targets in graph.values())
    assert find_cycle(graph) is None, f"import cycle: {' -> '.join(find_cycle(graph))}"


@pytest.mark.parametrize("module", MODULES)
def test_module_imports_on_its_own(module):
    # A fresh interpreter with an empty `rocelab` package (its __init__ not run), so the
    # module imports what it needs itself and in an order that works.
    code = (
        "import importlib, importlib.util, sys, types\n"
        "spec = importlib.util.find_spec('rocelab')\n"
        "package = types.ModuleType('rocelab')\n"
        "package.__path__ = list(spec.submodule_search_locations)\n"
        "sys.modules['rocelab'] = package\n"
        f"importlib.import_module('rocelab.{module}')\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


def test_the_package_is_typed_where_it_is_built_and_installed(tmp_path):
    assert (SOURCE_PACKAGE_DIR / "py.typed").is_file()
    assert (PACKAGE_DIR / "py.typed").is_file() and (PACKAGE_DIR / "_rocelab.pyi").is_file()
    cmake = shutil.which("cmake")
    if cmake is None:
        pytest.skip("no cmake on PATH to install the package with")
    build_dir = PACKAGE_DIR.parents[1]
    done = subprocess.run([cmake, "--install", str(build_dir), "--component", "python", "--prefix", str(tmp_path)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    installed = list(tmp_path.glob("lib/python3*/dist-packages/rocelab"))
    assert len(installed) == 1
    for name in ("py.typed", "_rocelab.pyi", "__init__.py", "_installation.py"):
        assert (installed[0] / name).is_file(), name


# --- the stubs against the compiled module ------------------------------------------------

STUB = ast.parse((PACKAGE_DIR / "_rocelab.pyi").read_text())


def stub_parameters(node):
    """(name, has_default) of a stubbed function's parameters, self and cls left out."""
    a = node.args
    positional = a.posonlyargs + a.args
    defaults = [False] * (len(positional) - len(a.defaults)) + [True] * len(a.defaults)
    out = [(p.arg, d) for p, d in zip(positional, defaults)]
    out += [(p.arg, d is not None) for p, d in zip(a.kwonlyargs, a.kw_defaults)]
    return [p for p in out if p[0] not in ("self", "cls")]


def is_overload(node):
    return any(isinstance(d, ast.Name) and d.id == "overload" for d in node.decorator_list)


def stub_members(body):
    """name -> ("function", [parameter lists, one per overload]) or ("value", None)."""
    out = {}
    for node in body:
        if isinstance(node, ast.FunctionDef):
            if any(isinstance(d, ast.Name) and d.id == "property" for d in node.decorator_list):
                out[node.name] = ("value", None)
            else:
                out.setdefault(node.name, ("function", []))[1].append(stub_parameters(node))
        elif isinstance(node, ast.AnnAssign):
            out[node.target.id] = ("value", None)
        elif isinstance(node, ast.ClassDef):
            out[node.name] = ("class", node)
    return out


SIGNATURE = re.compile(r"^(?:\d+\. )?\w+\((.*)\) -> .*$")


def compiled_parameters(function):
    """(name, has_default) per parameter of a pybind11 function, one list per overload,
    read from the signatures pybind11 writes at the top of its docstring."""
    lists = []
    for line in (function.__doc__ or "").splitlines():
        m = SIGNATURE.match(line.strip())
        if not m:
            continue
        params, depth, current = [], 0, ""
        for ch in m.group(1) + ",":
            if ch in "([{":
                depth += 1
            elif ch in ")]}":
                depth -= 1
            if ch == "," and depth == 0:
                if current.strip():
                    params.append(current.strip())
                current = ""
            else:
                current += ch
        lists.append([(p.split(":")[0].strip(), "=" in p) for p in params
                      if p.split(":")[0].strip() not in ("self", "cls")])
    return lists


def public(names):
    return {n for n in names if not n.startswith("_") or n == "__init__" or n == "__len__"}


def compare_functions(where, compiled, stub_lists):
    got = compiled_parameters(compiled)
    assert got, f"{where}: no pybind11 signature in its docstring"
    assert sorted(map(str, got)) == sorted(map(str, stub_lists)), \
        f"{where}: the module has {got}, the stub {stub_lists}"


def test_every_name_of_the_module_is_in_the_stubs_and_back():
    stubbed = stub_members(STUB.body)
    compiled = public(n for n in dir(_rocelab) if not inspect.ismodule(getattr(_rocelab, n)))
    assert compiled - set(stubbed) == set(), "in the module, not in _rocelab.pyi"
    assert set(stubbed) - compiled == set(), "in _rocelab.pyi, not in the module"


@pytest.mark.parametrize("name", sorted(public(dir(_rocelab))))
def test_the_stub_of_each_name_matches_the_module(name):
    stubbed = stub_members(STUB.body)
    kind, detail = stubbed[name]
    obj = getattr(_rocelab, name)
    if inspect.isclass(obj):
        assert kind == "class", f"{name} is a class in the module"
        members = stub_members(detail.body)
        names = public(n for n in vars(obj) if n != "__doc__" and n != "__module__")
        if not compiled_parameters(obj.__init__):
            names.discard("__init__")  # no constructor: made by the module's functions only
        assert names - set(members) == set(), f"{name}: in the module, not in the stub"
        assert set(members) - names == set(), f"{name}: in the stub, not in the module"
        for member in names:
            raw = inspect.getattr_static(obj, member)
            if isinstance(raw, property):
                assert members[member][0] == "value", f"{name}.{member} is a property"
            elif isinstance(raw, staticmethod) or callable(raw):
                assert members[member][0] == "function", f"{name}.{member} is a method"
                compare_functions(f"{name}.{member}", getattr(obj, member), members[member][1])
            else:
                assert members[member][0] == "value"
    elif callable(obj):
        assert kind == "function", f"{name} is a function in the module"
        compare_functions(name, obj, detail)
    else:
        assert kind == "value", f"{name} is a value in the module"
