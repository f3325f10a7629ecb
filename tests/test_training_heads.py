"""The training figure's second chart (the best head of each kind against step)
and the `{{ model.tiny.training.headScore / headStep / headChance / source }}` references, on the
small synthetic log of conftest.training_log_doc()."""

from __future__ import annotations

import json
import re

import pytest

from conftest import HEAD_CHANCE, HEAD_SCORES, training_log_doc
from generator import render
from generator.lessons import directives as D
from generator.lessons import refs
from generator.lessons.errors import LessonError
from generator.render.context import Ctx
from generator.render.ref_common import PENDING_REF

WHERE = "content/page.md:20"


def ref(text: str, ctx: Ctx) -> str:
    return render.render_ref(refs.parse_ref(text, WHERE), ctx)


def ctx_with(log: dict | None) -> Ctx:
    return Ctx(store=None, page="content/page.md", training_log=log)


def test_head_refs_give_the_logged_numbers():
    ctx = ctx_with(training_log_doc())
    assert ref("model.tiny.training.headScore(induction)", ctx) == "0.60"  # the last logged, not the peak
    assert ref("model.tiny.training.headScore(previous-token)", ctx) == "0.95"
    assert ref("model.tiny.training.headChance(induction)", ctx) == "0.06"
    assert ref("model.tiny.training.headStep(induction, 0.3)", ctx) == "600"
    assert ref("model.tiny.training.headStep(duplicate-token, 0.72)", ctx) == "900"  # reaching counts
    assert ref("model.tiny.training.headStep(sink, 0.95)", ctx) == "1,200"  # thousands separator
    assert ref("model.tiny.training.headStep(sink, 0)", ctx) == "300"
    assert ref("model.tiny.training.source", ctx) == "stories.txt and more-stories.txt"
    assert ref("model.tiny.training.wallMinutes", ctx) == "30"  # the top-level compute time


def test_head_phrases_name_their_steps():
    ctx = ctx_with(training_log_doc())
    assert ref("model.tiny.training.headScoreAt(induction, 600)", ctx) == "0.88 at step 600"
    assert ref("model.tiny.training.headScoreAt(previous-token, 1200)", ctx) == "0.95 at step 1,200"
    # the largest rise between two logged steps, not the first rise nor the whole climb
    assert ref("model.tiny.training.headJump(induction)", ctx) == "from 0.08 at step 300 to 0.88 at step 600"
    assert ref("model.tiny.training.headJump(duplicate-token)", ctx) == "from 0.30 at step 600 to 0.72 at step 900"
    # the highest score at its own step (induction falls after it)
    assert ref("model.tiny.training.headPeak(induction)", ctx) == "0.88 at step 600"
    assert ref("model.tiny.training.headPeak(sink)", ctx) == "0.96 at step 1,200"
    # every head that was the best, in order, 1-based
    assert ref("model.tiny.training.headLeaders(induction)", ctx) == "layer 4, heads 1, 2, 3 and 4"


def test_the_peak_is_the_step_of_the_highest_score_not_the_first_that_rounds_to_it():
    log = training_log_doc()
    for point, score in zip(log["headScores"], (0.5, 0.8951, 0.8989, 0.7)):
        point["best"]["induction"]["score"] = score
    assert ref("model.tiny.training.headPeak(induction)", ctx_with(log)) == "0.90 at step 900"
    log["headScores"][1]["best"]["induction"]["score"] = 0.8989  # an exact tie: the first step
    assert ref("model.tiny.training.headPeak(induction)", ctx_with(log)) == "0.90 at step 600"


def test_head_names_read_as_a_reader_counts():
    from generator.render.training_figure import head_names
    assert head_names([(3, 0), (3, 0)]) == "layer 4, head 1"
    assert head_names([(3, 0), (3, 3), (3, 0)]) == "layer 4, heads 1 and 4"
    assert head_names([(0, 3), (3, 0), (0, 3)]) == "layer 1, head 4 and layer 4, head 1"


