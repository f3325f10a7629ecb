"""The package's shape: the stages of generator.STAGES, whose imports only point down (no cycle,
lazy imports included, no import up the stages); no module over 500 lines; few modules at the root;
one meaning per file name; torch only under generator/model/, and never in the site build."""

from __future__ import annotations

import ast
import re
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
        "import generator.render, generator.markdown.course, generator.markdown.lesson, generator.site.publish\n"
        "print('torch' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# ---------------------------------------------------------------- stages, packages, names

from generator import STAGES  # noqa: E402 (the one list of stages)

ROOT_MODULES_MAX = 8  # generator/*.py, __init__ and __main__ included
TORCH_PACKAGE = "generator.model"


def stage_of(name: str) -> int | None:
    """The index in STAGES of a dotted module name (None for the package's own __init__)."""
    if name == "generator":
        return None
    rest = name.removeprefix("generator.")
    for i, stage in enumerate(STAGES):
        if any(rest == m or rest.startswith(m + ".") for m in stage.modules):
            return i
    raise AssertionError(f"{name} is in no stage of generator.STAGES: add it there")


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    """`a -> b (stage x after stage y)` for every import that points to a later stage."""
    bad = []
    for a in sorted(graph):
        for b in sorted(graph[a]):
            sa, sb = stage_of(a), stage_of(b)
            if sa is not None and sb is not None and sb > sa:
                bad.append(f"{a} -> {b} ({STAGES[sb].name} comes after {STAGES[sa].name})")
    return bad


def test_every_module_is_in_one_stage():
    for name in modules():
        stage_of(name)  # raises for a module no stage lists
    listed = [m for s in STAGES for m in s.modules]
    assert len(listed) == len(set(listed)), "a module is listed in two stages"


def test_imports_follow_the_stage_order():
    bad = upward_imports(import_graph())
    assert not bad, "imports that point up the stages (generator.STAGES):\n" + "\n".join(bad)


def test_a_planted_upward_import_is_found():
    graph = import_graph()
    graph["generator.store.codec"] = graph["generator.store.codec"] | {"generator.render.format"}
    assert upward_imports(graph) == ["generator.store.codec -> generator.render.format (render comes after store)"]


def test_the_root_holds_few_modules():
    root = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(root) <= ROOT_MODULES_MAX, f"generator/ holds {len(root)} modules: {root}; put them in a stage's package"


def test_no_file_name_means_two_things():
    seen: dict[str, list[str]] = {}
    for p in PACKAGE.rglob("*.py"):
        if p.name not in ("__init__.py", "__main__.py"):
            seen.setdefault(p.name, []).append(str(p.relative_to(REPO)))
    twice = {n: ps for n, ps in seen.items() if len(ps) > 1}
    assert not twice, f"one file name, two modules: {twice}"


def torch_importers() -> list[str]:
    """Modules outside generator/model/ with an `import torch` or `transformers` statement."""
    out = []
    for name, path in modules().items():
        if name == TORCH_PACKAGE or name.startswith(TORCH_PACKAGE + "."):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else []
            if any(n.split(".")[0] in ("torch", "transformers", "safetensors.torch") or n.startswith("safetensors.torch") for n in names):
                out.append(name)
    return sorted(set(out))


def test_torch_is_imported_only_under_model():
    assert torch_importers() == [], "torch or transformers imported outside generator/model/"


def test_no_package_re_exports_private_names():
    """`from .x import _name` in an __init__ (or anywhere): a private name stays in its module."""
    bad = []
    for name, path in modules().items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith("generator")):
                bad += [f"{name}: {a.name}" for a in node.names if a.name.startswith("_") and a.name != "__version__"]
    assert not bad, f"private names imported from another module: {bad}"


MAKE_MODULE = re.compile(r"-m\s+(generator(?:\.\w+)*)")


def test_every_module_the_makefile_runs_exists():
    """A package move must not leave `make bench` (or any target) naming a module that is gone."""
    named = MAKE_MODULE.findall((REPO / "Makefile").read_text(encoding="utf-8"))
    assert "generator.bench.browser" in named  # the pattern reads the Makefile at all
    for module in named:
        parts = module.split(".")
        path = REPO.joinpath(*parts)
        assert path.with_suffix(".py").is_file() or (path / "__main__.py").is_file(), (
            f"Makefile runs `python -m {module}`, which does not exist")
