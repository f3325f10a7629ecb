"""`arrows` figures: a stepper's made-up vectors drawn in a plane, at build time, as static SVG.
`show: scores` draws steps 1 to 3 of the stepper named by `stepper:`: the focus token's query and
the keys it can see as arrows, each key's shadow on the query's line (the dot product as a
projection), then the scores, the scaled scores and the softmax shares as bars. `show: mixing`
draws steps 4 and 5: each value arrow scaled by its share, then the scaled arrows added head to
tail into the result; `show: all` (the default) draws both, all five steps in one figure. Every number is the stepper's own (its Figure.numbers, and stepper.view()
for the text), so nothing is typed twice; the words are in arrows.html."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..lessons.diagram_kinds import Arrows
from ..lessons.errors import LessonError
from ..lessons.refs import Ref
from . import stepper, templating
from .architecture import px
from .context import Ctx, Figure
from .format import f2_or_whole as num
from .ref_common import ref_fail

REFS: dict[str, tuple[int, int]] = {}
ARGS: dict[str, tuple[str, ...]] = {}

PLOT = 200  # the plane's square, in SVG units
SIDE = 74  # room left and right of the square for the arrows' labels
TOP = 16  # room above it for the panel's title
BOTTOM = 10
LABEL_STEP = 14  # a label this close to another moves down a line
BAR_LABELS = 52  # the bars' token column
BAR_AREA, BAR_TEXT = 56, 38  # one bar column: the bars, then their numbers (all fit a 343 px phone column)
ROW = 24


@dataclass(frozen=True)
class Plane:
    """Maps the made-up numbers onto the square, one scale for both axes so a right angle looks
    like one (the projections are drawn at right angles)."""

    cx: float  # the middle of the numbers shown, on each axis
    cy: float
    scale: float  # SVG units per unit
    lo: float  # the numbers' range shown, on both axes around (cx, cy)
    hi: float

    @classmethod
    def around(cls, points: np.ndarray) -> "Plane":  # points: (point, 2), the origin among them
        lo, hi = points.min(axis=0), points.max(axis=0)  # (2,), (2,)
        span = max(float((hi - lo).max()), 1.0) * 1.3  # a margin so no tip touches the edge
        cx, cy = (lo + hi) / 2  # ()
        return cls(float(cx), float(cy), PLOT / span, -span / 2, span / 2)

    def x(self, v: float) -> float:
        return SIDE + PLOT / 2 + (v - self.cx) * self.scale

    def y(self, v: float) -> float:
        return TOP + PLOT / 2 - (v - self.cy) * self.scale

    def at(self, p) -> tuple[str, str]:
        return px(self.x(float(p[0]))), px(self.y(float(p[1])))

    def grid(self) -> dict:
        """Whole-number grid lines where they are few enough to read, and the two axes."""
        xs = range(math.ceil(self.cx + self.lo), math.floor(self.cx + self.hi) + 1)
        ys = range(math.ceil(self.cy + self.lo), math.floor(self.cy + self.hi) + 1)
        few = len(xs) <= 12 and len(ys) <= 12
        return {
            "xs": [px(self.x(v)) for v in xs if v != 0] if few else [],
            "ys": [px(self.y(v)) for v in ys if v != 0] if few else [],
            "origin": self.at((0, 0)), "left": px(SIDE), "right": px(SIDE + PLOT), "top": px(TOP), "bottom": px(TOP + PLOT), "size": px(PLOT),
        }


class Labels:
    """Labels at arrow tips: right of a tip right of the middle, else left; one that would sit on
    an earlier label moves down a line."""

    def __init__(self) -> None:
        self.placed: list[tuple[float, float]] = []

    def at(self, plane: Plane, p, text: str) -> dict:
        x, y = plane.x(float(p[0])), plane.y(float(p[1]))
        right = x >= SIDE + PLOT / 2
        lx, ly = x + (6 if right else -6), y + 4
        return self.put(lx, ly, "start" if right else "end", text)

    def beside(self, plane: Plane, start, end, text: str, avoid=None) -> dict:
        """A label beside the middle of an arrow, on the side farther from the arrow `avoid`
        ((start, end), the result drawn over the parts), else on its left as it points."""
        (x1, y1), (x2, y2) = (plane.x(float(start[0])), plane.y(float(start[1]))), (plane.x(float(end[0])), plane.y(float(end[1])))
        length = math.hypot(x2 - x1, y2 - y1) or 1.0
        nx, ny = (y2 - y1) / length, -(x2 - x1) / length  # (screen): the left-hand normal
        mx, my = (x1 + x2) / 2, (y1 + y2) / 2
        if avoid is not None:
            (ax, ay), (bx, by) = [(plane.x(float(p[0])), plane.y(float(p[1]))) for p in avoid]
            def gap(sign: int) -> float:
                return distance_to_segment(mx + 12 * sign * nx, my + 12 * sign * ny, ax, ay, bx, by)
            if gap(-1) > gap(1):
                nx, ny = -nx, -ny
        lx, ly = mx + 12 * nx, my + 12 * ny + 4
        return self.put(lx, ly, "start" if nx > 0.3 else "end" if nx < -0.3 else "middle", text)

    def put(self, lx: float, ly: float, anchor: str, text: str) -> dict:
        while any(abs(ly - py) < LABEL_STEP and abs(lx - px_) < 60 for px_, py in self.placed):
            ly += LABEL_STEP
        self.placed.append((lx, ly))
        return {"x": px(lx), "y": px(ly), "anchor": anchor, "text": text}


def distance_to_segment(x: float, y: float, ax: float, ay: float, bx: float, by: float) -> float:
    dx, dy = bx - ax, by - ay
    t = max(0.0, min(1.0, ((x - ax) * dx + (y - ay) * dy) / ((dx * dx + dy * dy) or 1.0)))
    return math.hypot(x - ax - t * dx, y - ay - t * dy)


def arrow(plane: Plane, start, end) -> dict:
    (x1, y1), (x2, y2) = plane.at(start), plane.at(end)
    return {"x1": x1, "y1": y1, "x2": x2, "y2": y2, "zero": bool(np.allclose(start, end))}


def bars(rows: list[tuple[str, list[float], list[str]]], columns: list[tuple[str, float | None, float | None]]) -> dict:
    """Rows of bars, one column per step: (token, values, values as text) and (heading, lo, hi);
    a column with no fixed range spans its values and 0, so negative scores point left."""
    cols = []
    for c, (heading, lo, hi) in enumerate(columns):
        values = [r[1][c] for r in rows]
        lo = min(0.0, *values) if lo is None else lo
        hi = max(0.0, *values) if hi is None else hi
        span = (hi - lo) or 1.0
        x0 = BAR_LABELS + c * (BAR_AREA + BAR_TEXT)
        zero = x0 + BAR_AREA * (0 - lo) / span
        cells = []
        for i, r in enumerate(rows):
            v = r[1][c]
            end = x0 + BAR_AREA * (v - lo) / span
            cells.append({"x": px(min(zero, end)), "w": px(abs(end - zero)), "y": px(30 + i * ROW), "text": r[2][c],
                          "tx": px(x0 + BAR_AREA + 4), "ty": px(30 + i * ROW + 12)})
        cols.append({"heading": heading, "x": px(x0), "zero": px(zero), "cells": cells})
    height = 30 + len(rows) * ROW + 4
    return {"width": px(BAR_LABELS + len(columns) * (BAR_AREA + BAR_TEXT)), "height": px(height), "bottom": px(height - 4),
            "tokens": [{"text": r[0], "y": px(30 + i * ROW + 12)} for i, r in enumerate(rows)], "cols": cols}


def scores_view(d, nums: dict, s: dict) -> dict:
    """Steps 1-3: the query and the keys it can see, each key's shadow on the query's line, the bars."""
    f, toks = d.focus, list(d.tokens)
    seen = range(f + 1)
    q = nums["q"][f]  # (2,)
    qq = float(q @ q)
    feet = {j: (float(nums["k"][j] @ q) / qq) * q if qq else np.zeros(2) for j in seen}  # each (2,)
    plane = Plane.around(np.array([[0, 0], q, *(nums["k"][j] for j in seen), *feet.values()]))  # (point, 2)
    reach = 2 * (plane.hi - plane.lo)  # the query's line, drawn past both edges and clipped
    unit = q / math.sqrt(qq) if qq else np.zeros(2)  # (2,)
    labels = Labels()
    keys = [{"arrow": arrow(plane, (0, 0), nums["k"][j]), "foot": plane.at(feet[j]), "tip": plane.at(nums["k"][j]),
             "label": labels.at(plane, nums["k"][j], f"key ({toks[j]})")} for j in seen]
    query = {"arrow": arrow(plane, (0, 0), q), "label": labels.at(plane, q, f"query ({toks[f]})"),
             "line": arrow(plane, -reach * unit, reach * unit)}
    rows = [(toks[j], [float(nums["scores"][f, j]), float(nums["scaled"][f, j]), float(nums["weights"][f, j])],
             [num(nums["scores"][f, j]), num(nums["scaled"][f, j]), num(nums["weights"][f, j])]) for j in seen]
    chart = bars(rows, [("1. Score", None, None), (f"2. ÷ {s['sqrtd']}", None, None), ("3. Share", 0.0, 1.0)])
    return {"plane": plane.grid(), "key_arrows": keys, "query": query, "bars": chart, "qlen": num(math.sqrt(qq)),
            "size": {"w": px(PLOT + 2 * SIDE), "h": px(TOP + PLOT + BOTTOM)}}


def mixing_view(d, nums: dict, s: dict) -> dict:
    """Steps 4-5: each value and its scaled copy, then the scaled copies head to tail."""
    f, toks = d.focus, list(d.tokens)
    seen = range(f + 1)
    w, v = nums["weights"][f], nums["v"]  # (key,), (token, 2)
    parts = [w[j] * v[j] for j in seen]  # each (2,)
    ends = np.cumsum(np.array(parts), axis=0)  # (key, 2): where each scaled value ends, head to tail
    plane = Plane.around(np.array([[0, 0], *(v[j] for j in seen), *parts, *ends]))  # (point, 2)
    step4, step5 = Labels(), Labels()
    values = [{"full": arrow(plane, (0, 0), v[j]), "scaled": arrow(plane, (0, 0), parts[i]),
               "label": step4.at(plane, v[j], f"value ({toks[j]})")} for i, j in enumerate(seen)]
    starts = [np.zeros(2), *ends[:-1]]
    out = nums["out"][f]  # (2,)
    chain = [{"arrow": arrow(plane, starts[i], ends[i]),
              "label": step5.beside(plane, starts[i], ends[i], f"{num(w[j])} × {toks[j]}", avoid=(np.zeros(2), out))}
             for i, j in enumerate(seen)]
    return {"plane": plane.grid(), "value_arrows": values, "chain": chain, "out": arrow(plane, (0, 0), out),
            "out_label": step5.at(plane, out, f"result ({toks[f]})"), "size": {"w": px(PLOT + 2 * SIDE), "h": px(TOP + PLOT + BOTTOM)}}


def stepper_figure(d: Arrows, ctx: Ctx) -> Figure:
    """The stepper the figure draws, above on the page, with vectors of two numbers."""
    where = d.option_where.get("stepper", d.where)
    fig = ctx.figures.get(d.stepper)
    if fig is None or fig.kind != "stepper":
        steppers = ", ".join(sorted(k for k, f in ctx.figures.items() if f.kind == "stepper")) or "none"
        raise LessonError(where, f"arrows: stepper '{d.stepper}' is not the id of a stepper figure above on this page (steppers above: {steppers})",
                          "give `stepper:` the id of a stepper figure that comes before this one")
    nums = fig.numbers
    for what, drawn in (("queries and keys", ("q", "k")), ("values", ("v",))):
        if d.show == {"values": "scores", "queries and keys": "mixing"}[what]:
            continue  # this figure does not draw them
        sizes = sorted({int(nums[m].shape[1]) for m in drawn})
        if sizes == [2]:
            continue
        raise LessonError(where, f"arrows: the {what} of stepper '{d.stepper}' have {' or '.join(map(str, sizes))} numbers, and only 2 can be drawn as arrows in a plane",
                          f"give that stepper's {what} 2 numbers each, or draw only the other steps (`show: scores` or `show: mixing`)")
    return fig


def render(d: Arrows, ctx: Ctx) -> str:
    fig = stepper_figure(d, ctx)
    sd, nums = fig.directive, fig.numbers
    s = stepper.view(sd, nums)  # the stepper's own text of every number
    n = ctx.next_number()
    ctx.register(d, Figure("arrows", n, d, focus=sd.focus, numbers=nums))
    view = {"scores": scores_view(sd, nums, s) if d.show in ("all", "scores") else None,
            "mixing": mixing_view(sd, nums, s) if d.show in ("all", "mixing") else None}
    return templating.render("arrows.html", n=n, d=d, s=s, g=view, stepper_n=fig.number)


def ref(ref: Ref, fig: Figure) -> str:  # REFS is empty: check_arity refuses every name first
    ref_fail(ref, "an arrows figure has no numbers of its own", "refer to the stepper's: {{ toy.score(she, Lily) }}")
