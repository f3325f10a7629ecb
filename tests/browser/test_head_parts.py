"""Per-head trace parts (issue 29 item 12): a page loads only its shown heads' parts before the
reader touches it, a head switch loads exactly that head's part (as a classic script, so file://
works) and redraws from it, "All heads" loads weights.js, courseReady() every head, and a
one-file chapter loads none (CONTRACT.md, "Files in the built site")."""

from __future__ import annotations

import re
import shutil
from urllib.parse import unquote

import pytest

from . import harness
from course_builds import quiet

from .conftest import page_opener

pytestmark = pytest.mark.browser

FIG1 = "#fig-1"
PART_RE = re.compile(r"/traces/[a-z0-9-]+/([0-9a-f]+)/([0-9]+-[0-9]+|weights)\.js$")
SHOWN_JS = """() => Array.from(document.querySelectorAll('[data-parts]')).map(el => {
  const fig = el.closest('figure.course-fig');
  return [el.getAttribute('data-trace-key'), +fig.getAttribute('data-layer'), +fig.getAttribute('data-head')];
})"""


def part_requests(w) -> list[tuple[str, str]]:
    """(key, "l-h" or "weights") of every trace part the page asked for, in order."""
    out = []
    for url in w.requests:
        m = PART_RE.search(unquote(url).split("?", 1)[0])
        if m:
            out.append((m.group(1), m.group(2)))
    return out


def settled(page) -> None:
    """The idle work after the first paint (the shown heads' parts) has run, and the parts it
    asked for have loaded."""
    quiet(page)


def shown_parts(page) -> set[tuple[str, str]]:
    return {(key, f"{l}-{h}") for key, l, h in page.evaluate(SHOWN_JS)}


def test_before_interaction_only_the_shown_heads_parts_load(open_page, harness_url, scheme):
    w = open_page()
    page = w.goto(harness_url(scheme))
    settled(page)
    got = part_requests(w)
    shown = shown_parts(page)
    assert got and set(got) <= shown, f"parts of heads nobody showed: {set(got) - shown}"
    assert len(got) == len(set(got)), "a part was asked for twice"
    assert not any(name == "weights" for _, name in got)
    assert not w.errors, w.errors


@pytest.mark.parametrize("scheme_", ["http", "file"])
def test_a_head_switch_loads_exactly_that_heads_part_and_redraws_from_it(open_page, harness_url, harness_site, scheme_):
    doc = harness_site[1]["lily"]
    w = open_page()
    page = w.goto(harness_url(scheme_, page="lazy.html"))  # no idle loads: every request is the switch's
    settled(page)
    assert part_requests(w) == []
    key = page.get_attribute(FIG1, "data-trace-key")
    h0 = int(page.get_attribute(FIG1, "data-head"))
    assert h0 != 1 and page.get_attribute(FIG1, "data-layer") != "2"
    assert page.evaluate("trace.layers[2].heads[1].weights") is None  # not in the page
    page.select_option(f"{FIG1} select[data-control=layer]", "2")
    page.select_option(f"{FIG1} select[data-control=head]", "1")
    n = len(doc["tokens"])
    expected = harness.summary_text(doc, 2, 1, n - 1)
    page.wait_for_function("([s, t]) => document.querySelector(s).textContent === t", arg=[f"{FIG1} .course-summary", expected])
    settled(page)
    # the layer change showed layer 3 with the old head, then the head change (2, 1): each head's
    # part once, nothing else
    switched = [(key, f"2-{h0}"), (key, "2-1")]
    assert part_requests(w) == switched
    grid = doc["layers"][2]["heads"][1]["weights"]
    z = page.evaluate("document.querySelector('#fig-1 .js-plotly-plot').data[0].z")
    assert z[n - 1] == grid[n - 1]
    assert page.evaluate("trace.layers[2].heads[1].weights") == grid
    # the head's arrays came with it, decoded to the trace file's numbers
    head = doc["layers"][2]["heads"][1]
    got = page.evaluate("(() => { const h = trace.layers[2].heads[1]; return {q: h.q, k: h.k, v: h.v, scores: h.scores, out: h.out}; })()")
    assert got == {f: head[f] for f in ("q", "k", "v", "scores", "out")}
    assert page.evaluate("trace.layers[0].heads[0].q === undefined")  # a head nobody showed
    # back to a head already in: nothing more is asked for
    page.select_option(f"{FIG1} select[data-control=head]", str(h0))
    page.wait_for_function("([s, t]) => document.querySelector(s).textContent === t",
                           arg=[f"{FIG1} .course-summary", harness.summary_text(doc, 2, h0, n - 1)])
    assert part_requests(w) == switched
    assert not w.errors, w.errors


