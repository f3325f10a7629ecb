"""Choosing a figure's head: a fixed layer and head, or a rule run on the trace at build time."""

from __future__ import annotations

import numpy as np

from ..lessons import directives as D
from ..lessons.errors import LessonError
from .context import Panel
from .format import esc, tok
from .tokens import resolve_token


def pick_head(pick: D.Pick, panel: Panel, where: str, kind: str) -> tuple[int, int]:
    """(layer, head), 0-based, chosen by the pick rule on this trace. Ties: lowest layer, then head."""
    w = panel.weights  # (layer, head, query, key)
    n_layer, n_head, T, _ = w.shape
    if pick.rule == "fixed":
        layer, head = pick.layer - 1, pick.head - 1
        if not (0 <= layer < n_layer and 0 <= head < n_head):
            raise LessonError(where, f"{kind}: layer {pick.layer}, head {pick.head} is not in this trace ({n_layer} layers × {n_head} heads)", f"use a layer from 1 to {n_layer} and a head from 1 to {n_head}")
        return layer, head
    if pick.rule == "max-weight":
        src = resolve_token(pick.source, panel.tokens, where, f"{kind}: pick.from")
        dst = resolve_token(pick.target, panel.tokens, where, f"{kind}: pick.to")
        if dst > src:
            raise LessonError(where, f"{kind}: pick.to #{dst + 1} comes after pick.from #{src + 1}, and a token cannot look ahead", "swap from and to, or choose an earlier 'to' token")
        score = w[:, :, src, dst]  # (layer, head)
    else:
        if T < 2:
            raise LessonError(where, f"{kind}: pick rule {pick.rule} needs a sentence of at least two tokens", "use a longer sentence or a fixed layer and head")
        rows = np.arange(1, T)
        if pick.rule == "previous-token":
            score = w[:, :, rows, rows - 1].mean(axis=-1)  # (layer, head)
        elif pick.rule == "first-token":
            score = w[:, :, rows, 0].mean(axis=-1)
        elif pick.rule == "self":
            score = w[:, :, rows, rows].mean(axis=-1)
        else:  # the lessons' parser validated the rule
            raise AssertionError(pick.rule)
    flat = int(np.argmax(score))
    return flat // n_head, flat % n_head


def rule_words(pick: D.Pick, panel: Panel, where: str) -> str:
    """How the head was chosen, in words, for `{{ id.rule }}` (HTML)."""
    if pick.rule == "fixed":
        return f"layer {pick.layer}, head {pick.head}, chosen by hand"
    if pick.rule == "max-weight":
        toks = panel.tokens
        src = resolve_token(pick.source, toks, where, "pick.from")
        dst = resolve_token(pick.target, toks, where, "pick.to")
        return f"the head with the largest weight from {tok(toks[src])} to {tok(toks[dst])}"
    return esc(pick.describe())
