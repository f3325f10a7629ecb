"""Injection: hostile sentences (course_builds.INJECTIONS: `</script><img src=x
onerror=alert(1)>`, quotes, backslashes, `{{ }}`, `<script>`, U+202E, emoji, combining marks),
traced with the tiny model and built into a page of the shared course, render as text
everywhere: grid labels, tables, summaries, Plotly ticks and hover text, the console `trace`,
search results and the downloads. Any script they run sets window.__pwned or opens a dialog."""

from __future__ import annotations

import re
import zipfile

import pytest

from generator.render.format import label_tokens, token_label
from course_builds import INJECTIONS, quiet

from .conftest import Watched

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PAGE = "injection.html"
RAW_PAYLOADS = ("<img src=x", "<img src=y", "<script>window.__pwned", "onerror=alert(1)>")

TRAP = """
window.__pwnedHits = [];
Object.defineProperty(window, '__pwned', {configurable: false,
  get() { return undefined; }, set(v) { window.__pwnedHits.push(String(v)); }});
"""


@pytest.fixture
def trapped(browser):
    made: list[Watched] = []

    def _open(allowed: set[str]) -> Watched:
        context = browser.new_context(viewport={"width": 1200, "height": 900})
        context.add_init_script(TRAP)
        w = Watched(context, context.new_page(), allowed)
        made.append(w)
        return w

    yield _open
    for w in made:
        w.context.close()


# ---------------------------------------------------------------- the files


def test_no_payload_is_written_raw_into_any_file(course):
    """Pages, one-file chapter, zip copy, trace parts and search index: the payloads only ever
    appear escaped."""
    site = course / "build" / "site"
    files = {
        "site page": (site / PAGE).read_text(encoding="utf-8"),
        "one-file chapter": (site / "downloads" / PAGE).read_text(encoding="utf-8"),
        "search index": (site / "search" / "search_index.json").read_text(encoding="utf-8"),
    }
    with zipfile.ZipFile(course / "build" / "downloads" / "course-offline.zip") as zf:
        files["zip copy"] = zf.read(f"attention-course/{PAGE}").decode("utf-8")
    for part in (site / "assets" / "generated" / "traces").rglob("*.js"):
        text = part.read_text(encoding="utf-8")
        assert "<" not in text and ">" not in text and "&" not in text.replace("\\u0026", ""), f"{part.name}: unescaped < > &"
    for what, text in files.items():
        for payload in RAW_PAYLOADS:
            assert payload not in text, f"{what}: {payload!r} is written raw"
    assert "&lt;img src=x onerror=alert(1)&gt;" in files["site page"], "the sentence is shown (escaped) on the page"


# ---------------------------------------------------------------- in the browser


def token_displays(page) -> list[str]:
    """The labels the page must show: each token's display text, a repeated one with its
    position as a subscript (render/format.py's rule, which course.js follows)."""
    tokens = page.evaluate("traces[0].tokens.map(t => ({display: t.display, text: t.text}))")  # text: ‹eot› is shown for <|endoftext|>
    return [token_label(t) for t in label_tokens(tokens)]


# every image in the page has loaded or failed (an injected <img src=x> has fired its onerror)
IMAGES_DONE = "() => [...document.images].every(i => i.complete)"


