"""`make lesson NAME=...` (python -m generator lesson): a new page from the template, in the nav
before the glossary, that builds with real figures and numbers from the first command."""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

import pytest

from catalogue import GLOSSARY, build, mkdocs_yml
from course_builds import REPO, run, tree_digest
from generator.lessons import pages
from generator.site import scaffold

COMMON_KINDS = {"tokens", "attention", "compare", "predictions", "softmax", "stepper", "scoreboard"}
NAV = "nav:\n  - Home: index.md  # the first page\n  - Glossary: glossary.md\n"


def project(root: Path) -> Path:
    """A small course with a nav, the repository's theme, extensions and committed traces."""
    (root / "content").mkdir(parents=True)
    (root / "content" / "index.md").write_text("# Home\n\nA course about attention.\n", encoding="utf-8")
    (root / "content" / "glossary.md").write_text("# Glossary\n\n[[glossary]]\n", encoding="utf-8")
    (root / "content" / "glossary.yml").write_text(GLOSSARY, encoding="utf-8")
    (root / "mkdocs.yml").write_text(mkdocs_yml() + "\n" + NAV, encoding="utf-8")
    shutil.copytree(REPO / "traces", root / "traces")
    return root


def nav_of(config: Path) -> list:
    from mkdocs.utils.yaml import yaml_load

    with open(config, "rb") as f:
        return yaml_load(f)["nav"]


def test_the_template_has_one_figure_of_each_common_kind_each_read_by_a_reference(tmp_path):
    page = tmp_path / "new.md"
    page.write_text(scaffold.lesson_text("new"), encoding="utf-8")
    figures = pages.parse_file(page)
    assert {d.kind for d in figures} == COMMON_KINDS and len(figures) == len(COMMON_KINDS)
    text = page.read_text(encoding="utf-8")
    for d in figures:
        assert re.search(r"\{\{ " + re.escape(d.id) + r"\.\w+", text), f"no reference reads the {d.kind} figure '{d.id}'"


@pytest.mark.slow
def test_make_lesson_writes_a_page_that_builds_with_real_figures_and_keeps_the_traces(tmp_path):
    root = project(tmp_path / "course")
    traces_before = tree_digest(root / "traces")
    proc = run([sys.executable, "-m", "generator", "lesson", "my-lesson"], cwd=root, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "every sentence of my-lesson.md is traced already" in proc.stderr
    assert nav_of(root / "mkdocs.yml") == [{"Home": "index.md"}, {"My lesson": "my-lesson.md"}, {"Glossary": "glossary.md"}]
    assert "# the first page" in (root / "mkdocs.yml").read_text(encoding="utf-8"), "the nav's comments stay"
    assert tree_digest(root / "traces") == traces_before
    rc, log = build(root, "--strict=tiny")
    assert rc == 0, log
    html = (root / "site" / "my-lesson.html").read_text(encoding="utf-8")
    kinds = set(re.findall(r'<figure class="course-fig"[^>]*\sdata-kind="([\w-]+)"', html))
    assert {"attention", "compare", "predictions", "scoreboard"} <= kinds, kinds
    assert '<span class="course-pattern-only">' in html, "the scoreboard says its example grids are only patterns"
    assert "data-pending" not in html and "{{" not in html
    gives = re.search(r"·her gives (?:<[^>]+>)?(\d\.\d\d)", html)
    assert gives, "the reference's number is filled in"
    # the example shows something: ·her looks at Lily, not (as layer 3, head 3 did: 0.00) at itself
    assert float(gives[1]) >= 0.5, gives[0]


def test_a_taken_name_a_bad_name_or_a_listed_page_writes_nothing(tmp_path):
    root = project(tmp_path / "course")
    (root / "content" / "taken.md").write_text("# Taken\n", encoding="utf-8")
    before = (root / "mkdocs.yml").read_text(encoding="utf-8")
    for name, rc, line in [("taken", 1, "error: content/taken.md: exists already. Fix: choose another NAME, or edit that lesson"),
                           ("Bad Name", 2, "error: NAME='Bad Name' is not a page name. Fix: use lower-case letters, digits and hyphens, at most 64, like `make lesson NAME=my-lesson`"),
                           ("", 2, "error: NAME='' is not a page name.")]:
        proc = run([sys.executable, "-m", "generator", "lesson", name], cwd=root, timeout=120)
        assert proc.returncode == rc and proc.stderr.startswith(line), proc.stderr
        assert "Traceback" not in proc.stderr
    (root / "mkdocs.yml").write_text(before.replace("  - Glossary: glossary.md", "  - Glossary: glossary.md\n  - Later: later.md"), encoding="utf-8")
    proc = run([sys.executable, "-m", "generator", "lesson", "later"], cwd=root, timeout=120)
    assert proc.returncode == 1 and "the nav lists later.md already" in proc.stderr
    assert sorted(p.name for p in (root / "content").glob("*.md")) == ["glossary.md", "index.md", "taken.md"]


def test_the_nav_gets_the_page_before_the_glossary_or_last():
    assert scaffold.add_to_nav(NAV, "m.yml", 'A "quoted" one', "a.md") == (
        'nav:\n  - Home: index.md  # the first page\n  - "A \\"quoted\\" one": a.md\n  - Glossary: glossary.md\n', True)
    assert scaffold.add_to_nav("site_name: x\nnav:\n    - Home: index.md\ntheme: {}\n", "m.yml", "New", "new.md") == (
        'site_name: x\nnav:\n    - Home: index.md\n    - "New": new.md\ntheme: {}\n', False)
    with pytest.raises(scaffold.ScaffoldError, match="has no `nav:` block"):
        scaffold.add_to_nav("site_name: x\n", "m.yml", "New", "new.md")
    # a glossary inside a section: the page goes at the top level, after the section, never
    # between the section's name and its pages
    sectioned = "nav:\n  - Home: index.md\n  - Reference:\n      - Glossary: glossary.md\ntheme: {}\n"
    text, before = scaffold.add_to_nav(sectioned, "m.yml", "New", "new.md")
    assert not before and scaffold.nav_of(text, "m.yml") == [{"Home": "index.md"}, {"Reference": [{"Glossary": "glossary.md"}]}, {"New": "new.md"}]


def test_a_broken_nav_a_long_name_or_a_reserved_one_writes_nothing(tmp_path):
    root = project(tmp_path / "course")
    before = (root / "mkdocs.yml").read_text(encoding="utf-8")
    for name, config, rc, line in [
        ("fine", before.replace("  - Glossary: glossary.md", "  - [broken"), 1, "error: mkdocs.yml: is not valid YAML ("),
        ("fine", before.replace("nav:", "nav: 42\nold_nav:"), 1, "error: mkdocs.yml: has no `nav:` block to add the page to."),
        ("a" * 300, before, 2, "error: NAME='" + "a" * 64 + "…' is not a page name."),
        ("404", before, 2, "error: NAME='404' is taken by the site's own page for a missing address (404.html)."),
    ]:
        (root / "mkdocs.yml").write_text(config, encoding="utf-8")
        proc = run([sys.executable, "-m", "generator", "lesson", name], cwd=root, timeout=120)
        assert proc.returncode == rc and proc.stderr.startswith(line) and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
        assert (root / "mkdocs.yml").read_text(encoding="utf-8") == config
        assert sorted(p.name for p in (root / "content").glob("*.md")) == ["glossary.md", "index.md"]