def test_all_heads_loads_weights_js_and_courseready_every_head(open_page, harness_url, harness_site):
    doc = harness_site[1]["lily"]
    w = open_page()
    page = w.goto(harness_url("file", page="lazy.html"))
    key = page.get_attribute(FIG1, "data-trace-key")
    page.click(f"{FIG1} button[data-action=heads]")
    page.wait_for_selector(f"{FIG1} .course-mini", state="visible")
    assert part_requests(w) == [(key, "weights")]
    got = page.evaluate("trace.layers.map(l => l.heads.map(h => h.weights))")
    assert got == [[h["weights"] for h in layer["heads"]] for layer in doc["layers"]]
    # courseReady (the Code tabs, the console): every head of every trace, each part once
    page.evaluate("courseReady()")
    all_heads = page.evaluate("""async () => { await courseReady();
      return traces.every(t => t.layers.every(l => l.attnConcat && l.heads.every(h => h.q && h.scaledMasked))); }""")
    assert all_heads
    asked = part_requests(w)
    assert len(asked) == len(set(asked))
    n_heads = doc["meta"]["nLayer"] * doc["meta"]["nHead"]
    assert sum(1 for k, name in asked if k == key and name != "weights") == n_heads
    assert page.evaluate("trace.layers[1].attnConcat") == doc["layers"][1]["attnConcat"]
    assert not w.errors, w.errors


def test_a_deep_link_loads_the_linked_heads_part(open_page, harness_url, harness_site):
    doc = harness_site[1]["lily"]
    w = open_page()
    page = w.goto(harness_url("file", page="lazy.html", hash="#fig-1:layer=1,head=4,token=2"))
    page.wait_for_function("([s, t]) => document.querySelector(s).textContent === t",
                           arg=[f"{FIG1} .course-summary", harness.summary_text(doc, 0, 3, 2)])
    key = page.get_attribute(FIG1, "data-trace-key")
    assert (key, "0-3") in part_requests(w)
    assert not any(name == "weights" for _, name in part_requests(w))


# ------------------------------------------------------------------ the built course


def test_built_chapter_loads_only_its_shown_heads(course, open_site, server):
    w = open_site()
    page = w.goto(f"{server.base}/attention.html")
    settled(page)
    got = part_requests(w)
    shown = shown_parts(page)
    assert got and set(got) <= shown, f"parts of heads nobody showed: {set(got) - shown}"
    assert not w.errors, w.errors


def test_one_file_chapter_asks_for_no_part(course, browser, tmp_path):

    alone = tmp_path / "attention.html"
    shutil.copy(course / "build" / "site" / "downloads" / "attention.html", alone)
    with page_opener(browser, set()) as open_:
        w = open_()
        page = w.goto(alone.as_uri())
        page.wait_for_selector("#fig-1 .course-plot .main-svg")
        # another head, All heads, then every head: all of it is in the file
        page.select_option(f"{FIG1} select[data-control=head]", index=1)
        page.click(f"{FIG1} button[data-action=heads]")
        assert page.evaluate("async () => { await courseReady(); return traces.every(t => t.layers.every(l => l.heads.every(h => h.q))); }")
        assert part_requests(w) == []
        assert [u for u in w.requests if not u.startswith("data:")] == [alone.as_uri()]
        assert not w.errors, w.errors
