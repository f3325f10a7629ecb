"""`masks` figures: which keys each query may see, as grids side by side: causal (every earlier
token), a sliding window of w tokens, and causal with a learned sink (a column that belongs to no
token). Static SVG drawn at build time (masks.html); the cells and their rules are computed here,
each grid's title and description say every rule in words."""

from __future__ import annotations

from ..lessons.cache_kinds import Masks
from ..lessons.refs import Ref
from . import templating
from .architecture import px
from .context import Ctx, Figure
from .format import whole

REFS: dict[str, tuple[int, int]] = {"tokens": (0, 0), "window": (0, 0)}
ARGS: dict[str, tuple[str, ...]] = {}

CELL, GAP = 16, 2  # a cell and the gap between cells, in SVG units (px at natural size)
LEFT = 24  # the row numbers' column
TOP = 38  # the grid's title line and the column numbers above the grid
SINK_GAP = 6  # between the sink column and token 1's column
MIN_WIDTH = 180  # the longest grid title fits at 12 px
PANELS = ("causal", "window", "sink")


def sees(kind: str, query: int, key: int, window: int) -> bool:
    """Whether the query of token `query` may look at the key of token `key` (both from 1)."""
    if kind == "window":
        return query - window < key <= query
    return key <= query  # causal, and the tokens of the sink grid


def rule_words(kind: str, tokens: int, window: int) -> tuple[str, str]:
    """A grid's title and its description: what a row and a column are, and every cell's rule."""
    grid = (f"A grid of {tokens} rows and {tokens} columns{', and a sink column to the left' if kind == 'sink' else ''}. "
            f"Row i is the query of token i, column j the key of token j, both counted from 1; a filled cell means that "
            f"token i's query may look at token j's key, an empty one that it may not.")
    if kind == "causal":
        return ("Causal: every earlier token",
                f"{grid} Row i fills columns 1 to i: each token sees itself and every token before it, and none after it. "
                f"Row 1 has 1 filled cell, row {tokens} has {tokens}.")
    if kind == "window":
        return (f"Sliding window of {whole(window)}",
                f"{grid} Row i fills columns i − {window - 1} to i, starting at column 1 in the first {window} rows: each token sees "
                f"itself and the {window - 1} tokens before it, {window} in all, and older tokens fall out of the window. "
                f"No row has more than {window} filled cells.")
    return ("Causal, with a sink",
            f"{grid} The sink column is filled in every row: it is a score each head learns, which belongs to no token, so a "
            f"query can put weight there and take nothing from any token. Besides it, row i fills columns 1 to i, as in the causal grid.")


def panel(kind: str, tokens: int, window: int) -> dict:
    left = LEFT + (CELL + SINK_GAP if kind == "sink" else 0)
    step = CELL + GAP
    cells = []
    for q in range(1, tokens + 1):
        y = TOP + (q - 1) * step
        if kind == "sink":
            cells.append({"x": px(LEFT), "y": px(y), "row": q, "col": "sink", "on": True, "sink": True})
        for k in range(1, tokens + 1):
            cells.append({"x": px(left + (k - 1) * step), "y": px(y), "row": q, "col": k, "on": sees(kind, q, k, window), "sink": False})
    title, desc = rule_words(kind, tokens, window)
    width = left + tokens * step
    return {
        "kind": kind, "title": title, "desc": desc, "cells": cells, "cell": px(CELL),
        "width": px(max(width, MIN_WIDTH)), "height": px(TOP + tokens * step),
        "cols": [{"x": px(left + (k - 1) * step + CELL / 2), "n": k} for k in range(1, tokens + 1)],
        "rows": [{"y": px(TOP + (q - 1) * step + CELL / 2 + 4), "n": q} for q in range(1, tokens + 1)],
        "num_y": px(TOP - 5), "row_x": px(LEFT - 5), "title_y": px(12),
        "sink_x": px(LEFT + CELL / 2) if kind == "sink" else None,
        "on": sum(c["on"] for c in cells),
    }


def render(d: Masks, ctx: Ctx) -> str:
    n = ctx.next_number()
    ctx.register(d, Figure("masks", n, d, numbers={"tokens": whole(d.tokens), "window": whole(d.window)}))
    panels = [panel(kind, d.tokens, d.window) for kind in PANELS]
    return templating.render("masks.html", n=n, d=d, panels=panels)


def ref(ref: Ref, fig: Figure) -> str:
    return fig.numbers[ref.name]