def test_a_score_that_never_rises_has_no_jump():
    log = training_log_doc()
    for i, p in enumerate(log["headScores"]):
        p["best"]["induction"]["score"] = 0.5 - 0.1 * i
    with pytest.raises(LessonError, match="never rises"):
        ref("model.tiny.training.headJump(induction)", ctx_with(log))


def test_source_as_one_string_still_reads():
    log = training_log_doc() | {"source": "stories.txt"}
    assert ref("model.tiny.training.source", ctx_with(log)) == "stories.txt"


@pytest.mark.parametrize(
    "text, message",
    [
        ("model.tiny.training.headStep(induction, 0.95)", "never reaches 0.95 in the log (at most 0.88, at step 600)"),
        ("model.tiny.training.headStep(induction, 2)", "level '2' is not a number from 0 to 1"),
        ("model.tiny.training.headStep(induction)", "'headStep' takes 2 arguments (kind, level), not 1"),
        ("model.tiny.training.headScore(copying)", "unknown score kind 'copying'"),
        ("model.tiny.training.steps(induction)", "'steps' takes no arguments"),
        ("model.tiny.training.headScoreAt(induction, 650)", "step '650' is not one the log scored (it scored every 300 steps, 300 to 1,200)"),
        ("model.tiny.training.headScoreAt(induction, six)", "step 'six' is not one the log scored"),
        ("model.tiny.training.headScoreAt(induction)", "'headScoreAt' takes 2 arguments (kind, step), not 1"),
        ("model.tiny.training.headPeak(copying)", "unknown score kind 'copying'"),
    ],
)
def test_head_ref_errors_are_one_line(text, message):
    with pytest.raises(LessonError) as e:
        ref(text, ctx_with(training_log_doc()))
    assert str(e.value).startswith(WHERE + ": ") and message in str(e.value) and "Fix: " in str(e.value) and "\n" not in str(e.value)


def test_log_without_head_scores():
    log = {k: v for k, v in training_log_doc().items() if k not in ("headScores", "headChance")}
    with pytest.raises(LessonError, match="has no induction scores"):
        ref("model.tiny.training.headScore(induction)", ctx_with(log))
    out = render.render(D.parse_directive("training", "model: tiny\n", "content/page.md:3"), ctx_with(log))
    assert "course-heads-plot" not in out and '"heads"' not in out


def test_head_refs_pending_without_a_log():
    ctx = ctx_with(None)
    assert ref("model.tiny.training.headStep(induction, 0.3)", ctx) == PENDING_REF
    assert ref("model.tiny.training.headScore(induction)", ctx) == PENDING_REF


def test_chart_data_holds_the_four_series_and_the_fallback_table():
    out = render.render(D.parse_directive("training", "model: tiny\n", "content/page.md:3"), ctx_with(training_log_doc()))
    data = json.loads(re.search(r'<script type="application/json" class="course-data">(.*?)</script>', out, re.S).group(1))
    heads = data["heads"]
    assert heads["steps"] == [300, 600, 900, 1200]
    assert [s["kind"] for s in heads["series"]] == ["previous-token", "duplicate-token", "induction", "sink"]
    for s in heads["series"]:
        assert s["scores"] == HEAD_SCORES[s["kind"]] and s["chance"] == HEAD_CHANCE[s["kind"]]
        assert len(s["heads"]) == 4 and s["heads"][0] == "L4 H1"
    assert 'class="course-plot course-heads-plot"' in out and "course-heads-table" in out
    table = out[out.index("course-heads-table"):]
    assert "<th scope=\"row\">600</th><td>2,457,600</td><td>0.68 (L4 H2)</td><td>0.30 (L4 H2)</td><td>0.88 (L4 H2)</td>" in table
    assert "<tfoot><tr><th scope=\"row\">chance</th><td>–</td><td>0.12</td><td>0.06</td><td>0.06</td><td>0.12</td></tr></tfoot>" in table
    assert "the best induction head 0.60 (chance 0.06)" in out
    assert "Minutes" not in out  # validation points no longer carry wallSeconds
    assert "the TinyStories files stories.txt and more-stories.txt" in out  # behind the caption's details
