"""`{{ id.compare(her, Ben, Lily) }}`: the words come from the numbers, on attention and compare
figures, from synthetic traces (through the store)."""

from __future__ import annotations

import textwrap

import pytest

from conftest import LILY, synthetic_trace, write_traces
from generator import render
from generator.lessons import directives as D
from generator.lessons import refs
from generator.lessons.errors import LessonError
from generator.render.attention import SAME_WITHIN, compare_words
from generator.render.context import Ctx
from generator.render.ref_common import PENDING_REF
from generator.store import TraceStore

BEN = "Ben wanted to play with her"
WHERE = "content/page.md:20"


def ctx_with(root, traces) -> Ctx:
    write_traces(root, traces)
    return Ctx(store=TraceStore(root), page="content/page.md")


def figure(kind: str, body: str, ctx: Ctx) -> None:
    render.render(D.parse_directive(kind, textwrap.dedent(body), "content/page.md:3"), ctx)


def ref(text: str, ctx: Ctx) -> str:
    return render.render_ref(refs.parse_ref(text, WHERE), ctx)


def attention_ctx(root, lily: float, wanted: float) -> Ctx:
    """·her (#5) in layer 3, head 3 gives Lily (#0) `lily` and ·wanted (#1) `wanted`."""
    row = {0: lily, 1: wanted, 2: 0.05, 3: 0.05, 4: 0.05, 5: 1 - lily - wanted - 0.15}
    ctx = ctx_with(root, [synthetic_trace(LILY, plant={(2, 2, 5): row})])
    figure("attention", f'model: tiny\nsentence: "{LILY}"\nlayer: 3\nhead: 3\nid: lily\n', ctx)
    return ctx


@pytest.mark.parametrize(
    "lily, wanted, words",
    [(0.50, 0.20, "more than"), (0.20, 0.50, "less than"), (0.33, 0.30, "about the same as"), (0.30, 0.34, "about the same as")],
)
def test_attention_compare_words_follow_the_numbers(tmp_path, lily, wanted, words):
    ctx = attention_ctx(tmp_path, lily, wanted)
    assert ref("lily.compare(her, Lily, wanted)", ctx) == words
    flipped = {"more than": "less than", "less than": "more than"}.get(words, words)
    assert ref("lily.compare(her, wanted, Lily)", ctx) == flipped


def test_threshold_is_on_the_numbers_as_shown():
    assert SAME_WITHIN == 0.05
    assert compare_words(0.30, 0.25) == "more than"  # 0.05 apart as shown: not "about the same"
    assert compare_words(0.25, 0.30) == "less than"
    assert compare_words(0.304, 0.256) == "about the same as"  # shown as 0.30 and 0.26
    assert compare_words(0.5, 0.5) == "about the same as"


def compare_ctx(root, her_lily: float, her_ben: float) -> Ctx:
    lily = synthetic_trace(LILY, plant={(2, 2, 5): {0: her_lily, 1: 0.1, 5: 0.9 - her_lily}})
    ben = synthetic_trace(BEN, plant={(2, 2, 5): {0: her_ben, 1: 0.2, 5: 0.8 - her_ben}})
    ctx = ctx_with(root, [lily, ben])
    figure("compare", f'model: tiny\nsentences: ["{LILY}", "{BEN}"]\nlayer: 3\nhead: 3\nid: pair\n', ctx)
    return ctx


@pytest.mark.parametrize("her_lily, her_ben, words", [(0.3, 0.6, "more than"), (0.6, 0.3, "less than"), (0.5, 0.52, "about the same as")])
def test_compare_figure_takes_each_token_from_its_sentence(tmp_path, her_lily, her_ben, words):
    ctx = compare_ctx(tmp_path, her_lily, her_ben)
    # Ben is only in sentence 2, Lily only in sentence 1
    assert ref("pair.compare(her, Ben, Lily)", ctx) == words
    assert ref("pair.weight(her, Ben, 2)", ctx) == f"{her_ben:.2f}"


def test_compare_figure_explicit_sentence(tmp_path):
    ctx = compare_ctx(tmp_path, 0.6, 0.3)
    # sentence 2: ·her gives Ben 0.30, ·wanted 0.20; sentence 1: Lily 0.60, ·wanted 0.10
    assert ref("pair.compare(her, Ben, wanted, 2)", ctx) == "more than"
    assert ref("pair.compare(her, wanted, Ben, 2)", ctx) == "less than"
    assert ref("pair.compare(her, Lily, wanted, 1)", ctx) == "more than"
    # without a number, ·wanted is found in sentence 1 first (0.10), Ben in sentence 2 (0.30)
    assert ref("pair.compare(her, wanted, Ben)", ctx) == "less than"


@pytest.mark.parametrize(
    "kind, text",
    [("attention", "lily.compare(her, Lily, cat)"), ("compare", "pair.compare(her, Ben, cat)"), ("compare", "pair.compare(her, Lily, Ben, 1)")],
)
def test_missing_token_is_a_one_line_lesson_error(tmp_path, kind, text):
    ctx = attention_ctx(tmp_path, 0.5, 0.2) if kind == "attention" else compare_ctx(tmp_path, 0.5, 0.2)
    with pytest.raises(LessonError) as e:
        ref(text, ctx)
    message = str(e.value)
    assert message.startswith(WHERE + ": ") and "no token" in message and "Fix: " in message and "\n" not in message


def test_compare_ref_errors_on_arity_and_pending(tmp_path):
    ctx = attention_ctx(tmp_path, 0.5, 0.2)
    with pytest.raises(LessonError, match="'compare' takes 3 arguments, not 2"):
        ref("lily.compare(her, Lily)", ctx)
    pending = Ctx(store=TraceStore(tmp_path / "empty"), page="content/page.md")
    figure("attention", f'model: tiny\nsentence: "{LILY}"\nlayer: 3\nhead: 3\nid: lily\n', pending)
    figure("compare", f'model: tiny\nsentences: ["{LILY}", "{BEN}"]\nlayer: 3\nhead: 3\nid: pair\n', pending)
    assert ref("lily.compare(her, Lily, wanted)", pending) == PENDING_REF
    assert ref("pair.compare(her, Ben, Lily)", pending) == PENDING_REF
    assert ref("pair.compare(her, Ben, wanted, 2)", pending) == PENDING_REF
    # checked against the tokenizer's tokens as on a trace: sentence 2 has no Lily
    with pytest.raises(LessonError, match=r"to: no token 'Lily' in the sentence; its tokens are #0 '<\|endoftext\|>', #1 'Ben'"):
        ref("pair.compare(her, Ben, Lily, 2)", pending)
