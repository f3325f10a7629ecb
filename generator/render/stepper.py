"""`stepper` figures: a made-up example of one attention step (dot products, ÷√d, softmax,
mixing values, result), and the references to its numbers."""

from __future__ import annotations

import math
import re

import numpy as np

from ..lessons import directives as D
from ..lessons.refs import Ref, lookalike_note
from . import templating
from .context import Ctx, Figure
from .format import esc, f2, vec2
from .refs import int_arg, ref_fail

REFS = {"score": (2, 2), "scaled": (2, 2), "weight": (2, 2), "out": (1, 1), "sqrtd": (0, 0), "tokens": (0, 0)}


def numbers(d: D.Stepper) -> dict:
    q = np.array(d.query, dtype=np.float64)  # (token, d)
    k = np.array(d.key, dtype=np.float64)  # (token, d)
    v = np.array(d.value, dtype=np.float64)  # (token, d_v)
    T, dim = q.shape
    scores = q @ k.T  # (query, key)
    sqrtd = math.sqrt(dim)
    scaled = scores / sqrtd  # (query, key)
    mask = np.triu(np.ones((T, T), dtype=bool), 1)  # (query, key): key after query
    masked = np.where(mask, -np.inf, scaled)  # (query, key)
    e = np.exp(masked - masked.max(axis=1, keepdims=True))  # (query, key)
    weights = e / e.sum(axis=1, keepdims=True)  # (query, key)
    out = weights @ v  # (query, d_v)
    return {"q": q, "k": k, "v": v, "scores": scores, "sqrtd": sqrtd, "dim": dim, "scaled": scaled, "mask": mask, "weights": weights, "out": out}


def steps(d: D.Stepper, nums: dict) -> list[tuple[str, str, tuple | None]]:
    """(title, text, (header, rows) or None) of the five steps; texts and cells are HTML."""
    f, toks = d.focus, d.tokens
    q, k, v = nums["q"], nums["k"], nums["v"]
    visible = list(range(f + 1))
    later = [toks[j] for j in range(f + 1, len(toks))]
    w = nums["weights"][f]  # (key,)
    name = esc(toks[f])
    hidden = f" {esc(', '.join(later))} come{'s' if len(later) == 1 else ''} later, so {name} cannot see {'it' if len(later) == 1 else 'them'}." if later else ""
    dots = [
        [esc(toks[j]), vec2(k[j]), " + ".join(f"{f2(a)}×{f2(b)}" for a, b in zip(q[f], k[j])), f2(nums["scores"][f, j])]
        for j in visible
    ]
    ex = np.exp(nums["scaled"][f, : f + 1])  # (visible key,)
    best = max(visible, key=lambda j: (w[j], -j))
    dim, sqrtd = nums["dim"], f2(nums["sqrtd"])
    return [
        ("dot products", f"{name}’s query is {vec2(q[f])}. Multiply it with each key it can see, entry by entry, and add up.{hidden}",
         (["Token", "Key", "Query × key", "Score"], dots)),
        (f"divide by √{dim}", f"The vectors have {dim} entries, so every score is divided by √{dim} = {sqrtd}.",
         (["Token", "Score", f"Score ÷ {sqrtd}"], [[esc(toks[j]), f2(nums["scores"][f, j]), f2(nums["scaled"][f, j])] for j in visible])),
        ("softmax", f"Raise e to each scaled score and divide by their total, {f2(ex.sum())}. The shares sum to 1.",
         (["Token", "Scaled score", "e^score", "Share"], [[esc(toks[j]), f2(nums["scaled"][f, j]), f2(ex[j]), f2(w[j])] for j in visible])),
        ("mix the values", "Scale each value by its share and add them up.",
         (["Token", "Share", "Value", "Share × value"], [[esc(toks[j]), f2(w[j]), vec2(v[j]), vec2(w[j] * v[j])] for j in visible])),
        ("result", f"{name}’s output is {vec2(nums['out'][f])}. It is mostly {esc(toks[best])}’s value, because {name} gives {esc(toks[best])} {f2(w[best])} of its attention.", None),
    ]


def render(d: D.Stepper, ctx: Ctx) -> str:
    nums = numbers(d)
    f = d.focus
    w = nums["weights"][f]  # (key,)
    payload = {
        "tokens": list(d.tokens),
        "focus": f,
        "query": nums["q"].tolist(),
        "key": nums["k"].tolist(),
        "value": nums["v"].tolist(),
        "scores": nums["scores"][f].tolist(),
        "scaled": nums["scaled"][f].tolist(),
        "weights": [0.0 if j > f else float(w[j]) for j in range(len(d.tokens))],
        "out": nums["out"][f].tolist(),
    }
    n = ctx.next_number()
    ctx.register(d, Figure("stepper", n, d, focus=f, numbers=nums))
    html_steps = [(templating.html(t), templating.html(x), None if tb is None else (tb[0], [[templating.html(c) for c in r] for r in tb[1]])) for t, x, tb in steps(d, nums)]
    return templating.render("stepper.html", n=n, focus=f, steps=html_steps, payload=payload)


def ref(ref: Ref, fig: Figure) -> str:
    d: D.Stepper = fig.directive  # type: ignore[assignment]
    nums = fig.numbers
    toks = list(d.tokens)

    def pos(a: str) -> int:
        if re.fullmatch(r"#\d+", a):
            i = int(a[1:])
            if 1 <= i <= len(toks):
                return i - 1
        elif a in toks and toks.count(a) == 1:
            return toks.index(a)
        note = lookalike_note(a, [(f"#{i + 1}", t) for i, t in enumerate(toks)])
        ref_fail(ref, f"no single token {a!r} in this stepper (tokens: {', '.join(toks)}){note}", "name one of these tokens, or give its position like #2")

    if ref.name == "sqrtd":
        return f2(nums["sqrtd"])
    if ref.name == "tokens":
        return str(len(toks))
    if ref.name == "out":
        a = ref.args[0]
        if re.fullmatch(r"\d+", a):
            i = int_arg(ref, a, "entry", 1, nums["out"].shape[1])
            return f2(nums["out"][d.focus, i - 1])
        return vec2(nums["out"][pos(a)])
    q, k = pos(ref.args[0]), pos(ref.args[1])
    if ref.name == "score":
        return f2(nums["scores"][q, k])
    if nums["mask"][q, k]:
        ref_fail(ref, f"{toks[k]!r} comes after {toks[q]!r}, which cannot look ahead", "name an earlier token second")
    if ref.name == "scaled":
        return f2(nums["scaled"][q, k])
    return f2(nums["weights"][q, k])
