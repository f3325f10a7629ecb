"""`softmax` widgets: the reader edits scores and sees the weights; references to its numbers."""

from __future__ import annotations

import math
import re

import numpy as np

from ..lessons import directives as D
from ..lessons.refs import Ref
from . import templating
from .context import Ctx, Figure
from .format import f2, f3
from .refs import int_arg, ref_fail

REFS = {"weight": (1, 1), "exp": (1, 1), "total": (0, 0)}


def softmax(xs) -> np.ndarray:
    x = np.asarray(xs, dtype=np.float64)
    e = np.exp(x - x.max())
    return e / e.sum()


def render(d: D.Softmax, ctx: Ctx) -> str:
    w = softmax(d.scores)
    n = ctx.next_number()
    ctx.register(d, Figure("softmax", n, d, numbers={"scores": np.array(d.scores), "weights": w, "labels": d.labels}))
    return templating.render(
        "softmax.html", n=n, rows=list(zip(d.labels, d.scores, w.tolist())),
        payload={"scores": list(d.scores), "labels": list(d.labels)},
    )


def ref(ref: Ref, fig: Figure) -> str:
    nums = fig.numbers
    labels = list(nums["labels"])
    if ref.name == "total":
        return f2(float(np.exp(nums["scores"]).sum()))
    a = ref.args[0]
    if re.fullmatch(r"\d+", a):
        i = int_arg(ref, a, "score", 1, len(labels)) - 1
    elif labels.count(a) == 1:
        i = labels.index(a)
    else:
        ref_fail(ref, f"no single score labelled {a!r} (labels: {', '.join(labels)})", "give a label or a position from 1")
    if ref.name == "weight":
        return f3(nums["weights"][i])
    return f2(math.exp(nums["scores"][i]))
