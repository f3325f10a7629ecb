"""`scoreboard` figures: head-type scores from traces/<model>/heads.json (CONTRACT.md).

For each score kind the figure holds a section with the score's definition, a sortable ranking of
the heads (the strongest :data:`RANKED_ROWS`; a bigger model's other heads under a disclosure that
opens in place) and, beside it, that kind's example figure: an ordinary attention figure of
the scoring trace that heads.json names for that kind (the repeated random tokens for
duplicate-token and induction, a natural sentence for previous-token and sink), opened on the
kind's top head. Each ranking row links to ``#fig-M:layer=..,head=..`` (1-based) of it. Each
pattern is shown once, and nothing scrolls in a box of its own: a box that scrolls up and down
inside the page traps a phone's scrolling.

Missing or stale heads.json: the pending box, never invented numbers. Stand-in scores are refused
unless the build allows the stand-in (COURSE_ALLOW_STANDIN).
"""

from __future__ import annotations

from .. import heads, schema
from ..lessons.directives import Attention, Pick, Scoreboard
from ..lessons.errors import LessonError
from ..lessons.refs import Ref
from ..registry import DEFINITIONS, NAMES, TITLES
from . import attention, templating
from . import pending as pending_box
from .context import Ctx, Figure, Missing, load_panel
from .pick import clearest_row, shows
from .format import f2
from .ref_common import int_arg, ref_fail

REFS = {"top": (1, 2), "best": (1, 1), "score": (3, 3), "rank": (3, 3), "chance": (1, 1)}
# the arguments' names, as the reference for authors writes them: {{ id.top(kind, n) }}
ARGS: dict[str, tuple[str, ...]] = {
    "top": ("kind", "n"), "score": ("kind", "layer", "head"), "rank": ("kind", "layer", "head"),
    "chance": ("kind",), "best": ("kind",),
}
RANKED_ROWS = 16  # GPT-2's 144 heads would make a ranking four screens long; the tiny model's 16 all show


def pending(d: Scoreboard, ctx: Ctx) -> str:
    n = ctx.next_number()
    ctx.note_missing(Missing(d.model, Missing.HEAD_SCORES), d.where)
    ctx.register(d, Figure("scoreboard", n, d, pending=True))
    return pending_box.scoreboard_pending(d, n, list(d.scores))


def example_figures(d: Scoreboard, scores: heads.HeadScores, ctx: Ctx) -> tuple[dict[str, int | None], list[str]]:
    """One attention figure per kind: the scoring text heads.json names for it, opened on the
    kind's top head at the row where that head shows the kind most clearly. A grid is offered as
    an example only where the head shows its kind at some row of that text (pick.shows); where it
    does nowhere, the section says so instead of showing a grid that would contradict it.
    Returns ({kind: figure number or None}, {kind: html of its figure}), in the order of d.scores."""
    numbers: dict[str, int | None] = {}
    html: dict[str, str] = {}
    for kind in d.scores:
        ex = scores.example(kind)
        panel = load_panel(d, d.model, ex["text"], ctx, ex["ids"])
        layer, head, _ = scores.top(kind, 1)[0]
        if panel is not None and not shows(kind, panel, layer, head, clearest_row(kind, panel, layer, head)):
            numbers[kind] = None
            continue
        caption = (
            f"The scoring text for {TITLES[kind].lower()}, opened on the strongest {NAMES[kind]} at the token "
            "where it shows its pattern most clearly (the links in the ranking beside it open other heads here)."
        )
        example = Attention(
            kind="attention", where=d.where, id=None, model=d.model, sentence=ex["text"],
            pick=Pick("best", kind=kind), caption=caption,
        )
        html[kind] = attention.render(example, ctx, ex["ids"])
        numbers[kind] = ctx.count
    return numbers, html


def section(kind: str, scores: heads.HeadScores, figure: int | None, example: str | None) -> dict:
    used = scores.doc.get("scoredOn", {}).get(kind, {})
    ranked = scores.ranked(kind)
    return {
        "kind": kind, "title": TITLES[kind], "definition": DEFINITIONS[kind], "figure": figure,
        "queries": used.get("queries"), "n_traces": len(used.get("traces", [])),
        "top": scores.top(kind, 1)[0], "chance": scores.chance(kind),
        "ranked": ranked[:RANKED_ROWS], "rest": ranked[RANKED_ROWS:], "more": len(ranked) > RANKED_ROWS,
        "example": templating.html(example) if example else None,
    }


def render(d: Scoreboard, ctx: Ctx) -> str:
    scores = ctx.scores(d.model, d.where, "scoreboard")
    if scores is None:
        return pending(d, ctx)
    for kind in d.scores:
        if kind not in scores.doc["scores"]:
            raise LessonError(d.where, f"scoreboard: {scores.path} has no '{kind}' scores", "run `make traces` to recompute the head scores")
    n = ctx.next_number()
    if d.pattern_only:  # the examples' heads are named for their jobs; the board says they are only patterns
        ctx.pattern_only.add(d.where)
    numbers, examples = example_figures(d, scores, ctx)
    payload = {
        "model": d.model,
        "revision": scores.revision,
        "scores": {k: scores.matrix(k).tolist() for k in d.scores},
        "chance": {k: scores.chance(k) for k in d.scores},
        "examples": {k: None if numbers[k] is None else f"fig-{numbers[k]}" for k in d.scores},
    }
    ctx.register(d, Figure("scoreboard", n, d, numbers={"scores": scores, "examples": numbers}))
    board = templating.render(
        "scoreboard.html", n=n, model=d.model, reader_name=pending_box.reader_name(d.model), n_layer=scores.n_layer, n_head=scores.n_head,
        sections=[section(k, scores, numbers[k], examples.get(k)) for k in d.scores],
        revision=schema.short_revision(scores.revision), payload=payload, pattern_only=d.pattern_only,
    )
    return board


def ref(ref: Ref, fig: Figure) -> str:
    """`top(kind, n)`: "layer 5, head 1 (0.93)", n of them joined by ", "; `score(kind, layer,
    head)`: that head's score; `rank(kind, layer, head)`: its place, 1 = highest (heads.ranked);
    `chance(kind)`: the score of a head spreading its attention evenly (heads.chance); `best(kind)`:
    the highest score alone."""
    scores = fig.numbers["scores"]
    kind = ref.args[0]
    if kind not in fig.directive.scores:  # type: ignore[attr-defined]
        ref_fail(ref, f"this scoreboard has no score '{kind}'", f"use one of: {', '.join(fig.directive.scores)}")  # type: ignore[attr-defined]
    if ref.name == "chance":
        return f2(scores.chance(kind))
    ranked_heads = scores.ranked(kind)
    if ref.name == "best":  # the number alone, for a guess's condition (render/guess.py)
        return f2(ranked_heads[0][2])
    if ref.name == "top":
        n = int_arg(ref, ref.args[1], "count", 1, len(ranked_heads)) if len(ref.args) > 1 else 1
        return ", ".join(f"layer {l + 1}, head {h + 1} ({f2(v)})" for l, h, v in ranked_heads[:n])
    layer = int_arg(ref, ref.args[1], "layer", 1, scores.n_layer) - 1
    head = int_arg(ref, ref.args[2], "head", 1, scores.n_head) - 1
    if ref.name == "score":
        return f2(float(scores.matrix(kind)[layer, head]))
    return str(1 + [(l, h) for l, h, _ in ranked_heads].index((layer, head)))
