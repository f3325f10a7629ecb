"""`patching` figures: activation patching for a pair of sentences of the same length. Each
head's output from the second sentence is put into the first at every position, one head at a
time, and the grid shows what that does to a logit difference at one position (from the model's
patching.json, generator/model/causal.py)."""

from __future__ import annotations

import numpy as np

from ..store import circuits_file
from ..lessons.errors import LessonError
from ..lessons.refs import Ref
from . import templating
from .causal_data import head_arg, head_label, head_words, measure_html, measure_name, ranked_heads, signed_style, target_tokens, verdict
from .context import Ctx, Figure, Missing, load_panel
from .format import diff2, percent, shown, tok
from .grid import provenance
from .pending import known_tokens, traces_pending
from .ref_common import int_arg, ref_fail
from .token_names import resolve_token

# clean(1|2): the logit difference in each sentence; effect(head): its change in the first when
# the head's output comes from the second; patched(head): its value then; top(n): the n heads
# that move it most; percent(head): how much of the gap between the two sentences the head
# closes; verdict(head): "carries most of" ... the gap, from that share.
REFS = {"clean": (1, 1), "effect": (1, 1), "patched": (1, 1), "top": (1, 1), "percent": (1, 1), "verdict": (1, 1),
        "measure": (0, 0)}
# the arguments' names, as the reference for authors writes them: {{ id.clean(sentence) }}
ARGS: dict[str, tuple[str, ...]] = {
    "clean": ("sentence",), "effect": ("head",), "patched": ("head",), "top": ("n",), "percent": ("head",),
    "verdict": ("head",),
}


def render(d, ctx: Ctx) -> str:
    targets = target_tokens(d.model, d.targets, d.where, d.kind)
    known = [known_tokens(d.model, s) for s in d.sentences]  # the committed tokenizer: no trace needed
    if all(k is not None for k in known) and len(known[0]) != len(known[1]):
        raise LessonError(d.where, f"patching: the two sentences are {len(known[0])} and {len(known[1])} tokens; a head's output "
                          "moves between sentences of the same length only", "choose two sentences with as many tokens")
    panels = [load_panel(d, d.model, s, ctx) for s in d.sentences]
    entry = None
    if all(p is not None for p in panels):
        a, b = panels
        if len(a.tokens) != len(b.tokens):
            raise LessonError(d.where, f"patching: the two sentences are {len(a.tokens)} and {len(b.tokens)} tokens; a head's output "
                              "moves between sentences of the same length only", "choose two sentences with as many tokens")
        L, H = a.weights.shape[:2]
        # a damaged patching.json raises DamagedFile: the build names the file (markdown/course.py
        # store_failure), not this figure's line
        entry = circuits_file.find_pair(ctx.store, d.model, d.sentences[0], d.sentences[1], [t["id"] for t in targets], len(a.tokens), L, H)
        if entry is None:
            ctx.note_missing(Missing(d.model, Missing.TRACE, d.sentences[0]), d.where)
    if entry is None:
        return traces_pending(d, ctx, d.model, [s for s, p in zip(d.sentences, panels) if p is None] or [d.sentences[0]])
    a, b = panels
    pos = len(a.tokens) - 1 if d.token is None else resolve_token(d.token, a.tokens, d.where, f"{d.kind}: token")
    n = ctx.next_number()
    fig = Figure("patching", n, d, panels=panels, focus=pos, numbers={"targets": targets, "entry": entry})
    ctx.register(d, fig)
    eff = _effects(fig)
    scale = max(float(np.abs(eff).max()), 1e-9)
    rows = [[{"text": diff2(float(eff[l, h])), "style": signed_style(float(eff[l, h]), scale)} for h in range(eff.shape[1])]
            for l in range(eff.shape[0])]
    top = ranked_heads(eff)[0]
    return templating.render(
        "patching.html", n=n, model=d.model, token=tok(a.tokens[pos]), measure=measure_name(targets),
        a=d.sentences[0], b=d.sentences[1], clean_a=diff2(_clean(fig, 0)), clean_b=diff2(_clean(fig, 1)),
        rows=rows, n_head=eff.shape[1], top=head_words(top[0], top[1]), top_effect=diff2(top[2]),
        prov=provenance(ctx, panels, d.caption),
    )


def _clean(fig: Figure, which: int) -> float:
    e, pos = fig.numbers["entry"], fig.focus
    c = e["cleanA" if which == 0 else "cleanB"]
    return float(c[pos, 0] - c[pos, 1])


def _effects(fig: Figure) -> np.ndarray:
    """(layer, head): patched minus clean logit difference in the first sentence at the focus."""
    e, pos = fig.numbers["entry"], fig.focus
    p = e["patched"][:, :, pos, 0] - e["patched"][:, :, pos, 1]
    return p - _clean(fig, 0)


def ref(ref: Ref, fig: Figure) -> str:
    if fig.pending:
        return ""
    eff = _effects(fig)
    L, H = eff.shape
    if ref.name == "measure":
        return measure_html(fig.numbers["targets"])
    if ref.name == "clean":
        return diff2(_clean(fig, int_arg(ref, ref.args[0], "sentence", 1, 2) - 1))
    if ref.name == "top":
        k = int_arg(ref, ref.args[0], "count", 1, L * H)
        return ", ".join(f"{head_label(l, h)} {diff2(e)}" for l, h, e in ranked_heads(eff)[:k])
    l, h = head_arg(ref, ref.args[0], L, H)
    e = float(eff[l, h])
    gap = _clean(fig, 1) - _clean(fig, 0)
    if ref.name == "effect":
        return diff2(e)
    if ref.name == "patched":
        return diff2(_clean(fig, 0) + e)
    if shown(gap) == 0:
        ref_fail(ref, "the two sentences give the same difference, so there is no gap to close", "use effect(...)")
    if ref.name == "percent":
        return percent(e / gap)
    return verdict(e, gap)
