"""Scoreboard figures (generator/render/scoreboard.py) from heads.json, in real MkDocs builds and direct
renders: one ranking per pattern beside its example figure, links to it, references, pending boxes, and the
stand-in kept off the site."""

from __future__ import annotations

import re
from html import escape as html_escape
from pathlib import Path

import numpy as np
import pytest

from conftest import run_build, synthetic_trace, write_project
from generator import heads
from generator.store import TraceStore
from heads_helpers import store_with_scores
from generator import render
from generator.lessons import directives as D
from generator.lessons import refs
from generator.lessons.errors import LessonError
from generator.render import format as fmt
from generator.render.context import Ctx, Missing
from generator.render.ref_common import PENDING_REF

SMALL = dict(n_random=1, random_length=4)  # few, short scoring texts for GPT-2-shaped synthetic traces

PAGE = """# Heads

```scoreboard
model: tiny
scores: [previous-token, induction, sink]
pattern-only: true
id: sb
```

Top previous-token head: {{ sb.top(previous-token, 1) }}. Induction 1.1 scores
{{ sb.score(induction, 1, 1) }}, rank {{ sb.rank(induction, 1, 1) }}; chance is {{ sb.chance(induction) }}.
"""


def test_a_scoreboard_names_its_examples_heads_for_jobs_unless_it_says_they_are_only_patterns(tmp_path):
    store_with_scores(tmp_path / "traces")
    write_project(tmp_path, {"heads.md": PAGE.replace("pattern-only: true\n", "") + "\nA score is only a pattern.\n"})
    refused = run_build(tmp_path)
    assert not refused.ok and "content/heads.md:3: this figure names" in refused.log, refused.log
    assert "Fix: add `pattern-only: true`" in refused.log
    write_project(tmp_path, {"heads.md": PAGE})
    built = run_build(tmp_path)
    assert built.ok, built.log
    html = built.html("heads.md")
    board = html[html.index('id="fig-1"'):html.index('id="fig-1-end"')]
    assert board.count('<span class="course-pattern-only">') == 1 and html.count('class="course-pattern-only"') == 1
    assert board.index("course-pattern-only") > board.index("<figcaption")
    assert "each example grid beside a ranking opens the highest-scoring head of its kind, and a score shows where a head looks" in board


