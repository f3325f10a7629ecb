"""Docs that cannot drift: docs/reference.md and docs/architecture.md's module table are generated
from the code (generator/site/reference.py) and must match it; every option of every figure kind
has a type, a default and an example that parses; every reference has its arguments named; every
error an author can meet is listed, collected from the code; the authors' guide sends no author
into source code; every prose reference a figure kind answers is described in
generator/render/__init__.py; and no text in the repository names a Python file, or a path under
generator/ or tests/, that does not exist."""

from __future__ import annotations

import fnmatch
import re
import shutil
import subprocess
import sys

import pytest
from conftest import REPO

from generator import render
from generator.lessons import option_docs
from generator.lessons.directives import SPECS, parse_directive
from generator.lessons.errors import LessonError
from generator.site import reference

NAMED_FILE = re.compile(r"(?<![\w./-])((?:generator|tests)/[\w./*-]*\w|[\w-]+\.py)\b")
SKIPPED = ("generator/assets/vendor/", "traces/", "tests/test_reference.py")  # third-party bundles; data; the planted names below
GENERATED = (reference.REFERENCE, reference.ARCHITECTURE)


def test_the_generated_docs_are_up_to_date():
    assert reference.stale() == [], f"the docs are stale. Fix: {reference.FIX}"


def copy_docs(tmp_path):
    (tmp_path / "docs").mkdir()
    for name in GENERATED:
        shutil.copyfile(REPO / name, tmp_path / name)
    return tmp_path


def test_a_stale_module_table_is_found_and_named(tmp_path, capsys):
    root = copy_docs(tmp_path)
    arch = root / reference.ARCHITECTURE
    arch.write_text(arch.read_text(encoding="utf-8").replace("| store |", "| storage |", 1), encoding="utf-8")
    assert reference.stale(root) == [reference.ARCHITECTURE]
    assert reference.main(check=True, root=root) == 1
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and reference.ARCHITECTURE in err and reference.COMMAND in err
    assert reference.main(root=root) == 0 and reference.stale(root) == []  # writing mends it


def test_a_hand_edited_reference_is_stale(tmp_path):
    root = copy_docs(tmp_path)
    ref = root / reference.REFERENCE
    ref.write_text(ref.read_text(encoding="utf-8").replace("`{{ id.weight(from, to) }}`", "`{{ id.weight(a, b) }}`", 1), encoding="utf-8")
    assert reference.stale(root) == [reference.REFERENCE]
    (root / reference.REFERENCE).unlink()  # a missing file is stale too, and writing makes it
    assert reference.stale(root) == [reference.REFERENCE]
    assert reference.main(root=root) == 0 and reference.stale(root) == []


def kind_section(kind: str) -> str:
    text = reference.authors_reference()
    start = text.index(f"### `{kind}`\n")
    end = text.find("\n### ", start + 1)
    return text[start:end]


@pytest.mark.parametrize("kind", list(SPECS))
def test_the_reference_lists_every_option_with_its_type_default_and_example(kind):
    allowed, required = SPECS[kind]
    section = kind_section(kind)
    for name in allowed:
        doc = option_docs.option(kind, name)
        assert doc is not None, f"{kind}: option '{name}' has no entry in generator/lessons/option_docs.py"
        row = next((ln for ln in section.splitlines() if ln.startswith(f"| `{name}` |")), None)
        assert row is not None, (kind, name)
        assert doc.takes and doc.example.startswith(f"{name}:") and f"`{doc.example}`" in row
        assert ("**required**" in row) == (name in required), (kind, name)
        assert name in required or doc.default in row.replace("\\|", "|"), (kind, name)


def base_lines(kind: str) -> list[str]:
    """One valid body: each required option's example (a fixed head where the kind needs one)."""
    allowed, required = SPECS[kind]
    lines = [option_docs.option(kind, o).example for o in sorted(required)]
    if "pick" in allowed:
        lines += ["layer: 1", "head: 1"]
    return lines or [option_docs.option(kind, sorted(allowed - {"id"})[0]).example]


