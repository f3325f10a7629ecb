"""Docs that cannot drift: README.md's module table and authors' reference are generated from the
code (generator/site/reference.py) and must match it; every prose reference a figure kind answers
is described in generator/render/__init__.py; and no text in the repository names a Python file,
or a path under generator/ or tests/, that does not exist."""

from __future__ import annotations

import fnmatch
import re
import shutil
import subprocess
import sys

from conftest import REPO

from generator import render
from generator.site import reference

NAMED_FILE = re.compile(r"(?<![\w./-])((?:generator|tests)/[\w./*-]*\w|[\w-]+\.py)\b")
SKIPPED = ("generator/assets/vendor/", "traces/", "tests/test_reference.py")  # third-party bundles; data; the planted names below


def test_the_generated_sections_are_up_to_date():
    assert reference.stale() == [], f"README.md is stale. Fix: {reference.FIX}"


def test_a_stale_section_is_found_and_named(tmp_path, capsys):
    readme = tmp_path / "README.md"
    shutil.copyfile(REPO / "README.md", readme)
    text = readme.read_text(encoding="utf-8")
    readme.write_text(text.replace("| store |", "| storage |", 1), encoding="utf-8")
    assert reference.stale(readme) == ["modules"]
    assert reference.main(check=True, readme=readme) == 1
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "modules" in err and reference.COMMAND in err
    assert reference.main(readme=readme) == 0 and reference.stale(readme) == []  # writing mends it


def test_the_reference_lists_every_directive_option_and_reference():
    text = reference.authors_reference()
    from generator.lessons.directives import SPECS

    for kind, (allowed, _) in SPECS.items():
        row = next(ln for ln in text.splitlines() if ln.startswith(f"| `{kind}` |"))
        assert all(f"`{o}`" in row for o in allowed), kind
        assert all(f"id.{name}" in row for name in render.KINDS[kind].REFS), kind


def test_every_reference_is_described_where_references_are_documented():
    """In render/__init__.py's list, or in the docstring of the kind's own module."""
    missing = [f"{kind}.{name}" for kind, mod in render.KINDS.items() for name in mod.REFS
               if not re.search(rf"\.{name}\b", render.__doc__ + (mod.__doc__ or ""))]
    assert not missing, f"describe these references in generator/render/__init__.py's docstring or their module's: {missing}"


def tracked_text_files() -> list:
    out = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=REPO, capture_output=True, text=True, check=True)
    files = []
    for name in out.stdout.split():
        p = REPO / name
        if name.startswith(SKIPPED) or not p.is_file() or p.suffix not in (".py", ".md", ".js", ".html", ".yml", ".toml", ".css", ""):
            continue
        files.append(p)
    return files


def stale_names(files) -> dict[str, list[str]]:
    tree = {p.relative_to(REPO).as_posix() for p in REPO.rglob("*") if ".venv" not in p.parts and ".git" not in p.parts}
    basenames = {t.rsplit("/", 1)[-1] for t in tree}
    bad: dict[str, list[str]] = {}
    for p in files:
        try:
            text = p.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        for m in NAMED_FILE.finditer(text):
            name = m.group(1).rstrip("/.")
            if "*" in name:  # a pattern: some file must match it
                exists = any(fnmatch.fnmatch(t, name) for t in tree)
            elif "/" in name:
                exists = name in tree or any(t.startswith(name + "/") for t in tree)
            else:
                exists = name in basenames
            if not exists:
                bad.setdefault(name, []).append(p.relative_to(REPO).as_posix() if p.is_relative_to(REPO) else p.name)
    return bad


def test_no_text_names_a_file_that_is_not_there():
    bad = stale_names(tracked_text_files())
    assert not bad, "stale file names (rename them to what the tree holds): " + "; ".join(f"{k} in {sorted(set(v))}" for k, v in sorted(bad.items()))


def test_the_stale_name_finder_finds_an_old_module(tmp_path):
    planted = tmp_path / "note.md"
    planted.write_text("see generator/publish.py and figures.py, not generator/site/publish.py\n", encoding="utf-8")
    assert sorted(stale_names([planted])) == ["figures.py", "generator/publish.py"]


def test_the_command_checks():
    out = subprocess.run([sys.executable, "-m", "generator", "reference", "--check"], cwd=REPO, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