def test_scoreboard_shows_each_pattern_once_ranked_beside_its_example(tmp_path):
    store_with_scores(tmp_path / "traces")
    write_project(tmp_path, {"heads.md": PAGE})
    built = run_build(tmp_path)
    assert built.ok, built.log
    html = built.html("heads.md")
    figs = re.findall(r'<figure class="course-fig[^"]*" id="(fig-\d+)" data-kind="(\w+)"', html)
    # the scoreboard, and in it one example grid per kind whose best head shows it (the planted
    # synthetic heads show three of the four kinds; the fourth says so instead of a grid)
    assert figs == [("fig-1", "scoreboard"), ("fig-2", "attention"), ("fig-3", "attention"), ("fig-4", "attention")]
    assert "course-pending" not in html
    sections = re.findall(r'<section class="course-score" data-score="([\w-]+)">(.*?)</section>', html, flags=re.S)
    assert [k for k, _ in sections] == ["previous-token", "induction", "sink"]
    board = html[html.index('id="fig-1"') : html.rindex("</section>")]
    # each pattern once: one ranking, no heatmap table, no box that scrolls inside the page
    assert board.count('table class="course-table course-sortable"') == 3
    assert "course-heatmap" not in board and "overflow-y" not in board and "max-height" not in board
    assert "course-score-rest" not in board  # 16 heads: every one in the ranking
    assert len(re.findall(r'<td data-value="[\d.e-]+" data-layer="\d" data-head="\d">', board)) == 3 * 16
    for kind in ("previous-token", "induction", "sink"):
        assert html_escape(heads.DEFINITIONS[kind], quote=False) in board
    # every head once per ranking, linked to the example figure of its kind, which stands in the
    # same section, after the ranking: beside it where the page is wide enough
    prev, ind = dict(sections)["previous-token"], dict(sections)["induction"]
    assert len(re.findall(r'href="#fig-2:layer=\d,head=\d"', prev)) == 16 and 'id="fig-2" data-kind="attention"' in prev
    assert len(re.findall(r'href="#fig-3:layer=\d,head=\d"', ind)) == 16 and 'id="fig-3" data-kind="attention"' in ind
    assert prev.index("course-sortable") < prev.index('id="fig-2"')
    first_row = re.search(r"<tbody>\s*<tr>(.*?)</tr>", ind[ind.index("course-sortable") :]).group(1)
    assert '<td data-value="1">1</td><td data-value="1">1</td>' in first_row
    assert 'href="#fig-3:layer=1,head=1"' in first_row
    for key in ("layer", "head", "score"):
        assert f'data-sort="{key}"' in board
    # the example traces' download copies and heavy parts are in the built site
    keys = re.findall(r'id="fig-[23]" data-kind="attention" data-trace-key="(\w+)"', html)
    assert len(keys) == 2
    for key in keys:
        assert (built.site / "assets" / "generated" / "traces" / "tiny" / f"{key}.json").is_file()
        assert (built.site / "assets" / "generated" / "traces" / "tiny" / key / "weights.js").is_file()  # and its per-head parts
    # the example figures open on the top head of induction / previous-token (here the planted head 1.1)
    assert re.search(r'id="fig-3" data-kind="attention"[^>]*data-layer="0" data-head="0"', html)
    # references
    text = re.sub(r"<[^>]+>", "", html)
    assert "Top previous-token head: layer 1, head 1 (0.9" in text
    chance = fmt.f2(heads.load_scores(tmp_path / "traces", "tiny").chance("induction"))
    assert re.search(rf"Induction 1\.1 scores\s+0\.9\d, rank 1; chance is {chance}\.", text)
    assert f"would score {chance}." in text


def test_scoreboard_without_scores_is_a_pending_box(tmp_path):
    store = TraceStore(tmp_path)
    ctx = Ctx(store=store, page="p.md")
    d = D.parse_directive("scoreboard", "model: gpt2\nid: sb\n", "p.md:1")
    html = render.render(d, ctx)
    assert 'data-pending="true"' in html and "Not scored in this copy of the course." in html and "all 144 heads of GPT-2 small" in html
    assert "make traces" not in html and "heads.json" not in html  # for readers; the build log tells the author
    assert "course-data" not in html and "<td" not in html
    assert ctx.missing == {Missing("gpt2", Missing.HEAD_SCORES): ["p.md:1"]}
    assert render.render_ref(refs.Ref("sb", "top", ("induction", "1"), "p.md:3", "sb.top(induction, 1)"), ctx) == PENDING_REF


def test_scoreboard_of_stale_scores_is_pending(tmp_path):
    store = store_with_scores(tmp_path)
    store.write(synthetic_trace("A retrained model", revision="synthetic-0002"))  # new revision, old heads.json
    ctx = Ctx(store=store, page="p.md")
    html = render.render(D.parse_directive("scoreboard", "model: tiny\n", "p.md:1"), ctx)
    assert "Not scored in this copy of the course." in html


def test_scoreboard_reference_mistakes_are_one_line_errors(tmp_path):
    store = store_with_scores(tmp_path)
    ctx = Ctx(store=store, page="p.md")
    render.render(D.parse_directive("scoreboard", "model: tiny\nscores: [sink]\nid: sb\n", "p.md:1"), ctx)
    with pytest.raises(LessonError, match="no score 'induction'"):
        render.render_ref(refs.Ref("sb", "top", ("induction",), "p.md:4", "sb.top(induction)"), ctx)
    with pytest.raises(LessonError, match="layer '5' is not a number from 1 to 4"):
        render.render_ref(refs.Ref("sb", "score", ("sink", "5", "1"), "p.md:4", "sb.score(sink, 5, 1)"), ctx)


