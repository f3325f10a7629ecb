"""`embedding` figures: a sentence's token rows, position rows and their sum (the input of layer
1), tokens × dimensions, from traces/tiny/vectors.json. A Plotly heatmap of all the numbers and a
table of the first FIRST_DIMS of each, which is what readers without JavaScript get."""

from __future__ import annotations

import numpy as np

from ..lessons.directives import Directive
from ..lessons.refs import Ref
from . import templating, vector_data
from .context import Ctx, Figure
from .format import whole
from .ref_common import ref_fail
from .vector_data import num

REFS = {"width": (0, 0), "tokens": (0, 0), "value": (2, 3), "norm": (1, 2), "id": (1, 1), "position": (1, 1)}
# the arguments' names, as the reference for authors writes them: {{ id.value(token, dimension, row) }}
ARGS: dict[str, tuple[str, ...]] = {
    "value": ("token", "dimension", "row"), "norm": ("token", "row"), "id": ("token",), "position": ("token",),
}
PARTS = ("token", "position", "sum")
PART_NAMES = {"token": "token row", "position": "position row", "sum": "sum"}
FIRST_DIMS = 8  # columns of the no-JS table; the heatmap shows every dimension
PAGE_DECIMALS = 3  # numbers in the page's JSON (the heatmap's hover shows 2)


def render(d: Directive, ctx: Ctx) -> str:
    vec = vector_data.load(d, ctx, sentences=[d.sentence])
    if vec is None:
        return vector_data.pending(d, ctx, f"“{d.sentence}”")
    s = vec.sentence(d.sentence)
    arrays = {p: np.array(s[p]) for p in PARTS}  # (token, width) each
    n = ctx.next_number()
    ctx.register(d, Figure("embedding", n, d, numbers={"sentence": s, "arrays": arrays, "width": vec.width}))
    rows = [
        {"tok": t, "parts": [(PART_NAMES[p], [num(x, 3) for x in arrays[p][i, :FIRST_DIMS]], num(np.linalg.norm(arrays[p][i]))) for p in PARTS]}
        for i, t in enumerate(s["tokens"])
    ]
    payload = {
        "model": d.model, "text": s["text"], "width": vec.width,
        "tokens": [{k: t[k] for k in ("id", "text", "display", "spoken")} for t in s["tokens"]],
        "parts": {p: np.round(arrays[p], PAGE_DECIMALS).tolist() for p in PARTS},
    }
    return templating.render("embedding.html", n=n, d=d, rows=rows, width=whole(vec.width), first=FIRST_DIMS, n_tokens=len(s["tokens"]),
                             prov=vector_data.provenance(vec, d.caption), payload=payload)


def part_arg(ref: Ref, args: tuple[str, ...], at: int, default: str) -> str:
    part = args[at] if len(args) > at else default
    if part not in PARTS:
        ref_fail(ref, f"unknown part {part!r}", f"use one of: {', '.join(PARTS)}")
    return part


def ref(ref: Ref, fig: Figure) -> str:
    nums = fig.numbers
    tokens = nums["sentence"]["tokens"]
    if ref.name == "width":
        return whole(nums["width"])
    if ref.name == "tokens":
        return str(len(tokens))
    i = vector_data.token_index(ref, tokens, ref.args[0])
    if ref.name == "id":
        return str(tokens[i]["id"])
    if ref.name == "position":
        return str(i)
    if ref.name == "norm":
        return num(np.linalg.norm(nums["arrays"][part_arg(ref, ref.args, 1, "token")][i]))
    dim = vector_data.dim_arg(ref, ref.args[1], nums["width"])
    return num(nums["arrays"][part_arg(ref, ref.args, 2, "sum")][i, dim], 3)
