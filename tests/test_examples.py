"""`pick: {best: <kind>}` takes the head from heads.json, and a figure offered as an
example of a kind must show that kind at its focus row, or the build stops with one line."""

from __future__ import annotations

import re
import textwrap

import pytest

from conftest import synthetic_trace
from generator import render
from generator.lessons import directives as D
from generator.lessons import refs
from generator.lessons.errors import LessonError
from generator.render.context import Ctx
from heads_helpers import store_with_scores

SMALL = dict(n_random=1, random_length=4)
SENTENCE = "Lily saw a big dog in the park"  # 8 tokens in the synthetic tokenizer


def ctx_with(tmp_path, *traces) -> Ctx:
    store = store_with_scores(tmp_path, **SMALL)  # the best previous-token head is layer 1, head 1
    for t in traces:
        store.write(t)
    return Ctx(store=store, page="content/x.md")


def figure(body: str, line: int = 12) -> D.Directive:
    return D.parse_directive("attention", textwrap.dedent(body), f"content/x.md:{line}")


def test_best_pick_names_the_scoreboards_head_and_opens_on_a_row_that_shows_it(tmp_path):
    plant = {(0, 0, i): {i - 1: 0.9, i: 0.1} for i in range(1, 8)}
    ctx = ctx_with(tmp_path, synthetic_trace(SENTENCE, plant=plant))
    out = render.render(figure(f'model: tiny\nsentence: "{SENTENCE}"\npick: {{best: previous-token}}\nid: prev\n'), ctx)
    assert 'data-layer="0" data-head="0"' in out
    fig = ctx.figures["prev"]
    assert (fig.layer, fig.head) == (0, 0)
    assert fig.panels[0].weights[0, 0, fig.focus].argmax() == fig.focus - 1
    assert render.render_ref(refs.parse_ref("prev.rule", "content/x.md:20"), ctx) == (
        "the highest-scoring previous-token head on the scoreboard"
    )


def test_rank_takes_the_next_head_of_the_ranking(tmp_path):
    scores = store_with_scores(tmp_path, **SMALL)
    from generator import heads

    second = heads.load_scores(scores, "tiny").ranked("sink")[1][:2]
    plant = {(second[0], second[1], 7): {0: 0.95, 7: 0.05}}
    ctx = Ctx(store=scores, page="content/x.md")
    scores.write(synthetic_trace(SENTENCE, plant=plant))
    render.render(figure(f'model: tiny\nsentence: "{SENTENCE}"\npick: {{best: sink, rank: 2}}\ntoken: 7\nid: s\n'), ctx)
    assert (ctx.figures["s"].layer, ctx.figures["s"].head) == second


def test_a_head_that_does_not_fit_stops_the_build_with_one_line(tmp_path):
    # layer 1, head 1 is the best previous-token head of the scoreboard, but on this sentence its
    # focus row (·park, position 7) looks at position 0 (Lily) instead of ·the
    ctx = ctx_with(tmp_path, synthetic_trace(SENTENCE, plant={(0, 0, 7): {0: 0.61, 5: 0.2, 6: 0.12, 7: 0.07}}))
    d = figure(f'model: tiny\nsentence: "{SENTENCE}"\npick: {{best: previous-token}}\ntoken: park\n', line=31)
    with pytest.raises(LessonError) as e:
        render.render(d, ctx)
    msg = str(e.value)
    assert "\n" not in msg
    assert msg.startswith(
        'content/x.md:31: layer 1, head 1 does not show previous-token on "Lily saw a big dog in the park": '
        "·park puts most weight on Lily (0.61), not on ·the (0.12). Fix: "
    ), msg
    assert "rank: 2" in msg


def test_induction_and_duplicate_checks_look_at_earlier_copies(tmp_path):
    from generator.render.context import Panel, trace_weights
    from generator.render.pick import check_shows

    text = "a b c a b"
    # row 3 (the second a): induction looks at position 1 (b, after the first a); duplicate at 0
    doc = synthetic_trace(text, plant={(0, 0, 3): {1: 0.9, 3: 0.1}, (0, 1, 3): {0: 0.9, 3: 0.1}})
    for i, t in enumerate(doc["tokens"]):
        t["id"] = {"a": 1, " a": 1, " b": 2, " c": 3}[t["text"]]
    doc["key"] = "k"
    panel = Panel(doc, trace_weights(doc))
    check_shows("induction", panel, 0, 0, 3, "x.md:1", "fix")
    check_shows("duplicate-token", panel, 0, 1, 3, "x.md:1", "fix")
    with pytest.raises(LessonError, match=r"does not show duplicate-token .*puts most weight on ·b \(0\.90\), not on a \(0\.00\)"):
        check_shows("duplicate-token", panel, 0, 0, 3, "x.md:1", "fix")
    with pytest.raises(LessonError, match=r"·c \(position 2\) has no earlier copy"):
        check_shows("induction", panel, 0, 0, 2, "x.md:1", "fix")


def test_best_pick_parsing_errors():
    with pytest.raises(LessonError, match="unknown score kind 'copying'"):
        figure('model: tiny\nsentence: "a b"\npick: {best: copying}\n')
    with pytest.raises(LessonError, match="pick.rank must be a whole number from 1"):
        figure('model: tiny\nsentence: "a b"\npick: {best: sink, rank: 0}\n')
    assert figure('model: tiny\nsentence: "a b"\npick: {best: induction, rank: 3}\n').pick == D.Pick("best", kind="induction", rank=3)