def check_page(w: Watched, url: str) -> None:
    page = w.goto(url)
    page.wait_for_selector("#fig-1 .course-plot .main-svg")
    # interact: every redraw path (react, tables, summary, top-3, small multiples, hover)
    page.locator("#fig-1 select[data-control=head]").select_option(index=1)
    page.locator("#fig-1 select[data-control=token]").select_option(index=3)
    page.locator("#fig-1 button[data-action=heads]").click()
    page.locator("#fig-1 .course-heads").wait_for(state="visible")
    plot = page.locator("#fig-1 .course-plot .nsewdrag").first
    box = plot.bounding_box()
    page.mouse.move(box["x"] + box["width"] * 0.3, box["y"] + box["height"] * 0.8)
    quiet(page)
    hover = page.locator("#fig-1 .hoverlayer").first.text_content() or ""
    page.wait_for_function(IMAGES_DONE)  # any injected <img> failed to load and fired onerror
    quiet(page)

    assert page.evaluate("window.__pwnedHits") == [], "a payload ran"
    assert w.dialogs == [], f"a payload opened a dialog: {w.dialogs}"
    assert page.locator("img[src=x], img[src=y], #fig-1 script:not([type])").count() == 0, "a payload became an element"

    # the console trace holds the sentence as data
    texts = page.evaluate("traces.map(t => t.text)")
    assert INJECTIONS[0] in texts and INJECTIONS[1] in texts and INJECTIONS[2] in texts
    displays = token_displays(page)
    # tables: the column headers are exactly the tokens, as text
    heads = page.locator("#fig-1 table.course-table thead th[scope=col]").all_text_contents()
    heads = [h.strip() for h in heads]
    assert heads[len(heads) - len(displays):] == displays and len(heads) - len(displays) in (0, 1)  # a corner cell may lead
    tokens = page.evaluate("traces[0].tokens")
    assert tokens[0]["text"] == "<|endoftext|>" and "".join(t["text"] for t in tokens[1:]) == INJECTIONS[0]
    # summary: tokens as text
    summary = page.locator("#fig-1 .course-summary").inner_text()
    assert summary.startswith("In layer 1, head 2, ") and any(d in summary for d in displays if len(d) > 1)
    # the axes: every label is a token's display text (no double escaping, no markup eaten)
    ticks = page.locator("#fig-1 .course-plot .course-axis-labels :is(.course-axis-keys, .course-axis-queries) text").all_text_contents()
    assert ticks and set(ticks) <= set(displays), f"tick labels not among the tokens: {sorted(set(ticks) - set(displays))[:8]}"
    if hover:
        assert re.search(r"→|cannot look ahead", hover), hover
        assert "&lt;" not in hover and "&amp;" not in hover, f"hover text is double-escaped: {hover!r}"
    assert any("<" in d for d in displays), "the tokenizer kept no '<' in any token; the test proves less than it should"


def test_hostile_tokens_render_as_text_over_http(course, server, trapped):
    w = trapped({f"127.0.0.1:{server.port}"})
    check_page(w, f"{server.base}/{PAGE}")
    assert w.external == []
    assert not w.errors, w.errors


def test_hostile_tokens_render_as_text_in_the_one_file_chapter(course, trapped):
    w = trapped(set())
    check_page(w, (course / "build" / "site" / "downloads" / PAGE).as_uri())
    assert w.external == []
    assert not w.errors, w.errors


def test_hostile_sentence_in_search_results_is_text(course, server, trapped):
    w = trapped({f"127.0.0.1:{server.port}"})
    page = w.goto(f"{server.base}/index.html", wait_painted=False)
    page.locator("input.md-search__input").press_sequentially("onerror", delay=20)
    page.wait_for_selector(".md-search-result__item")
    page.wait_for_function(IMAGES_DONE)
    quiet(page)
    assert page.evaluate("window.__pwnedHits") == [] and w.dialogs == []
    assert page.locator(".md-search-result img[src=x], .md-search-result img[src=y]").count() == 0


def test_the_trap_catches_a_payload_that_does_run(trapped):
    """The control: the same payloads, inserted as HTML on purpose, are caught."""
    w = trapped(set())
    w.page.set_content("<p>control</p>")
    w.page.evaluate("html => document.body.insertAdjacentHTML('beforeend', html)", INJECTIONS[0])
    w.page.wait_for_function(IMAGES_DONE)
    w.page.wait_for_function("() => window.__pwnedHits.length > 0")
    quiet(w.page)
    assert w.page.evaluate("window.__pwnedHits") == ["1"]
    assert w.dialogs == ["alert: 1"]
