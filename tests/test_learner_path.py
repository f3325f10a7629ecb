"""Issue 45, "The learner's path": chapters a learner can finish, and tabs that hold what their
name says. Every chapter reads in at most 16 minutes by the site's own count; no figure lives only
in a tab a reader must open (the Story view carries the argument); a Code tab's Python view is
short code a reader can run, with the checks against the trace's rounding left to the notebooks."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import REPO
from course_builds import shared_course
from generator.lessons.directives import SPECS
from generator.lessons.source import walk_lines
from generator.markdown import python_view
from generator.markdown.lesson import tabs_read
from generator.site import scaffold
from generator.notebooks.steps import STEPS

MAX_MINUTES = 16
CONTENT = REPO / "content"


def nav_pages() -> list[str]:
    """The content pages of mkdocs.yml's nav, in order, read as MkDocs reads it."""
    nav = scaffold.nav_of((REPO / "mkdocs.yml").read_text(encoding="utf-8"), "mkdocs.yml")
    return [page for entry in nav for page in entry.values()]


@pytest.fixture(scope="module")
def site() -> Path:
    return shared_course() / "build" / "site"


def test_every_chapter_reads_in_at_most_16_minutes(site):
    read = {}
    for page in nav_pages():
        html = (site / page.replace(".md", ".html")).read_text(encoding="utf-8")
        m = re.search(r"(\d+) min read", html)
        if m:
            read[page] = int(m.group(1))
    assert {"attention.md", "causal.md", "circuits.md", "gpt2.md", "heads.md", "training.md"} <= set(read), read
    assert {p: n for p, n in read.items() if n > MAX_MINUTES} == {}


def later_tab_figures(text: str) -> list[int]:
    """The lines of the course figures that open inside a second or later content tab."""
    lines = text.split("\n")
    read = [r for _line, r in tabs_read(lines)]
    return [i + 1 for i, _line, role, fence in walk_lines(lines)
            if role == "open" and fence is not None and (fence["lang"] or "") in SPECS and not read[i]]


def test_no_figure_lives_only_in_a_later_tab():
    """A reader stays on the first tab (Story); a figure under Numbers, Formula or Code is one the
    argument cannot lean on. (Chapter 3's "Is it only taking the first word?" lived under Numbers.)"""
    found = {p.name: later_tab_figures(p.read_text(encoding="utf-8")) for p in sorted(CONTENT.glob("*.md"))}
    assert {name: lines for name, lines in found.items() if lines} == {}


def test_the_check_finds_a_figure_planted_in_a_numbers_tab():
    planted = '''# Page

=== "Story"

    Words.

=== "Numbers"

    ```softmax
    scores: [1, 0]
    ```
'''
    assert later_tab_figures(planted) == [9]
    assert later_tab_figures(planted.replace('=== "Story"\n\n    Words.\n\n', "")) == []


VERIFICATION = re.compile(r"\b(?:expect|check)\(|\bhalf\b|\brounding\b")


def test_code_tabs_show_no_verification_code():
    """The Python views the chapters show: no `expect(…)`, `check(…)` or rounding bounds (the
    notebook cells around them keep those)."""
    shown = {name for p in CONTENT.glob("*.md") for line in p.read_text(encoding="utf-8").splitlines()
             if (m := python_view.MARK_RE.match(line)) for name in m.group(2).split()}
    assert shown, "no chapter shows a Python view"
    assert {name: VERIFICATION.findall(STEPS[name]) for name in sorted(shown) if VERIFICATION.search(STEPS[name])} == {}


def test_rounding_asides_are_in_the_notebook_not_in_the_step_through(site):
    page = (site / "attention.html").read_text(encoding="utf-8")
    stepper = page[page.index('data-kind="stepper"'):]
    stepper = stepper[: stepper.index("</figure>")]
    for aside in ("as shown here", "where the table has", "unrounded"):
        assert aside not in stepper, aside
    notebook = (site / "notebooks" / "attention.ipynb").read_text(encoding="utf-8")
    assert "## The made-up example, by hand" in notebook and "where the table has" in notebook


def test_the_home_pages_chapter_table_lists_every_nav_page_in_nav_order():
    """The home page's table of chapters is written by hand: a page added to the nav (the playground,
    an "After chapter" page, a new chapter) must be added to it too, in the nav's order. Home and
    the glossary are the exceptions (the home page links the glossary in the text below)."""
    text = (CONTENT / "index.md").read_text(encoding="utf-8")
    after = text.split("\n## Chapters\n", 1)[1].lstrip("\n").splitlines()
    rows = [line for line in after[:next((i for i, line in enumerate(after) if not line.startswith("|")), len(after))]][2:]
    linked = [m.group(1) for row in rows for m in [re.search(r"\]\(([^)#]+\.md)\)", row.split("|")[1])] if m]
    wanted = [p for p in nav_pages() if p not in ("index.md", "glossary.md")]
    assert linked == wanted, f"content/index.md's chapter table lists {linked}, the nav {wanted}"
