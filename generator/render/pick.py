"""Choosing a figure's head: a fixed layer and head, the best head of a kind on the model's
scoreboard (heads.json), or a rule run on the trace at build time; and the check that a figure
offered as an example of a kind shows that kind at its focus row."""

from __future__ import annotations

import numpy as np

from .. import heads
from ..lessons.directives import Pick
from ..lessons.errors import LessonError
from .context import Ctx, Panel
from .format import esc, f2, tok
from .grid import ranked
from .token_names import resolve_token

# Why a focus row has nothing for a kind to look at, for the check's message.
NOTHING_THERE = {
    "previous-token": "is too early: the pattern counts from position 2",
    "sink": "is too early: the pattern counts from position 2",
    "induction": "has no earlier copy",
    "duplicate-token": "has no earlier copy",
}


def best_head(pick: Pick, model: str, ctx: Ctx, where: str, kind: str) -> tuple[int, int]:
    """(layer, head), 0-based: number `pick.rank` of the model's heads.json ranking of `pick.kind`."""
    scores = ctx.scores(model, where, kind)
    if scores is None:
        raise LessonError(where, f"{kind}: pick {{best: {pick.kind}}} needs the head scores of model {model} (traces/{model}/heads.json), which are missing or stale", "run `make traces`, which rewrites heads.json")
    order = scores.ranked(pick.kind)
    if pick.rank > len(order):
        raise LessonError(where, f"{kind}: pick.rank {pick.rank} is more than the {len(order)} heads of model {model}", f"use a rank from 1 to {len(order)}")
    layer, head, _ = order[pick.rank - 1]
    ctx.job_heads.append((where, pick.kind, f"L{layer + 1}H{head + 1}"))  # its job must be tested on the page
    return layer, head


def pick_head(pick: Pick, panel: Panel, where: str, kind: str, ctx: Ctx | None = None) -> tuple[int, int]:
    """(layer, head), 0-based, chosen by the pick rule on this trace. Ties: lowest layer, then head."""
    w = panel.weights  # (layer, head, query, key)
    n_layer, n_head, T, _ = w.shape
    if pick.rule == "best":
        return best_head(pick, panel.model, ctx or Ctx(), where, kind)
    if pick.rule == "fixed":
        layer, head = pick.layer - 1, pick.head - 1
        if not (0 <= layer < n_layer and 0 <= head < n_head):
            raise LessonError(where, f"{kind}: layer {pick.layer}, head {pick.head} is not in this trace ({n_layer} layers × {n_head} heads)", f"use a layer from 1 to {n_layer} and a head from 1 to {n_head}")
        return layer, head
    if pick.rule == "max-weight":
        src = resolve_token(pick.source, panel.tokens, where, f"{kind}: pick.from")
        dst = resolve_token(pick.target, panel.tokens, where, f"{kind}: pick.to")
        if dst > src:
            raise LessonError(where, f"{kind}: pick.to #{dst} comes after pick.from #{src}, and a token cannot look ahead", "swap from and to, or choose an earlier 'to' token")
        score = w[:, :, src, dst]  # (layer, head)
    else:
        if T < 2:
            raise LessonError(where, f"{kind}: pick rule {pick.rule} needs a sentence of at least two tokens", "use a longer sentence or a fixed layer and head")
        rows = np.arange(1, T)
        if pick.rule == "previous-token":
            score = w[:, :, rows, rows - 1].mean(axis=-1)  # (layer, head)
        elif pick.rule == "first-token":  # position 0, <|endoftext|>
            score = w[:, :, rows, 0].mean(axis=-1)
        elif pick.rule == "self":
            score = w[:, :, rows, rows].mean(axis=-1)
        else:  # the lessons' parser validated the rule
            raise AssertionError(pick.rule)
    flat = int(np.argmax(score))
    return flat // n_head, flat % n_head


def rule_words(pick: Pick, panel: Panel, where: str) -> str:
    """How the head was chosen, in words, for `{{ id.rule }}` (HTML)."""
    if pick.rule == "fixed":
        return f"layer {pick.layer}, head {pick.head}, chosen by hand"
    if pick.rule == "max-weight":
        toks = panel.tokens
        src = resolve_token(pick.source, toks, where, "pick.from")
        dst = resolve_token(pick.target, toks, where, "pick.to")
        return f"the head with the largest weight from {tok(toks[src])} to {tok(toks[dst])}"
    return esc(pick.describe())


# ---------------------------------------------------------------- examples must show their kind


def targets(kind: str, panel: Panel, row: int) -> tuple[int, ...]:
    """The keys the pattern `kind` puts row `row`'s weight on (heads.pattern_targets: the one
    definition of each pattern); () where the row has no such key."""
    return heads.pattern_targets(kind, [t["id"] for t in panel.tokens])[row]


def clearest_row(kind: str, panel: Panel, layer: int, head: int) -> int:
    """The row an example grid opens on: among the rows whose largest weight is on the pattern,
    the one that puts the most on it; the last row with the pattern when there is none (then the
    check fails and says why)."""
    w = panel.weights[layer, head]  # (query, key)
    rows = [i for i in range(len(panel.tokens)) if targets(kind, panel, i)]
    showing = [i for i in rows if ranked(w[i], i)[0] in targets(kind, panel, i)]
    if showing:
        return max(showing, key=lambda i: (float(w[i, list(targets(kind, panel, i))].sum()), i))
    return rows[-1] if rows else len(panel.tokens) - 1


def shows(kind: str, panel: Panel, layer: int, head: int, row: int) -> bool:
    """Whether row `row`'s largest weight is where `kind` looks."""
    want = targets(kind, panel, row)
    return bool(want) and ranked(panel.weights[layer, head, row], row)[0] in want


def check_shows(kind: str, panel: Panel, layer: int, head: int, focus: int, where: str, fix: str) -> None:
    """Raise the one-line LessonError unless the focus row's largest weight is where `kind` looks."""
    toks = panel.tokens
    w = panel.weights[layer, head, focus]  # (key,)
    sentence = panel.trace["text"]
    lead = f'layer {layer + 1}, head {head + 1} does not show {kind} on "{sentence}"'
    want = targets(kind, panel, focus)
    if not want:
        raise LessonError(where, f"{lead}: {toks[focus]['display']} (position {focus}) {NOTHING_THERE[kind]}", f"choose a focus `token:` that has one, or {fix}")
    top = ranked(w, focus)[0]
    if top in want:
        return
    expected = max(want, key=lambda j: (w[j], -j))
    raise LessonError(
        where,
        f"{lead}: {toks[focus]['display']} puts most weight on {toks[top]['display']} ({f2(w[top])}), not on {toks[expected]['display']} ({f2(w[expected])})",
        fix,
    )
