"""`neighbours` figures: for a few words, the tokens whose embedding rows point most nearly the
same way (cosine similarity over the whole vocabulary, computed by `make traces`), and the dot
products of pairs of real vectors, from traces/tiny/vectors.json."""

from __future__ import annotations

import numpy as np

from ..lessons.directives import Directive
from ..lessons.refs import Ref
from . import templating, vector_data
from .context import Ctx, Figure
from .format import tok
from .ref_common import int_arg
from .vector_data import num

REFS = {"nearest": (1, 2), "top": (1, 1), "cosine": (2, 2), "dot": (2, 2), "norm": (1, 1), "k": (0, 0), "token": (1, 1)}
# the arguments' names, as the reference for authors writes them: {{ id.nearest(word, n) }}
ARGS: dict[str, tuple[str, ...]] = {
    "nearest": ("word", "n"), "top": ("word",), "cosine": ("word", "other"), "dot": ("word", "other"),
    "norm": ("word",), "token": ("word",),
}
SHOWN = 5  # neighbours per word in the figure (the file keeps vectors_file.NEAREST)


def pair_numbers(a: dict, b: dict) -> dict[str, float]:
    x, y = np.array(a["vector"]), np.array(b["vector"])  # (width,) each
    dot = float(x @ y)
    na, nb = float(np.linalg.norm(x)), float(np.linalg.norm(y))
    return {"dot": dot, "normA": na, "normB": nb, "cosine": dot / (na * nb)}


def words_of(d: Directive) -> list[str]:
    return list(dict.fromkeys(d.words + tuple(x for p in d.pairs for x in p)))


def render(d: Directive, ctx: Ctx) -> str:
    vec = vector_data.load(d, ctx, words=words_of(d))
    if vec is None:
        return vector_data.pending(d, ctx, "the words " + ", ".join(words_of(d)))
    n = ctx.next_number()
    entries = {w: vec.word(w) for w in words_of(d)}
    ctx.register(d, Figure("neighbours", n, d, numbers={"entries": entries, "vec": vec}))
    words = [{"word": w, "token": entries[w]["token"], "nearest": [(x["token"], num(x["cosine"])) for x in entries[w]["nearest"][:SHOWN]]} for w in d.words]
    pairs = []
    for a, b in d.pairs:
        p = pair_numbers(entries[a], entries[b])
        pairs.append({"a": entries[a]["token"], "b": entries[b]["token"], **{k: num(v) for k, v in p.items()}})
    payload = {"words": [{"word": w["word"], "token": w["token"], "nearest": entries[w["word"]]["nearest"][:SHOWN]} for w in words]}
    return templating.render("neighbours.html", n=n, d=d, words=words, pairs=pairs, k=SHOWN, prov=vector_data.provenance(vec), payload=payload)


def ref(ref: Ref, fig: Figure) -> str:
    nums = fig.numbers
    known = list(nums["entries"])
    if ref.name == "k":
        return str(SHOWN)
    a = vector_data.word_entry(ref, nums["vec"], ref.args[0], known)
    if ref.name == "token":
        return tok(a["token"])
    if ref.name == "norm":
        return num(float(np.linalg.norm(a["vector"])))
    if ref.name == "top":
        return tok(a["nearest"][0]["token"])
    if ref.name == "nearest":
        k = int_arg(ref, ref.args[1], "count", 1, len(a["nearest"])) if len(ref.args) > 1 else 3
        return ", ".join(f"{tok(x['token'])} {num(x['cosine'])}" for x in a["nearest"][:k])
    b = vector_data.word_entry(ref, nums["vec"], ref.args[1], known)
    return num(pair_numbers(a, b)[ref.name])