def test_a_board_of_one_pattern_says_pattern_and_ranking_in_the_singular(tmp_path):
    ctx = Ctx(store=store_with_scores(tmp_path), page="p.md")
    one = render.render(D.parse_directive("scoreboard", "model: tiny\nscores: [sink]\n", "p.md:1"), ctx)
    assert "scored on 1 pattern. A score" in one
    assert "Skip the scoreboard (1 ranking of 16 heads, and its example grid)" in one
    two = render.render(D.parse_directive("scoreboard", "model: tiny\nscores: [sink, induction]\n", "p.md:1"), ctx)
    assert "scored on 2 patterns. A score" in two
    assert "Skip the scoreboard (2 rankings of 16 heads, and their example grids)" in two


def test_a_big_model_ranks_its_strongest_heads_and_keeps_the_rest_in_place(tmp_path):
    """GPT-2's 144 heads: the sortable ranking holds the strongest RANKED_ROWS, the others follow
    in ranked order under a disclosure that opens in the page (no box that scrolls inside it);
    every head is there once, its score cell the one a reference outlines."""
    store = store_with_scores(tmp_path, model="gpt2", stand_in=True, revision="stand-in-random-init", **SMALL)
    ctx = Ctx(store=store, page="p.md", allow_standin=True)
    html = render.render(D.parse_directive("scoreboard", "model: gpt2\nscores: [induction]\n", "p.md:1"), ctx)
    board = html[: html.index('<figure class="course-fig" id="fig-2"')] if 'id="fig-2"' in html else html
    ranked = heads.load_scores(tmp_path, "gpt2", allow_stand_in=True).ranked("induction")
    cells = re.findall(r'<td data-value="[^"]+" data-layer="(\d+)" data-head="(\d+)">([\d.]+)</td>', html)
    assert [(int(l), int(h)) for l, h, _ in cells] == [(l, h) for l, h, _ in ranked] and len(cells) == 144
    assert [v for *_, v in cells] == [fmt.f2(v) for *_, v in ranked]
    sortable = board[board.index("course-sortable") : board.index("</table>", board.index("course-sortable"))]
    assert sortable.count("<tr>") == 1 + 16  # its header row and the strongest 16
    rest = html[html.index('<details class="course-score-rest">') :]
    assert rest.startswith('<details class="course-score-rest"><summary data-search-exclude>The other 128 heads</summary>')
    assert "overflow-y" not in html and "max-height" not in html and "course-heatmap" not in html


STANDIN_PAGE = """# GPT-2

```attention
model: gpt2
sentence: "The cat sat"
layer: 1
head: 1
```

```scoreboard
model: gpt2
pattern-only: true
```
"""


def test_site_build_refuses_stand_in_traces_unless_allowed(tmp_path):
    store_with_scores(tmp_path / "traces", model="gpt2", stand_in=True, revision="stand-in-random-init", **SMALL)
    cat = synthetic_trace("The cat sat", model="gpt2", stand_in=True, revision="stand-in-random-init")
    write_project(tmp_path, {"gpt2.md": STANDIN_PAGE}, traces=[cat])
    refused = run_build(tmp_path, strict=False)
    assert not refused.ok
    assert "stand-in" in refused.log and "COURSE_ALLOW_STANDIN" in refused.log
    assert not (tmp_path / "site" / "gpt2.html").exists()
    allowed = run_build(tmp_path, strict=False, env={"COURSE_ALLOW_STANDIN": "1"})
    assert allowed.ok, allowed.log
    assert "course-pending" not in allowed.html("gpt2.md")


def test_stand_in_scores_alone_are_refused_too():
    """Even with real traces for every figure, stand-in head scores may not be rendered."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        store_with_scores(Path(tmp), model="gpt2", stand_in=True, revision="stand-in-random-init", **SMALL)
        ctx = Ctx(store=TraceStore(tmp), page="p.md", allow_standin=False)
        with pytest.raises(LessonError, match="stand-in"):
            render.render(D.parse_directive("scoreboard", "model: gpt2\n", "p.md:1"), ctx)
