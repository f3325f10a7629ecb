"""`stepper` figures: a made-up example of one attention step. A set-up table of each token's
query, key and value, then five steps (the full score grid, ÷√d, softmax, mixing the values, the
result) for the focus token, and the references to its numbers. Every number is computed here
from the directive's vectors; the words are in stepper.html. Where the tables' rounded numbers,
worked by hand, land a little off the tables' own (e to a rounded score, a rounded share times a
backpack, shares that add up to 1.01), the page says nothing: those checks would break the
step-through, so they are sentences of the chapter's notebook instead (rounding_notes)."""

from __future__ import annotations

import math
import re

import numpy as np

from ..lessons.directives import Stepper
from ..lessons.refs import Ref, lookalike_note
from . import templating
from .context import Ctx, Figure
from .format import f2_or_whole as num
from .format import f3, shown, true_minus
from .format import vec2_or_whole as vec
from .ref_common import int_arg, ref_fail

REFS = {
    "score": (2, 2), "scaled": (2, 2), "weight": (2, 2), "out": (1, 1), "sqrtd": (0, 0), "tokens": (0, 0),
    "query": (1, 1), "key": (1, 1), "value": (1, 1), "dot": (2, 2), "dim": (0, 0),
}
# the arguments' names, as the reference for authors writes them: {{ id.score(from, to) }}
ARGS: dict[str, tuple[str, ...]] = {
    "score": ("from", "to"), "scaled": ("from", "to"), "weight": ("from", "to"), "out": ("token",),
    "query": ("token",), "key": ("token",), "value": ("token",), "dot": ("from", "to"),
}
VECTORS = {"query": "q", "key": "k", "value": "v"}


def factor(x: float) -> str:
    """A number after an operator, bracketed when negative: 2 × (−1), not 2 × −1."""
    text = num(x)
    return f"({text})" if text.startswith("\u2212") else text


def dot_text(q, k) -> str:
    """The dot product written out, as the reader would work it: '−1 × 2 + (−0.50) × (−1)'."""
    return " + ".join(f"{num(a) if i == 0 else factor(a)} × {factor(b)}" for i, (a, b) in enumerate(zip(q, k)))


def exact_text(x: float) -> str:
    """A product of two numbers of two decimals as a reader works it out, every digit kept:
    0.19 × 0.50 -> '0.095'."""
    return true_minus(f"{x:.4f}".rstrip("0").rstrip("."))


def mix_by_hand(d: Stepper, nums: dict) -> dict:
    """Step 4 multiplied as a reader would, from the shares and backpacks as shown: the first
    product whose table entry (from the unrounded share) reads otherwise, and the last column
    added up as shown where it is not the result."""
    f, toks = d.focus, list(d.tokens)
    w, v = nums["weights"][f], nums["v"]  # (key,), (token, d_v)
    visible = range(f + 1)
    differs = next(((toks[j], num(w[j]), factor(v[j, c]), exact_text(shown(w[j]) * shown(v[j, c])), num(w[j] * v[j, c]), f3(w[j]))
                    for j in visible for c in range(v.shape[1])
                    if shown(shown(w[j]) * shown(v[j, c])) != shown(w[j] * v[j, c])), None)
    column = [sum(shown(w[j] * v[j, c]) for j in visible) for c in range(v.shape[1])]  # (d_v,)
    adds_up = all(shown(a) == shown(b) for a, b in zip(column, nums["out"][f]))
    return {"mix_differs": differs, "mix_sum": None if adds_up else vec(column)}


def numbers(d: Stepper) -> dict:
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


