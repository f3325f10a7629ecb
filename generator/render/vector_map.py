"""`map` figures: a few hundred common tokens of the tiny model on the two principal axes of their
embedding rows (PCA, computed by `make traces` with numpy), with the lesson's words marked: a
Plotly scatter with hover, and tables for readers without JavaScript."""

from __future__ import annotations

import html as html_lib

import numpy as np

from ..lessons.directives import Directive
from ..lessons.refs import Ref
from . import templating, vector_data
from .context import Ctx, Figure
from .format import percent, tok
from .ref_common import int_arg, ref_fail
from .vector_data import num

REFS = {"count": (0, 0), "explained": (1, 1), "close": (1, 2), "x": (1, 1), "y": (1, 1), "rule": (0, 0)}
# the arguments' names, as the reference for authors writes them: {{ id.explained(axis) }}
ARGS: dict[str, tuple[str, ...]] = {"explained": ("axis",), "close": ("word", "n"), "x": ("word",), "y": ("word",)}
CLOSE = 3  # tokens nearest on the map, per marked word, in the table
PAGE_DECIMALS = 3


def close_on_map(points: list[dict], mark: dict, k: int) -> list[dict]:
    xy = np.array([[p["x"], p["y"]] for p in points])  # (token, 2)
    dist = np.hypot(xy[:, 0] - mark["x"], xy[:, 1] - mark["y"])  # (token,)
    order = [j for j in np.lexsort((np.arange(len(dist)), dist)) if points[j]["id"] != mark["id"]]
    return [points[j] for j in order[:k]]


def render(d: Directive, ctx: Ctx) -> str:
    vec = vector_data.load(d, ctx, words=list(d.mark))
    if vec is None:
        return vector_data.pending(d, ctx, "the words " + ", ".join(d.mark))
    m = vec.doc["map"]
    by_id = {t["id"]: t for t in m["marks"]}
    marks = [by_id[vec.word(w)["token"]["id"]] for w in d.mark]
    n = ctx.next_number()
    ctx.register(d, Figure("map", n, d, numbers={"map": m, "marks": dict(zip(d.mark, marks))}))
    rows = [{"tok": t, "x": num(t["x"]), "y": num(t["y"]), "close": close_on_map(m["tokens"], t, CLOSE)} for t in marks]
    point = lambda t: {"display": t["display"], "spoken": t["spoken"], "x": round(t["x"], PAGE_DECIMALS), "y": round(t["y"], PAGE_DECIMALS)}  # noqa: E731
    payload = {"tokens": [point(t) for t in m["tokens"]], "marks": [point(t) for t in marks], "explained": m["explained"]}
    return templating.render("map.html", n=n, d=d, rows=rows, all=[(t, num(t["x"]), num(t["y"])) for t in m["tokens"]], rule=m["rule"],
                             explained=[percent(x) for x in m["explained"]], close=CLOSE, prov=vector_data.provenance(vec, d.caption), payload=payload)


def on_map(points: list[dict], word: str) -> dict | None:
    """An unmarked token of the map, named as a lesson names words ('happ' is the token " happ")."""
    bare = word.lstrip(" ·")
    texts = [" " + bare] if word != bare else [" " + bare, bare]
    return next((p for text in texts for p in points if p["text"] == text), None)


def ref(ref: Ref, fig: Figure) -> str:
    nums = fig.numbers
    m = nums["map"]
    if ref.name == "count":
        return str(len(m["tokens"]))
    if ref.name == "rule":
        return html_lib.escape(m["rule"])  # text from vectors.json, into a reference's HTML
    if ref.name == "explained":
        return percent(m["explained"][int_arg(ref, ref.args[0], "axis", 1, 2) - 1])
    word = ref.args[0]
    if ref.name in ("x", "y"):
        point = nums["marks"].get(word) or on_map(m["tokens"], word)
        if point is None:
            ref_fail(ref, f"{word!r} is neither marked nor one of the map's {len(m['tokens'])} tokens", "name a marked word, or a token of the map's table")
        return num(point[ref.name])
    if word not in nums["marks"]:
        ref_fail(ref, f"the map marks no word {word!r} (it marks: {', '.join(nums['marks'])})", "name a word of the figure's `mark` list")
    mark = nums["marks"][word]
    k = int_arg(ref, ref.args[1], "count", 1, 10) if len(ref.args) > 1 else CLOSE
    return ", ".join(tok(t) for t in close_on_map(m["tokens"], mark, k))
