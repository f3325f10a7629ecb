"""Prose numbers point at their cells (issue 29, item 13), read from the session's shared build of
the real course (course_builds.shared_course): every weight a lesson's prose refers to, of a
traced attention or compare figure, and every scoreboard score, is bound to its figure's cell
(render/ref_binding.py), and the bound cell, read from the figure's own JSON data (or its score
table), formatted as the prose formats it, is the number the prose shows. References inside code
stay plain code text. No browser (tests/browser/test_prose_refs.py drives the page)."""

from __future__ import annotations

import html
import json
import re
import textwrap

import pytest

from course_builds import shared_course

from generator.lessons import refs
from generator.lessons.directives import SPECS, load_body
from generator.lessons.source import walk_lines
from generator.render.format import token_spoken

CONTENT_PAGES = ("attention", "causal", "circuits", "heads", "training", "vectors", "tokens", "gpt2", "index")
SPAN_RE = re.compile(r'<span class="course-ref course-ref-(?P<level>[a-z]+)" tabindex="0" (?P<attrs>[^>]*)>')
SPAN_TAG_RE = re.compile(r"<span\b|</span>")
ATTR_RE = re.compile(r'([a-z-]+)="([^"]*)"')
TAG_RE = re.compile(r"<[^>]+>")


@pytest.fixture(scope="module")
def site():
    return shared_course() / "build" / "site"


def spans(page_html: str) -> list[dict]:
    """Every bound number of a page: its attributes, its text (the inner spans of tokens read as
    their text) and what a screen reader hears after it."""
    out = []
    for m in SPAN_RE.finditer(page_html):
        depth, end = 1, m.end()
        for t in SPAN_TAG_RE.finditer(page_html, m.end()):
            depth += 1 if t.group() == "<span" else -1
            if not depth:
                end = t.start()
                break
        attrs = {k: html.unescape(v) for k, v in ATTR_RE.findall(m["attrs"])}
        out.append(attrs | {"level": m["level"], "text": html.unescape(TAG_RE.sub("", page_html[m.end():end])), "says": attrs["aria-description"]})
    return out


def figure_html(page_html: str, fid: str) -> str:
    """The figure's HTML, to its own </figure> (a scoreboard holds its example figures)."""
    start = page_html.index(f'<figure class="course-fig" id="{fid}"')
    depth = 0
    for tag in re.finditer(r"<figure\b|</figure>", page_html[start:]):
        depth += 1 if tag.group() == "<figure" else -1
        if not depth:
            return page_html[start: start + tag.start()]
    raise AssertionError(f"{fid} is not closed")


def without_inner_figures(fig: str) -> str:
    """A figure's HTML less the figures inside it, so that its course-data is its own."""
    return fig[:1] + re.sub(r"(?s)<figure\b.*?</figure>", "", fig[1:])


def figure_data(page_html: str, fid: str) -> dict:
    fig = without_inner_figures(figure_html(page_html, fid))
    m = re.search(r'<script type="application/json" class="course-data">(.*?)</script>', fig, re.S)
    return json.loads(m[1])


def prose_cell_refs(text: str) -> list[refs.Ref]:
    """The references a page's prose (not its code) makes to a cell of a traced figure: weights of
    the tiny model's attention and compare figures, scores of its scoreboards."""
    kinds, body, fence = {}, [], None
    for _i, line, role, m in walk_lines(text.split("\n")):
        if role == "open":
            fence, body = m, []
        elif role == "body":
            body.append(line)
        elif role == "close" and (fence["lang"] or "") in SPECS:
            data = load_body(textwrap.dedent("\n".join(body)), "", fence["lang"])
            if isinstance(data, dict) and data.get("id"):
                kinds[data["id"]] = (fence["lang"], data.get("model", "tiny"))
    out = []
    for _i, line, role, _m in walk_lines(text.split("\n")):
        if role != "prose":
            continue
        for rm in refs.REF_RE.finditer(refs.strip_code_spans(line)):
            r = refs.parse_ref(rm["body"], "page")
            kind, model = kinds.get(r.target, (None, None))
            if model == "tiny" and ((kind in ("attention", "compare") and r.name == "weight") or (kind == "scoreboard" and r.name == "score")):
                out.append(r)
    return out


