"""Issue 46's small things, in Chromium on the shared build of the real course: the other
ablation's disclosure has the caption's triangle (it showed Material's note icon, a disc cut in
half), the playground's pattern table is drawn as every other table (borders, caption on the
left), and a sentence with a character the tiny model has no token for says what its "�" tokens
are, in reader words."""

from __future__ import annotations

import pytest

from course_builds import quiet

from .test_play import STATE, status, typed

pytestmark = pytest.mark.browser

MARKER_JS = """(sel) => [...document.querySelectorAll(sel)].map(s => {
  const m = getComputedStyle(s, '::before');
  return {content: m.content, mask: m.maskImage, position: m.position}; })"""


@pytest.mark.parametrize("width", [1280, 375])
def test_the_other_ablations_disclosure_has_the_captions_triangle(open_site, server, width):
    w = open_site(viewport={"width": width, "height": 900})
    w.goto(f"{server.base}/causal.html", wait_painted=False)
    w.page.wait_for_load_state("load")
    sel = "details.course-causal-other > summary"
    caption = w.page.evaluate(MARKER_JS, ".course-prov-details > summary")[0]
    closed = w.page.evaluate(MARKER_JS, sel)
    assert closed and all(m == caption for m in closed), (closed, caption)
    assert closed[0]["content"] == '"\u25b8\u00a0"' and closed[0]["mask"] == "none"
    w.page.locator(sel).first.click()
    quiet(w.page)
    assert w.page.evaluate(MARKER_JS, sel)[0]["content"] == '"\u25be\u00a0"'
    # the summary lies inside its disclosure: nothing hangs out to the left to be cut
    inside = w.page.evaluate(f"""() => [...document.querySelectorAll({sel!r})].every(s =>
        s.getBoundingClientRect().left >= s.parentElement.getBoundingClientRect().left - 0.5)""")
    assert inside
    assert w.errors == []


TABLE_STYLE_JS = """(sel) => { const t = document.querySelector(sel); const cell = t.querySelector('tbody td');
  return {caption: getComputedStyle(t.caption).textAlign, border: getComputedStyle(cell).borderTopStyle,
          width: getComputedStyle(cell).borderTopWidth}; }"""


def test_the_playgrounds_pattern_table_looks_like_every_other_table(open_site, server):
    w = open_site()
    w.goto(f"{server.base}/attention.html")
    attention = w.page.evaluate(TABLE_STYLE_JS, ".course-fig .course-table")
    w.goto(f"{server.base}/play.html", wait_painted=False)
    typed(w.page, "Tom had a red ball. Tom had a red")
    w.page.locator(".course-play-scoretable tbody td").first.wait_for(state="attached")
    scores = w.page.evaluate(TABLE_STYLE_JS, ".course-play-scoretable")
    assert scores == attention
    assert scores["caption"] in ("left", "start") and scores["border"] == "solid"
    assert w.errors == []


def test_the_playground_says_what_its_byte_tokens_are(open_site, server):
    w = open_site()
    w.goto(f"{server.base}/play.html", wait_painted=False)
    typed(w.page, "The cat sat on the mat")
    assert "\ufffd" not in status(w.page)  # a sentence of known words: no word of bytes
    typed(w.page, "The café had a 🐱")
    w.page.wait_for_function(f"{STATE} === 'ok'")
    said = status(w.page)
    shown = w.page.evaluate("""() => [...document.querySelectorAll('#course-play .course-fig .course-tok')]
        .filter(t => t.textContent.includes('\\ufffd')).length""")
    assert shown > 0  # the page does show byte tokens for this sentence
    assert "\ufffd" in said and "a piece of a character" in said and "bytes" in said, said
    assert w.errors == []
