"""Reader language on the built course: a reader's page names the model the way a
reader knows it, keeps the revision, versions and trace files behind a disclosure, and shows no
build command or repository path (those go to the build log). The course is built once per
session by course_builds.shared_course, from the repository's content/."""

from __future__ import annotations

import html
import re

import pytest

from course_builds import INJECTION_PAGE_NAME, shared_course

# What an author types, never what a reader needs: nowhere on a page.
COMMANDS = {
    "a make target": r"\bmake (?:traces|site|serve|test|bench|tiny-model|vendor|assets)\b",
    "the package": r"\bgenerator/",
    "an environment variable": r"\bCOURSE_[A-Z]",
}
# Files: only behind a provenance disclosure (<details>), where the revision and versions are.
DEVELOPER_TEXT = COMMANDS | {
    "the traces folder": r"\btraces/",
    "a file path": r"[\w./-]+\.(?:json|py|yml|yaml|safetensors|txt)\b",
}


@pytest.fixture(scope="module")
def site():
    return shared_course() / "build" / "site"


def visible_text(fragment: str) -> str:
    """What a reader reads: no scripts, styles or head, no attribute values (link targets)."""
    fragment = re.sub(r"<(script|style|head)\b.*?</\1>", " ", fragment, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", " ", fragment))


def developer_text(fragment: str) -> list[str]:
    """Commands anywhere in an HTML fragment's visible text, paths outside <details>."""
    def hits(text: str, patterns: dict) -> list[str]:
        return [f"{what}: …{text[max(0, m.start() - 40):m.end() + 20]}…" for what, pattern in patterns.items() for m in re.finditer(pattern, text)]

    return hits(visible_text(fragment), COMMANDS) + hits(visible_text(re.sub(r"<details\b.*?</details>", " ", fragment, flags=re.S)), DEVELOPER_TEXT)


def lesson_pages(site):
    return [p for p in sorted(site.glob("*.html")) if p.name not in ("404.html", INJECTION_PAGE_NAME.replace(".md", ".html"))]


def test_figures_show_no_build_commands_or_paths(site):
    """Everything the generator writes into a page (figures, captions, pending boxes) on every page."""
    found = []
    for page in lesson_pages(site):
        for fig in re.findall(r'<figure class="course-fig.*?</figure>', page.read_text(encoding="utf-8"), re.S):
            found += [f"{page.name}: {hit}" for hit in developer_text(fig)]
    assert found == []


@pytest.mark.parametrize("name", ["attention.html", "glossary.html", "heads.html", "index.html", "training.html"])
def test_whole_pages_show_no_build_commands_or_paths(site, name):
    assert developer_text((site / name).read_text(encoding="utf-8")) == []


# A reader has the site or a download, not the source's history: no version-control words.
VERSION_CONTROL = r"(?i)\b(?:committed|uncommitted|commits?|checkout|repository|repo|git)\b"


def test_no_page_speaks_of_commits_or_checkouts(site):
    """Every lesson page, prose, captions and code tabs, outside the provenance disclosure (which
    holds the revision): "the committed tokenizer" means nothing to a reader."""
    found = []
    for page in lesson_pages(site):
        text = visible_text(re.sub(r"<details\b.*?</details>", " ", page.read_text(encoding="utf-8"), flags=re.S))
        found += [f"{page.name}: …{' '.join(text[max(0, m.start() - 40):m.end() + 20].split())}…" for m in re.finditer(VERSION_CONTROL, text)]
    assert found == []


def test_no_page_shows_a_model_id_as_a_name_or_a_markdown_escape(site):
    """A reader meets "the course's tiny model" or "GPT-2 small", never the registry's ids
    ("model tiny"), and never a backslash that Markdown left in (a `\\|` in a table's code span)."""
    found = []
    for page in lesson_pages(site):
        text = visible_text(page.read_text(encoding="utf-8"))
        found += [f"{page.name}: …{text[max(0, m.start() - 40):m.end() + 20]}…" for m in re.finditer(r"\bmodel (?:tiny|gpt2)\b|\\\|", text)]
    assert found == []


SCRIPT_SRC = re.compile(r'<script\b([^>]*)\bsrc="([^"]+)"')


def script_order(page: str) -> list[tuple[str, bool]]:
    """The page's script files in document order, each with whether it is deferred."""
    return [(src.rsplit("/", 1)[-1], " defer" in " " + attrs) for attrs, src in SCRIPT_SRC.findall(page)]


def check_script_order(page: str) -> list[str]:
    """What is wrong with a built page's scripts (overrides/main.html): the course's run in
    order, undeferred, before Material's bundle, which is deferred."""
    got = script_order(page)
    names = [n for n, _ in got]
    problems = []
    course = ["plotly-cartesian.min.js", "colorscale.js", "course.js"]
    if [n for n in names if n in course] != course:
        problems.append(f"the course's scripts are not there in order: {names}")
    bundles = [i for i, n in enumerate(names) if re.fullmatch(r"bundle\.[0-9a-f]+\.min\.js", n)]
    if len(bundles) != 1:
        problems.append(f"not one Material bundle: {names}")
    else:
        if not got[bundles[0]][1]:
            problems.append("Material's bundle is not deferred")
        if any(names.index(c) > bundles[0] for c in course if c in names):
            problems.append(f"a course script comes after Material's bundle: {names}")
    problems += [f"{n} is deferred" for n, deferred in got if n in course and deferred]
    return problems


def test_the_course_scripts_run_before_materials_deferred_bundle(site):
    assert check_script_order((site / "attention.html").read_text(encoding="utf-8")) == []
    material_order = '<script src="b/bundle.ab12.min.js"></script><script src="p/plotly-cartesian.min.js"></script>' \
                     '<script src="c/colorscale.js"></script><script src="c/course.js"></script>'
    assert {"Material's bundle is not deferred", "a course script comes after Material's bundle: "
            "['bundle.ab12.min.js', 'plotly-cartesian.min.js', 'colorscale.js', 'course.js']"} <= set(check_script_order(material_order))


COURSE_SCRIPTS_RE = re.compile(r"<!-- course:scripts -->(.*?)<!-- /course:scripts -->", re.S)
FIGURE_OPEN_RE = re.compile(r'<figure class="([^"]*)" id="(fig-\d+)" data-kind="([a-z]+)"([^>]*)>')


def course_scripts_place(page: str) -> tuple[str | None, bool]:
    """Where a built page runs the course's scripts: (the id of the figure they follow, or None,
    whether they come after the article). Fails unless the page has exactly one set of them."""
    blocks = list(COURSE_SCRIPTS_RE.finditer(page))
    assert len(blocks) == 1, f"{len(blocks)} sets of course scripts"
    # Plotly only on a page that draws a plot (overrides/main.html): a figure's plot box, or the
    # playground, which draws its figure in the page
    plotly = ["plotly-cartesian.min.js"] if ('class="course-plot' in page or 'id="course-play"' in page) else []
    assert [s.rsplit("/", 1)[-1] for s in re.findall(r'<script src="([^"]+)"', blocks[0].group(1))] == \
        plotly + ["colorscale.js", "course.js"]
    before = page[:blocks[0].start()]
    after_article = "</article>" in before
    figures = list(FIGURE_OPEN_RE.finditer(before))
    follows = figures[-1].group(2) if figures and before.rstrip().endswith("</figure>") else None
    return follows, after_article


def first_drawn_heatmap(page: str) -> str | None:
    for m in FIGURE_OPEN_RE.finditer(page):
        if m.group(3) in ("attention", "compare") and "course-pending" not in m.group(1) and "data-pending" not in m.group(4):
            return m.group(2)
    return None


def test_the_course_scripts_follow_each_pages_first_heatmap_with_numbers(site):
    """course.js draws the first heatmap while the rest of the chapter is still parsed; a page
    with no drawn heatmap (GPT-2's, pending here; the index) runs it after its article."""
    seen = set()
    for path in sorted(site.glob("*.html")):
        page = path.read_text(encoding="utf-8")
        first = first_drawn_heatmap(page)
        follows, after_article = course_scripts_place(page)
        if first is None:
            assert follows is None and after_article, path.name
        else:
            assert (follows, after_article) == (first, False), path.name
            seen.add(path.name)
    assert {"attention.html", "heads.html"} <= seen, "a chapter with heatmaps runs its scripts at the end"
    # heads.html: the scoreboard comes first, and its first example is the first heatmap
    assert course_scripts_place((site / "heads.html").read_text(encoding="utf-8"))[0] != "fig-1"


def test_provenance_reads_as_a_reader_would_say_it(site):
    page = (site / "attention.html").read_text(encoding="utf-8")
    captions = re.findall(r'<figcaption class="course-prov">(.*?)</figcaption>', page, re.S)
    assert all("Tiny model, trained for this course." in c and "course-prov-details" in c for c in captions)
    traced = [c for c in captions if " download>" in c]
    assert len(traced) >= 5, "every traced figure of the chapter links its trace"
    for cap in traced:
        outside = visible_text(re.sub(r"<details.*?</details>", "", cap, flags=re.S))
        assert "Tiny model, trained for this course." in outside and "revision" not in outside and ".json" not in cap.split("<details")[0]
        details = re.search(r"<details class=\"course-prov-details\"><summary>Details and data</summary>(.*?)</details>", cap, re.S).group(1)
        assert re.search(r"revision [0-9a-f]{12}", details) and "torch " in details
        assert re.search(r'<a href="assets/generated/traces/tiny/[0-9a-f]+\.json" download>', details)


def test_weights_figures_name_their_model_as_a_reader_would(site):
    """Chapter 2's figures read the weights, not a trace: the same reader name, the revision in
    the details."""
    page = (site / "vectors.html").read_text(encoding="utf-8")
    captions = re.findall(r'<figcaption class="course-prov">(.*?)</figcaption>', page, re.S)
    assert len(captions) >= 3
    for cap in captions:
        outside = visible_text(re.sub(r"<details.*?</details>", "", cap, flags=re.S))
        assert "Tiny model, trained for this course." in outside and "revision" not in outside
        details = re.search(r'<details class="course-prov-details"><summary>Details</summary>(.*?)</details>', cap, re.S).group(1)
        assert re.search(r"revision [0-9a-f]{12}", details)


def test_the_glossary_lists_no_inflections(site):
    page = visible_text((site / "glossary.html").read_text(encoding="utf-8"))
    assert "Also written" not in page and "Attention head" in page