def test_every_cell_reference_is_bound_and_shows_its_cells_number(site):
    from course_builds import REPO

    checked = 0
    for name in CONTENT_PAGES:
        page = (site / f"{name}.html").read_text(encoding="utf-8")
        source = (REPO / "content" / f"{name}.md").read_text(encoding="utf-8")
        wanted = prose_cell_refs(source)
        cells = [s for s in spans(page) if s["level"] == "cell"]
        assert len(cells) == len(wanted), f"{name}: {len(wanted)} cell references in the prose, {len(cells)} bound to a cell"
        for s in cells:
            fid, layer, head = s["data-fig"], int(s["data-layer"]), int(s["data-head"])
            if "data-score" in s:  # a scoreboard: that head's cell of the kind's score table
                section = figure_html(page, fid).split(f'data-score="{s["data-score"]}"', 1)[1]
                cell = re.search(rf'<td [^>]*data-layer="{layer}" data-head="{head}"[^>]*>([^<]*)</td>', section)
                assert cell and cell[1] == s["text"], (name, s)
            else:
                data = figure_data(page, fid)
                panel = data["panels"][int(s["data-panel"])] if "panels" in data else data
                w = panel["weights"][layer][head][int(s["data-q"])][int(s["data-k"])]
                assert f"{w:.2f}" == s["text"], f"{name}: {s['text']} in the prose, {w:.2f} in {fid}'s cell ({s})"
                q, k = (token_spoken(panel["tokens"][int(s[a])]) for a in ("data-q", "data-k"))
                assert s["says"].endswith(f"the weight from {q} to {k}") and s["says"].startswith(f"from figure {fid[4:]}, layer {layer + 1}, head {head + 1}"), s
            checked += 1
    assert checked >= 10, f"only {checked} cell references in the whole course"


def test_bindings_name_real_figures_and_their_notes(site):
    for name in CONTENT_PAGES:
        page = (site / f"{name}.html").read_text(encoding="utf-8")
        found = spans(page)
        assert len(found) == page.count('class="course-ref '), f"{name}: a bound reference the test cannot read"
        for s in found:
            assert s["says"].startswith("from figure "), s
            fig = figure_html(page, s["data-fig"])
            assert 'data-pending="true"' not in fig, f"{name}: {s} points at a pending figure"
            if s["level"] != "figure" and "data-score" not in s:
                assert re.search(r'data-kind="(attention|compare)"', fig), s


def test_code_keeps_plain_numbers_and_pending_stays_pending(site):
    page = (site / "attention.html").read_text(encoding="utf-8")
    code = re.findall(r"<code[^>]*>.*?</code>", page, re.S)
    assert any("trace.layers[" in c for c in code), "attention.html's Code tab is gone"
    assert not any("course-ref" in c for c in code), "a reference inside code was bound"
    assert 'class="course-ref ' in page
    gpt2 = (site / "gpt2.html").read_text(encoding="utf-8")
    for s in spans(gpt2):  # GPT-2's figures wait for their traces: nothing of theirs is bound
        assert 'data-pending="true"' not in figure_html(gpt2, s["data-fig"]), s


def test_the_course_build_scores_heads_on_the_full_scoring_set(site):
    """The full-size path of the scoring set (the GPT-2-shaped course of the tests uses the small
    one): `traces` without --scoring-set, as the course is traced, scores every kind on all 4
    repeated random sequences or all 8 sentences."""
    from generator import heads
    from generator.store import TraceStore

    traces = site.parents[1] / "traces"
    doc = json.loads((traces / "tiny" / "heads.json").read_text(encoding="utf-8"))
    by_key = {e["file"][: -len(".json")]: e for e in TraceStore(traces).entries("tiny")}
    n_random, n_sentences = heads.SCORING_SIZES["full"]
    for kind in heads.KINDS:
        used = [by_key[k] for k in doc["scoredOn"][kind]["traces"]]
        want = [heads.RANDOM_TEXT.format(n=k + 1, total=n_random) for k in range(n_random)] \
            if kind in heads.REPEATED_KINDS else list(heads.SCORING_SENTENCES)
        assert [e["text"] for e in used] == want and len(want) == (n_random if kind in heads.REPEATED_KINDS else n_sentences), kind
