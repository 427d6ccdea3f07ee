"""agents/ as a tree (issue 37): no import circle anywhere among its modules, across its
subpackages, reading every import (module level and function-local alike). Before, agents/cli.py
-> jobs options -> the local backends looped back, agents/models/images.py and the VISTA
controller imported the datasets package that imports the agents, and verify.py imported
report/data.py, which imports verify.py."""

import ast
from pathlib import Path

import longpuzzle

ROOT = Path(longpuzzle.__file__).parent


def _graph() -> dict[str, set[str]]:
    """{module of agents/: the modules of agents/ it imports}; package __init__ files left out
    (a package re-exporting its modules is not a circle of theirs)."""
    names = {"longpuzzle." + ".".join(p.relative_to(ROOT).with_suffix("").parts): p
             for p in (ROOT / "agents").rglob("*.py") if p.stem != "__init__"}
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


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected parts of more than one module (each holds a circle)."""
    index, low, stack, on, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = []
            while True:
                w = stack.pop()
                on.discard(w)
                part.append(w)
                if w == v:
                    break
            if len(part) > 1:
                found.append(sorted(part))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_import_circle_in_agents():
    graph = _graph()
    # the graph reads function-local imports too: agent_options imports the runner only inside
    # a function (lazily)
    assert len(graph) > 100 and "longpuzzle.agents.runner" in graph["longpuzzle.agents.agent_options"]
    assert _circles(graph) == []


def test_the_circle_finder_finds_one():
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
