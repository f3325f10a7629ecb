"""`score-split` figures (render/score_split.py) from the committed tiny traces and splits.json:
the bars are the stored parts, sorted, and add up to the cell's score; the references print those
numbers; the default key is where the head looks most; mistakes are one line naming the option."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from conftest import REPO

from generator.lessons.directives import parse_directive
from generator.lessons.errors import LessonError
from generator.lessons.refs import Ref
from generator.render import score_split
from generator.render.context import Ctx
from generator.store import TraceStore, splits_file

FROG = "frog lamp seven river coat frog lamp seven river coat"


def figure(body: str, ctx: Ctx | None = None) -> tuple[str, Ctx]:
    ctx = ctx or Ctx(store=TraceStore(REPO / "traces"))
    d = parse_directive("score-split", f'model: tiny\nsentence: "{FROG}"\n' + body, "content/why.md:3")
    return score_split.render(d, ctx), ctx


def rows_of(html: str) -> list[tuple[str, float]]:
    return [(p, float(v)) for p, v in re.findall(r'<tr data-part="([^"]+)" data-value="([^"]+)">', html)]


def stored(layer: int, head: int) -> dict:
    return splits_file.read(REPO / "traces", "tiny").head(FROG, layer, head)


@pytest.mark.parametrize("body, layer, head, side", [
    ("layer: 4\nhead: 4\ntoken: '#12'\nkey: '#7'\n", 4, 4, "key"),
    ("layer: 4\nhead: 1\ntoken: '#12'\nkey: '#0'\nside: query\n", 4, 1, "query"),
    ("layer: 1\nhead: 4\ntoken: '#9'\nkey: '#8'\nside: table\n", 1, 4, "table"),
])
def test_the_bars_are_the_stored_parts_sorted_and_add_up_to_the_score(body, layer, head, side):
    html, _ = figure(body)
    rows = rows_of(html)
    q, k = [int(x) for x in re.findall(r"'#(\d+)'", body)]
    cell = q * (q + 1) // 2 + k
    e = stored(layer, head)
    want = np.asarray(e[side], dtype=float).reshape(-1, len(e["score"]))[:, cell]
    assert sorted(v for _, v in rows) == sorted(want.tolist())
    assert [v for _, v in rows] == sorted((v for _, v in rows), reverse=True), "largest first"
    score = float(re.search(r'data-score="([^"]+)"', html)[1])
    assert score == e["score"][cell]
    assert abs(sum(v for _, v in rows) - score) < 1e-3
    assert f"is {score:.2f}".replace("-", "\u2212") in html


def test_parts_are_named_in_reader_words():
    html, _ = figure("layer: 4\nhead: 4\ntoken: '#12'\nkey: '#7'\n")
    names = re.findall(r'<th scope="row">([^<]+)</th>', html.split("course-split-bars")[1].split("</table>")[0])
    assert "output of layer 1&#x27;s MLP" in names or "output of layer 1's MLP" in names
    assert "output of layer 1, head 4" in names and "biases" in names
    assert any(n.startswith("position of ·coat") for n in names)


def test_the_default_key_is_where_the_head_looks_most():
    html, ctx = figure("layer: 4\nhead: 4\ntoken: '#12'\nid: f\n")
    trace = TraceStore(REPO / "traces").load("tiny", FROG)
    w = np.asarray(trace["layers"][3]["heads"][3]["weights"], dtype=float)[12, :13]
    assert json.loads(re.search(r'class="course-data">(.*?)</script>', html, re.S)[1])["key"] == int(np.argmax(w))
    assert ctx.figures["f"].numbers["key"] == int(np.argmax(w))


def test_references_print_the_stored_numbers():
    _, ctx = figure("layer: 4\nhead: 4\ntoken: '#12'\nkey: '#7'\nid: f\n")
    fig = ctx.figures["f"]
    e = stored(4, 4)
    cell = 12 * 13 // 2 + 7
    mlp1 = e["key"][splits_file.read(REPO / "traces", "tiny").parts(4).index("MLP1")][cell]
    ref = lambda name, *args: score_split.ref(Ref("f", name, tuple(args), "content/why.md:9", name), fig)  # noqa: E731
    assert ref("share", "MLP1") == f"{mlp1:+.2f}".replace("-", "\u2212")
    assert ref("score") == f"{e['score'][cell]:.2f}"
    assert ref("percent", "MLP1") == f"{round(100 * mlp1 / e['score'][cell])}%"
    assert ref("head") == "layer 4, head 4"
    with pytest.raises(LessonError, match="no part 'L9H9'"):
        ref("share", "L9H9")


def test_a_part_s_words_are_text_in_a_reference():
    """A part's words hold a token's text (a lesson's sentence: "position of ·<b>"); the references
    that print them escape it, as the figure's template does."""
    _, ctx = figure("layer: 4\nhead: 4\ntoken: '#12'\nkey: '#7'\nid: f\n")
    fig = ctx.figures["f"]
    fig.numbers["rows"] = [dict(r, words=r["words"] + " <b>&") for r in fig.numbers["rows"]]
    ref = lambda name, *args: score_split.ref(Ref("f", name, tuple(args), "content/why.md:9", name), fig)  # noqa: E731
    for out in (ref("largest"), ref("top", "2")):
        assert "<b>" not in out and out.count("&lt;b&gt;&amp;") == (1 if out == ref("largest") else 2), out


@pytest.mark.parametrize("body, line, problem", [
    ("layer: 4\nhead: 4\nside: sideways\n", 6, "'side' must be one of key, query, table"),
    ("layer: 4\nhead: 4\nside: table\n", 6, "'side' table needs a head of layer 1"),
    ("pick: previous-token\nkey: []\n", 5, "'key' must name a token"),
])
def test_a_mistake_is_one_line_at_its_option(body, line, problem):
    with pytest.raises(LessonError) as e:
        parse_directive("score-split", f'model: tiny\nsentence: "{FROG}"\n' + body, "content/why.md:1")
    assert problem in str(e.value) and "\n" not in str(e.value)
    assert e.value.where == f"content/why.md:{line}"  # the fence is line 1, the body from line 2


def test_a_key_after_the_query_is_refused():
    with pytest.raises(LessonError, match="cannot look ahead"):
        figure("layer: 4\nhead: 4\ntoken: '#3'\nkey: '#5'\n")


def test_a_sentence_without_a_split_is_pending_and_noted(tmp_path):
    import shutil

    shutil.copytree(REPO / "traces", tmp_path / "traces")
    (tmp_path / "traces" / "tiny" / splits_file.FILE).unlink()
    html, ctx = figure("layer: 4\nhead: 4\n", Ctx(store=TraceStore(tmp_path / "traces")))
    assert "course-pending" in html and ctx.missing
