"""`pronouns` figures: the her/his test over many sentences, one head (traces/<model>/pronouns.json,
generator/model/pronoun_sweep.py). A table of templates × names, each cell logit(·her) − logit(·his)
with every head and then with the recorded head removed, coloured by the second's sign; where
another head's removal moves the case more, the cell names it. A plain table: it reads the same
without JavaScript."""

from __future__ import annotations

import html as html_lib
import re

import numpy as np

from ..lessons.refs import Ref
from ..store import pronouns_file
from . import templating
from .causal_data import head_label, head_words, signed_style
from .context import Ctx, Figure, Missing
from .format import diff2, shown, whole
from .ref_common import ref_fail

# cases / names / templates: how many; head: "layer 2, head 3", the head removed; top: the cases
# where that head's removal moves the difference most; her(group, mode): the cases of a group
# (female, male, all) that prefer ·her (mode: zero, mean, or clean for the full model); flips(mode):
# the cases whose preference changes side; survive(mode): the templates where every female name
# keeps ·her without the head; turn(mode): the templates where some male name switches to ·her;
# clean(word, Name), removed(word, Name, mode): one case, its template named by a word only it has;
# tophead(word, Name): the head whose removal moves that case most.
REFS = {"cases": (0, 0), "names": (0, 0), "templates": (0, 0), "head": (0, 0), "top": (0, 0), "her": (1, 2),
        "flips": (0, 1), "survive": (0, 1), "turn": (0, 1), "clean": (2, 2), "removed": (2, 3), "tophead": (2, 2)}
ARGS: dict[str, tuple[str, ...]] = {"her": ("group", "mode"), "flips": ("mode",), "survive": ("mode",), "turn": ("mode",),
                                    "clean": ("word", "name"), "removed": ("word", "name", "mode"), "tophead": ("word", "name")}
GROUPS = ("female", "male", "all")
MODES = ("zero", "mean")
WORDS = {"zero": "replaced by zeros", "mean": "replaced by its average over natural text"}


def _load(d, ctx: Ctx) -> dict | None:
    if ctx.store is None:
        return None
    meta = ctx.store.model_meta(d.model)
    if meta is None:
        return None
    n_layer, n_head = int(meta["nLayer"]), int(meta["nHead"])
    return pronouns_file.read(ctx.store.root, d.model, n_layer, n_head)  # a damaged file: its own one line, naming it (markdown/kept_errors.store_failure)


def template_words(template: str) -> str:
    """A template as the page writes it: the name's place as "…"."""
    return template.replace("{}", "…")


def render(d, ctx: Ctx) -> str:
    doc = _load(d, ctx)
    n = ctx.next_number()
    if doc is None:
        ctx.note_missing(Missing(d.model, Missing.HEAD_SCORES), d.where)
        ctx.register(d, Figure("pronouns", n, d, pending=True))
        return templating.render("pronouns_pending.html", n=n, model=d.model)
    s = doc["set"]
    layer, head = s["head"][0] - 1, s["head"][1] - 1
    names = s["female"] + s["male"]
    clean, removed = np.asarray(doc["clean"], dtype=float), np.asarray(doc[d.ablation], dtype=float)  # (template, name)
    scale = float(np.abs(removed).max()) or 1.0
    rows = []
    for t, template in enumerate(s["templates"]):
        cells = []
        for i in range(len(names)):
            top = tuple(doc["topHead"][t][i])
            other = None if top == (layer + 1, head + 1) else head_label(top[0] - 1, top[1] - 1)
            cells.append({"clean": diff2(clean[t, i]), "removed": diff2(removed[t, i]), "other": other,
                          "style": signed_style(removed[t, i], scale)})
        rows.append({"template": template_words(template), "cells": cells})
    ctx.register(d, Figure("pronouns", n, d, layer=layer, head=head, numbers={"doc": doc, "mode": d.ablation}))
    return templating.render(
        "pronouns.html", n=n, model=d.model, head=head_words(layer, head), label=head_label(layer, head),
        words=WORDS[d.ablation], female=s["female"], male=s["male"], rows=rows, caption=d.caption,
        her=s["targets"][0], his=s["targets"][1],
    )


def _mode(ref: Ref, args: list[str], i: int, default: str, clean_ok: bool = False) -> str:
    if len(args) <= i:
        return default
    allowed = MODES + (("clean",) if clean_ok else ())
    if args[i] not in allowed:
        ref_fail(ref, f"unknown mode {args[i]!r}", f"write one of: {', '.join(allowed)}")
    return args[i]


def _template(ref: Ref, doc: dict, word: str) -> int:
    hits = [t for t, text in enumerate(doc["set"]["templates"]) if re.search(rf"(?<!\w){re.escape(word)}(?!\w)", text)]
    if len(hits) != 1:
        ref_fail(ref, f"{word!r} is in {len(hits)} of the figure's templates, not in exactly one",
                 f"name a word of one template: {'; '.join(template_words(t) for t in doc['set']['templates'])}")
    return hits[0]


def _name(ref: Ref, doc: dict, name: str) -> int:
    names = doc["set"]["female"] + doc["set"]["male"]
    if name not in names:
        ref_fail(ref, f"no name {name!r} in the figure", f"use one of: {', '.join(names)}")
    return names.index(name)


def _prefers_her(grid: np.ndarray) -> np.ndarray:
    """Which cases prefer ·her, as the reader reads the numbers (2 decimals)."""
    return np.vectorize(lambda x: shown(x) > 0)(grid)


def ref(ref: Ref, fig: Figure) -> str:
    doc, default = fig.numbers["doc"], fig.numbers["mode"]
    s, args = doc["set"], list(ref.args)
    nf = len(s["female"])
    clean = np.asarray(doc["clean"], dtype=float)  # (template, name)
    if ref.name == "cases":
        return whole(clean.size)
    if ref.name == "names":
        return whole(clean.shape[1])
    if ref.name == "templates":
        return whole(clean.shape[0])
    if ref.name == "head":
        return head_words(fig.layer, fig.head)
    if ref.name == "top":
        return whole(int(sum(tuple(c) == tuple(s["head"]) for row in doc["topHead"] for c in row)))
    if ref.name in ("clean", "removed", "tophead"):
        t, i = _template(ref, doc, args[0]), _name(ref, doc, args[1])
        if ref.name == "clean":
            return diff2(clean[t, i])
        if ref.name == "tophead":
            top = doc["topHead"][t][i]
            return head_words(top[0] - 1, top[1] - 1)
        return diff2(float(doc[_mode(ref, args, 2, default)][t][i]))
    if ref.name == "her":
        if args[0] not in GROUPS:
            ref_fail(ref, f"unknown group {args[0]!r}", f"write one of: {', '.join(GROUPS)}")
        mode = _mode(ref, args, 1, default, clean_ok=True)
        her = _prefers_her(np.asarray(doc[mode], dtype=float))
        cols = {"female": slice(0, nf), "male": slice(nf, None), "all": slice(None)}[args[0]]
        return whole(int(her[:, cols].sum()))
    removed_her = _prefers_her(np.asarray(doc[_mode(ref, args, 0, default)], dtype=float))
    if ref.name == "flips":
        return whole(int((removed_her != _prefers_her(clean)).sum()))
    picked = removed_her[:, :nf].all(axis=1) if ref.name == "survive" else removed_her[:, nf:].any(axis=1)
    # a prose reference is HTML: the file's template text is escaped into it (the figure's table is, by its template)
    texts = [f"“{html_lib.escape(template_words(t))}”" for t, keep in zip(s["templates"], picked) if keep]
    return ", ".join(texts) if texts else "none"
