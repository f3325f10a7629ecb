"""`layernorm` figures: one real vector before and after layer 1's layer norm (ln_1), from
traces/tiny/vectors.json: the sum of token and position rows, the same numbers shifted to mean 0
and scaled to standard deviation 1, and ln_1's output (that, times its learned weight, plus its
bias). Statistics and the first numbers in a table; course.js plots all of them."""

from __future__ import annotations

import numpy as np

from ..lessons.directives import Directive
from ..lessons.refs import Ref
from . import templating, vector_data
from .context import Ctx, Figure
from .format import tok, whole
from .ref_common import ref_fail
from .token_names import resolve_token
from .vector_data import num

REFS = {"mean": (1, 1), "std": (1, 1), "min": (1, 1), "max": (1, 1), "value": (2, 2), "token": (0, 0), "width": (0, 0), "position": (0, 0)}
# the arguments' names, as the reference for authors writes them: {{ id.mean(stage) }}
ARGS: dict[str, tuple[str, ...]] = {
    "mean": ("stage",), "std": ("stage",), "min": ("stage",), "max": ("stage",), "value": ("stage", "dimension"),
}
PARTS = ("before", "normalised", "after")
STORED = {"before": "sum", "normalised": "normalised", "after": "ln1"}
NAMES = {"before": "Before: token row + position row", "normalised": "Mean 0, standard deviation 1", "after": "After the learned scale and shift"}
FIRST_DIMS = 8
PAGE_DECIMALS = 3


def stats(x: np.ndarray) -> dict[str, float]:
    return {"mean": float(x.mean()), "std": float(x.std()), "min": float(x.min()), "max": float(x.max())}


def render(d: Directive, ctx: Ctx) -> str:
    vec = vector_data.load(d, ctx, sentences=[d.sentence])
    if vec is None:
        return vector_data.pending(d, ctx, f"“{d.sentence}”")
    s = vec.sentence(d.sentence)
    i = len(s["tokens"]) - 1 if d.token is None else resolve_token(d.token, s["tokens"], d.where, "layernorm: 'token'")
    vectors = {p: np.array(s[STORED[p]][i]) for p in PARTS}  # (width,) each
    n = ctx.next_number()
    ctx.register(d, Figure("layernorm", n, d, focus=i, numbers={"vectors": vectors, "token": s["tokens"][i], "width": vec.width}))
    rows = [{"name": NAMES[p], "stats": {k: num(v) for k, v in stats(vectors[p]).items()}, "first": [num(x, 3) for x in vectors[p][:FIRST_DIMS]]} for p in PARTS]
    payload = {"token": s["tokens"][i], "names": [NAMES[p] for p in PARTS], "vectors": [np.round(vectors[p], PAGE_DECIMALS).tolist() for p in PARTS]}
    return templating.render("layernorm.html", n=n, d=d, token=s["tokens"][i], position=i, rows=rows, first=FIRST_DIMS,
                             width=whole(vec.width), prov=vector_data.provenance(vec), payload=payload)


def ref(ref: Ref, fig: Figure) -> str:
    nums = fig.numbers
    if ref.name == "token":
        return tok(nums["token"])
    if ref.name == "width":
        return whole(nums["width"])
    if ref.name == "position":
        return str(fig.focus)
    part = ref.args[0]
    if part not in PARTS:
        ref_fail(ref, f"unknown part {part!r}", f"use one of: {', '.join(PARTS)}")
    x = nums["vectors"][part]
    if ref.name == "value":
        return num(x[vector_data.dim_arg(ref, ref.args[1], nums["width"])], 3)
    return num(stats(x)[ref.name])
