"""`lens` figures: the logit lens. The residual stream after the embedding and after each layer,
read through the final layer norm and the unembedding as if the model stopped there: its top
guesses at every position (from the trace's causal block)."""

from __future__ import annotations

from ..lessons.refs import Ref
from . import templating
from .context import Ctx, Figure, load_panel
from .format import f2, tok
from .grid import provenance
from .pending import traces_pending
from .ref_common import int_arg, ref_fail, token_arg

# guess(stage, token): the top guess read off the stream after `stage` (0: the embedding, 1 …:
# after that layer) at that token, with its probability; first(token, guess): the first stage
# whose top guess there is that token, in words ("after layer 2").
REFS = {"guess": (2, 2), "first": (2, 2)}
# the arguments' names, as the reference for authors writes them: {{ id.guess(layer, token) }}
ARGS: dict[str, tuple[str, ...]] = {"guess": ("layer", "token"), "first": ("token", "guess")}


def stage_name(s: int, n_layer: int) -> str:
    if s == 0:
        return "the embedding"
    return f"after layer {s}" + (" (the model's output)" if s == n_layer else "")


def _guess(panel, s: int, pos: int, k: int) -> dict:
    c = panel.trace["causal"]
    i = int(c["lensIds"][s, pos, k])
    text = c["tokenTexts"][str(i)]
    from ..schema import display_token, spoken_token
    return {"id": i, "text": text, "display": display_token(text), "spoken": spoken_token(text), "prob": float(c["lensProbs"][s, pos, k])}


def render(d, ctx: Ctx) -> str:
    panel = load_panel(d, d.model, d.sentence, ctx)
    if panel is None:
        return traces_pending(d, ctx, d.model, [d.sentence])
    n = ctx.next_number()
    ctx.register(d, Figure("lens", n, d, panels=[panel]))
    L = panel.weights.shape[0]
    rows = [{"name": stage_name(s, L).capitalize(),
             "cells": [[_guess(panel, s, j, k) for k in range(d.guesses)] for j in range(len(panel.tokens))]}
            for s in range(L + 1)]
    return templating.render("lens.html", n=n, model=d.model, tokens=panel.tokens, rows=rows,
                             prov=provenance(ctx, [panel], d.caption))


def ref(ref: Ref, fig: Figure) -> str:
    panel = fig.panels[0]
    L = panel.weights.shape[0]
    if ref.name == "guess":
        s = int_arg(ref, ref.args[0], "stage", 0, L)
        g = _guess(panel, s, token_arg(ref, panel, ref.args[1], "token"), 0)
        return f"{tok(g)} {f2(g['prob'])}"
    pos = token_arg(ref, panel, ref.args[0], "token")
    name = ref.args[1]
    for s in range(L + 1):
        g = _guess(panel, s, pos, 0)
        if g["text"] in (name, " " + name.lstrip("·")) or g["display"] == name:
            return stage_name(s, L)
    ref_fail(ref, f"no stage's top guess at that token is {name!r}", "name a token the lens shows there")