def view(d: Stepper, nums: dict) -> dict:
    """What stepper.html writes, as text: tokens, vectors and numbers, formatted by num()."""
    f, toks = d.focus, list(d.tokens)
    q, k, v, w = nums["q"], nums["k"], nums["v"], nums["weights"][f]  # w: (key,)
    visible = range(f + 1)
    ex = np.exp(nums["scaled"][f, : f + 1])  # (visible key,)
    best = max(visible, key=lambda j: (w[j], -j))
    # what a reader adding up or raising e by hand gets from the numbers as shown
    shares_shown = sum(shown(w[j]) for j in visible)
    # compared as the numbers they read, not as text: num() writes 1 bare and 1.001 as 1.00
    exp_by_hand = [math.exp(shown(nums["scaled"][f, j])) for j in visible]
    return {
        "focus": f,
        "name": toks[f],
        "later": toks[f + 1 :],
        "dim": nums["dim"],
        "sqrtd": num(nums["sqrtd"]),
        "setup": [(t, vec(q[i]), vec(k[i]), vec(v[i])) for i, t in enumerate(toks)],
        "grid": [(t, [num(s) for s in nums["scores"][i]]) for i, t in enumerate(toks)],
        "tokens": toks,
        "query": vec(q[f]),
        "dots": [(toks[j], vec(k[j]), dot_text(q[f], k[j]), num(nums["scores"][f, j])) for j in visible],
        "scaled": [(toks[j], num(nums["scores"][f, j]), num(nums["scaled"][f, j])) for j in visible],
        "total": num(ex.sum()),
        "softmax": [(toks[j], num(nums["scaled"][f, j]), num(ex[j]), num(w[j])) for j in visible],
        # the shares as shown add up to this (1.01 and the like: each is rounded); "" when to 1
        "shares_sum": "" if abs(shares_shown - 1) < 1e-9 else num(shares_shown),
        # a scaled score whose rounded value, raised by hand, gives another e^score than the table's
        "exp_differs": next(((toks[j], num(nums["scaled"][f, j]), num(exp_by_hand[i]), num(ex[j]))
                             for i, j in enumerate(visible) if shown(exp_by_hand[i]) != shown(ex[j])), None),
        "mix": [(toks[j], num(w[j]), vec(v[j]), vec(w[j] * v[j])) for j in visible],
        **mix_by_hand(d, nums),
        "out": vec(nums["out"][f]),
        "best": toks[best],
        "best_share": num(w[best]),
        "best_is_self": best == f,
    }


def rounding_notes(d: Stepper, nums: dict) -> list[str]:
    """Where the figure's tables, worked by hand from their rounded numbers, give another number
    than the one shown (which comes from the unrounded ones): one sentence each, for the
    chapter's notebook (notebook_cells.toy). None for numbers that round cleanly."""
    s = view(d, nums)
    notes = []
    if s["shares_sum"]:
        notes.append(f"The shares add up to 1, but as shown, each rounded to two decimals, they add up to {s['shares_sum']}.")
    if s["exp_differs"]:
        tok, x, by_hand, table = s["exp_differs"]
        notes.append(f"The softmax table works from the unrounded scores: by hand, e^{x} gives {by_hand}, where the table has {table} for {tok}.")
    if s["mix_differs"]:
        tok, share, value, by_hand, table, exact = s["mix_differs"]
        notes.append(f"The backpack table multiplies the unrounded shares: by hand, {share} × {value} = {by_hand}, "
                     f"where the table has {table} for {tok}, whose share is {exact} before rounding.")
    if s["mix_sum"]:
        notes.append(f"Added up as shown, the backpack table's last column gives {s['mix_sum']}; the result adds the unrounded numbers.")
    return notes


def render(d: Stepper, ctx: Ctx) -> str:
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
    return templating.render("stepper.html", n=n, s=view(d, nums), payload=payload)


def ref(ref: Ref, fig: Figure) -> str:
    d: Stepper = fig.directive  # type: ignore[assignment]
    nums = fig.numbers
    toks = list(d.tokens)

    def pos(a: str) -> int:
        if re.fullmatch(r"#[0-9]+", a):
            i = int(a[1:])
            if 1 <= i <= len(toks):
                return i - 1
        elif a in toks and toks.count(a) == 1:
            return toks.index(a)
        note = lookalike_note(a, [(f"#{i + 1}", t) for i, t in enumerate(toks)])
        ref_fail(ref, f"no single token {a!r} in this stepper (tokens: {', '.join(toks)}){note}", "name one of these tokens, or give its position like #2")

    if ref.name == "sqrtd":
        return num(nums["sqrtd"])
    if ref.name == "tokens":
        return str(len(toks))
    if ref.name == "dim":
        return str(nums["dim"])
    if ref.name in VECTORS:
        return vec(nums[VECTORS[ref.name]][pos(ref.args[0])])
    if ref.name == "out":
        a = ref.args[0]
        if re.fullmatch(r"\d+", a):
            i = int_arg(ref, a, "entry", 1, nums["out"].shape[1])
            return num(nums["out"][d.focus, i - 1])
        return vec(nums["out"][pos(a)])
    q, k = pos(ref.args[0]), pos(ref.args[1])
    if ref.name == "dot":
        return dot_text(nums["q"][q], nums["k"][k])
    if ref.name == "score":
        return num(nums["scores"][q, k])
    if nums["mask"][q, k]:
        ref_fail(ref, f"{toks[k]!r} comes after {toks[q]!r}, which cannot look ahead", "name an earlier token second")
    if ref.name == "scaled":
        return num(nums["scaled"][q, k])
    return num(nums["weights"][q, k])