@pytest.mark.parametrize("kind", list(SPECS))
def test_every_example_in_the_reference_parses(kind):
    allowed, required = SPECS[kind]
    parse_directive(kind, "\n".join(base_lines(kind)) + "\n", "lesson.md:1")
    for name in sorted(allowed - required):
        example = option_docs.option(kind, name).example
        clash = {"pick": ("layer", "head"), "layer": ("layer",), "head": ("head",), "pattern-only": ("layer", "head")}.get(name, (name,))
        lines = [ln for ln in base_lines(kind) if ln.split(":")[0] not in clash] + [example]
        if name == "pattern-only" and "pick" in allowed:  # it marks a head picked for a job
            lines.append("pick: {best: previous-token}")
        if kind == "attention" and name == "heads":  # a group needs a model whose heads share keys
            lines = [ln for ln in lines if not ln.startswith("model:")] + ["model: tiny-rope"]
        if kind == "guess" and name == "right":  # `right:` names one of plain choices, which have no `when`
            lines = [ln for ln in lines if not ln.startswith("choices:")] + ["choices: [Lily, ·her]"]
        try:
            parse_directive(kind, "\n".join(lines) + "\n", "lesson.md:1")
        except LessonError as e:
            pytest.fail(f"{kind}: the reference's example `{example}` does not parse: {e}")


def test_a_wrong_example_is_caught(monkeypatch):
    monkeypatch.setitem(option_docs.BY_KIND, ("softmax", "labels"), option_docs.Option("a list", "none", "labels: 7"))
    with pytest.raises(BaseException, match="does not parse"):
        test_every_example_in_the_reference_parses("softmax")


def test_every_reference_has_its_arguments_named():
    for kind, module in render.KINDS.items():
        for name, (fewest, most) in module.REFS.items():
            names = module.ARGS.get(name, ())
            assert len(names) == most, f"{kind}.{name} takes up to {most} arguments; ARGS names {names}"
            assert all(re.fullmatch(r"[a-z]+", n) for n in names), (kind, name, names)
        assert set(module.ARGS) <= set(module.REFS), kind
    text = reference.authors_reference()
    assert "`{{ id.weight(from, to) }}`" in text and "`{{ id.guess(token, sentence) }}`" in text
    assert "`{{ id.top(from, [n]) }}`" in text  # an optional argument in brackets
    assert not re.search(r"\{\{ id\.\w+\((?:\[?[a-d]\]?(?:, )?)+\) \}\}", text), "an argument left unnamed (a, b)"


def test_every_error_an_author_can_meet_is_listed():
    """Collected from the code: a message raised in any stage shows up, with its fix."""
    text = reference.authors_reference()
    errors = text[text.index("## Every error an author can meet"):]
    for problem in ("unknown directive '…'", "the file is not UTF-8 text", "is used twice on this page",
                    "is inside a blockquote", "a verdict needs a logit difference (two targets)",
                    "the nav lists …, which is not in …"):
        assert problem in errors, problem
    assert "Fix: give each figure its own id" in errors
    assert len(re.findall(r"(?m)^- ", errors)) > 150


def test_the_error_collector_reads_every_form(tmp_path):
    planted = tmp_path / "planted.py"
    planted.write_text(
        '"""A docstring that shows the form: path:line: problem. Fix: remedy."""\n'
        'def f(where, ref, x):\n'
        '    _fail(where, f"{x}: layer {x} is out of range", "use a layer from 1 to 4")\n'
        '    ref_fail(ref, "no such token", f"name one of: {x}")\n'
        '    raise LessonError(where, "plain" + " joined", "fix it")\n'
        '    raise DamagedFile(x, "has no tokens")\n'
        '    return f"{x}:{x}: the nav lists {x}. Fix: write the page"\n', encoding="utf-8")
    got = reference.messages(planted)
    assert got == [("…: layer … is out of range", "use a layer from 1 to 4"),
                   ("reference {{ … }}: no such token", "name one of: …"),
                   ("plain joined", "fix it"),
                   ("has no tokens", reference.REPAIR_FIX),
                   ("the nav lists …", "write the page")]


SOURCE_POINTER = re.compile(r"generator/|tests/|\.py\b|docstring|CONTRACT")
MODULE_POINTER = re.compile(r"\.py\b|docstring|CONTRACT")  # the reference may name a folder to restore, never code to read


def test_the_authors_guide_sends_no_author_into_source_code():
    for name, pointer in (("docs/authoring.md", SOURCE_POINTER), (reference.REFERENCE, MODULE_POINTER)):
        text = (REPO / name).read_text(encoding="utf-8")
        hits = [ln for ln in text.splitlines() if pointer.search(ln)]
        assert not hits, f"{name} points into source code: {hits[:3]}"


def test_the_readme_is_short_and_starts_with_the_two_commands():
    text = (REPO / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 150
    first_block = text[text.index("```sh"):text.index("```", text.index("```sh") + 3)]
    assert "make site" in first_block and "make test" in first_block
    for doc in ("docs/authoring.md", "docs/reference.md", "docs/architecture.md", "docs/hosting.md"):
        assert f"({doc}" in text and (REPO / doc).is_file(), doc
    assert "Where the committed checkpoint was trained" in text and ".ci/run" in text


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
