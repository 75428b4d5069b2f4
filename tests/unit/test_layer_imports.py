"""The import directions of the shared layer (svc_core) and the functions, read from the source.

Each package of svc_core is a layer; a module may import its own package and the layers ALLOWED
lists for it, nothing else (each package's __init__ says why). The functions are thin handlers
over http and domain: they never reach a table module (data) directly. No production code imports
the local stack, the tests, the benchmarks or the client. Imports inside functions count too.

Within a package too, imports point one way: no module of svc_core or of the local stack reaches
itself again through its imports (a domain module and its request models, a package and its
modules), counting imports under TYPE_CHECKING, inside functions and through lazy_module.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LAYER = ROOT / "layers" / "shared" / "python" / "svc_core"

ALLOWED: dict[str, set[str]] = {
    "platform": set(),
    "contracts": {"platform"},
    "adapters": {"platform"},
    "data": {"platform", "contracts", "adapters"},
    "auth": {"platform", "contracts", "adapters", "data"},
    "domain": {"platform", "contracts", "adapters", "data", "auth"},
    "http": {"platform", "contracts", "adapters", "data", "auth"},
    "functions": {"platform", "contracts", "adapters", "auth", "domain", "http"},
}
NEVER_IMPORTED = ("devstack", "tests", "bench", "ops", "svc_client")


def _sources() -> list[tuple[str, Path]]:
    """(layer, file) for every module of svc_core and of the functions."""
    found = [("functions", p) for p in sorted((ROOT / "functions").rglob("*.py"))]
    for path in sorted(LAYER.rglob("*.py")):
        parts = path.relative_to(LAYER).parts
        found.append((parts[0] if len(parts) > 1 else "", path))
    return found


def _module_of(path: Path, base: Path | None = None) -> str:
    parts = list(path.relative_to(base or LAYER.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, base: Path | None = None) -> list[tuple[int, str]]:
    """(line, imported module or name) of every import in the file, relative ones resolved, and
    each module named to lazy_module (imported on first use)."""
    tree = ast.parse(path.read_text(), str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:
                package = _module_of(path, base).split(".")
                package = package[:len(package) - node.level + (1 if path.name == "__init__.py" else 0)]
                module = ".".join(package + ([module] if module else []))
            found += [(node.lineno, f"{module}.{alias.name}") for alias in node.names]
        elif (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "lazy_module" and node.args
              and isinstance(node.args[0], ast.Constant)):
            found.append((node.lineno, node.args[0].value))
    return found


def _private_reaches(path: Path, layer: str) -> list[tuple[int, str]]:
    """Uses of another package's private name: `from svc_core.x import _name` or `module._name`
    where the module was imported from another package of svc_core."""
    tree = ast.parse(path.read_text(), str(path))
    modules: dict[str, str] = {}  # local name -> the svc_core package it came from
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("svc_core."):
            package = node.module.split(".")[1]
            for alias in node.names:
                modules[alias.asname or alias.name] = package
                if alias.name.startswith("_") and package != layer:
                    found.append((node.lineno, f"{node.module}.{alias.name}"))
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.attr.startswith("_")
                and not node.attr.startswith("__") and modules.get(node.value.id, layer) != layer):
            found.append((node.lineno, f"{node.value.id}.{node.attr}"))
    return found


def violations() -> list[str]:
    found = []
    for layer, path in _sources():
        where = path.relative_to(ROOT)
        allowed = ALLOWED.get(layer, set()) | {layer}
        for line, name in _imports(path):
            top = name.split(".")[0]
            if top in NEVER_IMPORTED:
                found.append(f"{where}:{line} imports {name} (production code never imports {top})")
            elif top == "svc_core":
                target = name.split(".")[1] if name.count(".") else ""
                if target not in allowed:
                    found.append(f"{where}:{line} imports {name}: {layer or 'svc_core'} may import "
                                 f"{', '.join(sorted(allowed - {''})) or 'nothing of svc_core'}")
        if layer in ALLOWED:
            found += [f"{where}:{line} uses {name}, a private name of another package"
                      for line, name in _private_reaches(path, layer)]
    return found


def import_graph(package: Path) -> dict[str, dict[str, int]]:
    """module -> {module of the same package it imports: the line}, for every module of the package
    (`from a import b` is module a.b when a/b.py exists, else module a)."""
    modules = {_module_of(path, package.parent): path for path in sorted(package.rglob("*.py"))}
    graph: dict[str, dict[str, int]] = {}
    for module, path in modules.items():
        graph[module] = {}
        for line, name in _imports(path, package.parent):
            while name and name not in modules:
                name = name.rpartition(".")[0]
            if name and name != module:
                graph[module].setdefault(name, line)
    return graph


def circles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """The import circles: each set of modules that reach one another (a strongly connected
    component of two modules or more, Tarjan's algorithm), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for other in graph[module]:
            if other not in index:
                visit(other)
                low[module] = min(low[module], low[other])
            elif other in stack:
                low[module] = min(low[module], index[other])
        if low[module] == index[module]:
            component = []
            while not component or component[-1] != module:
                component.append(stack.pop())
            if len(component) > 1:
                found.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return sorted(found)


def _described(graph: dict[str, dict[str, int]], circle: list[str]) -> str:
    return "; ".join(f"{a} -> {b} (line {line})" for a in circle for b, line in graph[a].items() if b in circle)


@pytest.mark.parametrize("package", [LAYER, ROOT / "devstack"], ids=["svc_core", "devstack"])
def test_no_import_circle(package):
    graph = import_graph(package)
    found = circles(graph)
    assert found == [], "imports that come back round (move what both sides need to the module below " \
        "them):\n" + "\n".join(f"  {_described(graph, c)}" for c in found)


def test_the_check_finds_a_circle_through_a_function_level_import(tmp_path):
    """The test above can fail: a rules module and its models importing each other, one of the
    imports inside a function and one under TYPE_CHECKING, are a circle; a third module that only
    imports one of them is not in it."""
    package = tmp_path / "pkg"
    (package / "models").mkdir(parents=True)
    for init in (package / "__init__.py", package / "models" / "__init__.py"):
        init.write_text("")
    (package / "rules.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                                      "    from pkg.models.things import Thing\n")
    (package / "models" / "things.py").write_text("def limit():\n    from pkg import rules\n"
                                                  "    return rules.MAX\n")
    (package / "user.py").write_text("from . import rules\n")
    graph = import_graph(package)
    assert circles(graph) == [["pkg.models.things", "pkg.rules"]]
    assert _described(graph, ["pkg.models.things", "pkg.rules"]) == \
        "pkg.models.things -> pkg.rules (line 2); pkg.rules -> pkg.models.things (line 3)"
    (package / "models" / "things.py").write_text("MAX = 1\n")
    assert circles(import_graph(package)) == []


def test_every_module_of_the_shared_layer_is_in_a_package():
    loose = [p.name for p in LAYER.glob("*.py") if p.name != "__init__.py"]
    assert loose == [], f"modules at the root of svc_core belong in one of {sorted(ALLOWED)}: {loose}"
    packages = {p.name for p in LAYER.iterdir() if (p / "__init__.py").exists()}
    assert packages == set(ALLOWED) - {"functions"}


@pytest.mark.parametrize("package", sorted(set(ALLOWED) - {"functions"}))
def test_each_package_says_what_it_holds_and_may_import(package):
    doc = ast.get_docstring(ast.parse((LAYER / package / "__init__.py").read_text())) or ""
    assert "May import" in doc, f"svc_core/{package}/__init__.py says what it may import"
    named = {word.strip(" ,.:;()`") for word in doc.split("May import", 1)[1].split()}
    assert named & set(ALLOWED) == ALLOWED[package], f"svc_core/{package}/__init__.py names {sorted(ALLOWED[package])}"


def test_imports_point_down():
    assert violations() == []


def test_the_check_names_an_import_that_points_up(tmp_path, monkeypatch):
    """The test above can fail: a data module importing domain, and a function importing a table
    module and a private name, are each named with their line."""
    layer = tmp_path / "layers" / "shared" / "python" / "svc_core"
    (layer / "data").mkdir(parents=True)
    (layer / "data" / "t.py").write_text("from svc_core.platform import ids\n\nfrom svc_core.domain import billing\n")
    (tmp_path / "functions" / "f").mkdir(parents=True)
    (tmp_path / "functions" / "f" / "app.py").write_text(
        "from svc_core.data import tenants_table\nfrom svc_core.domain import storage\nstorage._open_keys()\n")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    monkeypatch.setattr(sys.modules[__name__], "LAYER", layer)
    found = violations()
    assert len(found) == 3, found
    assert found[0].startswith("functions/f/app.py:1 imports svc_core.data.tenants_table: functions may import")
    assert found[1] == "functions/f/app.py:3 uses storage._open_keys, a private name of another package"
    assert found[2].startswith("layers/shared/python/svc_core/data/t.py:3 imports svc_core.domain.billing")
