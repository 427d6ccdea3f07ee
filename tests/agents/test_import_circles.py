"""No import circles anywhere in the package: every import of every module is read from the
source - module level and function-local alike, so a circle hidden inside a function is found
too - and the modules they name must form no circle. (Issue 37: agent_call <-> isolated, vista
code <-> controller <-> records, catalog <-> catalog_store, the suite's mixins, generators base
<-> tiers, engine.protocol <-> specialize and one of 13 modules through the root package and the
Gymnasium hook were circles.) import-linter (pyproject.toml, run by .ci/run) checks the layers
and, with acyclic_siblings, circles between the parts of some packages; this test finds a
circle between any two modules of the whole package.

What counts as an import of module M: ``import M``, ``from M import name`` (of M.name when that
is a module), relative imports resolved. Not counted: imports under ``if TYPE_CHECKING:``, which
never run (a type named in an annotation, not a dependency at run time). A package's
``__init__`` that imports its own submodules is an ordinary edge: a submodule importing its
package back would close a circle, and does not."""

import ast
from pathlib import Path

import longpuzzle

ROOT = Path(longpuzzle.__file__).parent
NOT_THE_PACKAGE = {"tests", "benchmarks", "examples", "docs"}


def _modules() -> dict[str, tuple[Path, bool]]:
    """{dotted name: (file, is a package)} of every module of the package."""
    out = {}
    for path in ROOT.rglob("*.py"):
        rel = path.relative_to(ROOT)
        if rel.parts[0] in NOT_THE_PACKAGE or any(p.startswith(".") for p in rel.parts):
            continue
        parts = ["longpuzzle", *rel.with_suffix("").parts]
        is_pkg = parts[-1] == "__init__"
        out[".".join(parts[:-1] if is_pkg else parts)] = (path, is_pkg)
    return out


def _type_checking_only(tree: ast.AST) -> set[int]:
    """ids of the import nodes inside ``if TYPE_CHECKING:`` blocks."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            out.update(id(n) for stmt in node.body for n in ast.walk(stmt))
    return out


def import_graph() -> dict[str, set[str]]:
    """{module: the modules of the package it imports}."""
    mods = _modules()

    def known(name: str) -> str:            # the module a dotted name lies in
        while name and name not in mods:
            name = name.rpartition(".")[0]
        return name

    graph = {}
    for name, (path, is_pkg) in mods.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skip = _type_checking_only(tree)
        package = name if is_pkg else name.rpartition(".")[0]
        out = set()
        for node in ast.walk(tree):
            if id(node) in skip:
                continue
            if isinstance(node, ast.Import):
                out.update(known(a.name) for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")[:len(package.split(".")) - node.level + 1]
                    base = ".".join(up + ([node.module] if node.module else []))
                out.update(known(f"{base}.{a.name}") for a in node.names)
        graph[name] = out - {name, ""}
    return graph


def _circle(graph: dict[str, set[str]]) -> list[str]:
    """One circle of the graph as the path around it, or []."""
    state: dict[str, int] = {}             # 1: on the current path, 2: done

    def visit(v, path):
        state[v] = 1
        for w in sorted(graph.get(v, ())):
            if state.get(w) == 1:
                return path[path.index(w):] + [v, w] if w in path else [v, w]
            if w not in state:
                found = visit(w, path + [v])
                if found:
                    return found
        state[v] = 2
        return []

    for v in sorted(graph):
        if v not in state:
            found = visit(v, [])
            if found:
                return found
    return []


def test_no_import_circle_in_the_package():
    graph = import_graph()
    assert len(graph) > 150 and "longpuzzle.engine.protocol" in graph["longpuzzle.engine.session"]
    assert _circle(graph) == []


def test_the_graph_holds_function_local_imports_but_not_type_checking_ones():
    # engine/protocol.py loads engine/specialize.py inside a method; specialize names Puzzle
    # for its annotations only (under TYPE_CHECKING)
    graph = import_graph()
    assert "longpuzzle.engine.specialize" in graph["longpuzzle.engine.protocol"]
    assert "longpuzzle.engine.protocol" not in graph["longpuzzle.engine.specialize"]


def test_the_circle_finder_finds_a_circle_behind_a_function_local_import():
    assert _circle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) in (["a", "b", "c", "a"],)
    assert _circle({"a": {"b"}, "b": set()}) == []
