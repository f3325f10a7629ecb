"""`softmax` widgets: the reader edits scores and sees the weights; references to its numbers."""

from __future__ import annotations

import math
import re

import numpy as np

from ..lessons.directives import Softmax
from ..lessons.refs import Ref, lookalike_note
from . import templating
from .context import Ctx, Figure
from .format import f2, f3
from .ref_common import int_arg, ref_fail

REFS = {"weight": (1, 1), "exp": (1, 1), "total": (0, 0)}
# the arguments' names, as the reference for authors writes them: {{ id.weight(label) }}
ARGS: dict[str, tuple[str, ...]] = {"weight": ("label",), "exp": ("label",)}
SCIENTIFIC_FROM = 1e6  # e^x and the total from here on are written like 1.97e+347 (they overflow a float at e^710)


def softmax(xs) -> np.ndarray:
    x = np.asarray(xs, dtype=np.float64)
    e = np.exp(x - x.max())
    return e / e.sum()


def render(d: Softmax, ctx: Ctx) -> str:
    w = softmax(d.scores)
    n = ctx.next_number()
    ctx.register(d, Figure("softmax", n, d, numbers={"scores": np.array(d.scores), "weights": w, "labels": d.labels}))
    return templating.render(
        "softmax.html", n=n, rows=list(zip(d.labels, d.scores, w.tolist())),
        payload={"scores": list(d.scores), "labels": list(d.labels)},
    )


def exp_text(log_value: float) -> str:
    """e^x, or a sum of them given as its natural log: 2 decimals below SCIENTIFIC_FROM, then
    scientific notation with 3 significant digits (computed from the log, so it never overflows)."""
    if log_value < math.log(SCIENTIFIC_FROM):
        return f2(math.exp(log_value))
    exponent10 = log_value / math.log(10)
    power = math.floor(exponent10)
    mantissa = 10 ** (exponent10 - power)
    if round(mantissa, 2) >= 10:
        mantissa, power = mantissa / 10, power + 1
    return f"{mantissa:.2f}e+{power:02d}"


def ref(ref: Ref, fig: Figure) -> str:
    """A score is named by its label first (`labels: [2, 1]`: `weight(1)` is the score labelled
    1, the second); `#2` is always a position, and a bare number that is no label a position."""
    nums = fig.numbers
    labels = list(nums["labels"])
    scores = [float(x) for x in nums["scores"]]
    if ref.name == "total":
        top = max(scores)
        return exp_text(top + math.log(sum(math.exp(x - top) for x in scores)))
    a = ref.args[0]
    if labels.count(a) == 1:
        i = labels.index(a)
    elif labels.count(a) > 1:
        ref_fail(ref, f"{len([x for x in labels if x == a])} scores are labelled {a!r} (labels: {', '.join(labels)})", "give its position instead, like #2")
    elif re.fullmatch(r"#?\d+", a):
        i = int_arg(ref, a.lstrip("#"), "score", 1, len(labels)) - 1
    else:
        note = lookalike_note(a, [(f"#{i + 1}", t) for i, t in enumerate(labels)])
        ref_fail(ref, f"no single score labelled {a!r} (labels: {', '.join(labels)}){note}", "give a label or a position from 1")
    if ref.name == "weight":
        return f3(nums["weights"][i])
    return exp_text(scores[i])
