"""The package's shape (issue 10): imports only point down (no cycle, lazy imports included),
no module over 500 lines, and the site build never imports torch."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

from conftest import REPO

PACKAGE = REPO / "generator"
MAX_LINES = 500


def module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def imports_of(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The package modules `name` imports, at any depth of its code (lazy imports count)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            # `from pkg import mod` imports the module pkg.mod; `from mod import name` imports mod
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
        else:
            continue
        out.update(t for t in targets if t in known and t != name)
    return out


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(n: str) -> list[str] | None:
        state[n] = 1
        path.append(n)
        for m in sorted(graph[n]):
            if state.get(m) == 1:
                return path[path.index(m):] + [m]
            if m not in state and (found := visit(m)):
                return found
        path.pop()
        state[n] = 2
        return None

    for n in sorted(graph):
        if n not in state and (found := visit(n)):
            return found
    return None


def import_graph() -> dict[str, set[str]]:
    known = modules()
    return {name: imports_of(name, path, known) for name, path in known.items()}


def test_the_package_imports_have_no_cycle():
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_the_cycle_finder_finds_a_cycle():
    # the check above must be able to fail: a planted circle of three
    graph = import_graph() | {"a": {"b"}, "b": {"c"}, "c": {"a"}}
    assert find_cycle(graph) == ["a", "b", "c", "a"]
    assert find_cycle({"x": {"y"}, "y": set()}) is None


def test_lazy_and_relative_imports_are_edges():
    known = modules()
    graph = import_graph()
    assert "generator.render.context" in graph["generator.render.attention"]  # from .context import
    assert "generator.lessons.directives" in graph["generator.render.attention"]  # from ..lessons import directives
    assert "generator.render" in graph["generator.markdown.course"]  # from .. import render
    assert set(known) == set(graph)


def test_no_module_is_over_500_lines():
    long = {name: n for name, p in modules().items() if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert not long, f"split these modules (over {MAX_LINES} lines): {long}"


def test_rendering_never_imports_torch():
    code = (
        "import sys\n"
        "import generator.render, generator.markdown.course, generator.markdown.lesson, generator.publish\n"
        "print('torch' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
