"""No import circles among the modules of the episode harness and the VISTA tools: every
import is read from the source (module level and function-local alike), so a circle hidden
inside a function is found too. (Issue 37: agent_call <-> isolated and vista code <->
controller <-> records were circles; the project-wide contracts come with import-linter.)"""

import ast
from pathlib import Path

import pytest

import longpuzzle

ROOT = Path(longpuzzle.__file__).parent


def _imports(folder: str) -> dict[str, set[str]]:
    """{module: the modules of the same folder it imports}, package __init__ files left out
    (a package that re-exports its modules is not a circle of theirs)."""
    pkg = "longpuzzle." + folder.replace("/", ".")
    names = {f"{pkg}.{p.stem}": p for p in (ROOT / folder).glob("*.py") if p.stem != "__init__"}
    graph = {}
    for name, path in names.items():
        out = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                out.update(m for m in [node.module] + [f"{node.module}.{a.name}" for a in node.names] if m in names)
            elif isinstance(node, ast.Import):
                out.update(a.name for a in node.names if a.name in names)
        graph[name] = out - {name}
    return graph


def _circle(graph: dict[str, set[str]]) -> list[str]:
    """One circle of the graph as the path around it, or []."""
    state: dict[str, int] = {}             # 1: on the current path, 2: done

    def visit(v, path):
        state[v] = 1
        for w in sorted(graph[v]):
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


@pytest.mark.parametrize("folder", ["agents/harness", "agents/vista"])
def test_no_import_circle_among_the_modules(folder):
    graph = _imports(folder)
    assert len(graph) > 5
    assert _circle(graph) == []


def test_the_circle_finder_finds_a_circle_behind_a_function_local_import():
    assert _circle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) in (["a", "b", "c", "a"],)
    assert _circle({"a": {"b"}, "b": set()}) == []
