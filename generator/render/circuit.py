"""`circuit` figures: what feeds one head. For every head of an earlier layer: the head's score
of one kind when that earlier head is removed (zero and mean), the model's loss on the second copy
of repeated random tokens without it, and the QK and OV composition scores from the weights
(generator/model/causal.py, the model's circuits.json)."""

from __future__ import annotations

import math

from ..store import circuits_file
from .. import heads
from ..lessons.refs import Ref
from ..registry import KINDS, NAMES, config_facts
from . import circuit_robust, templating
from .causal_data import head_arg, head_label, head_words
from .context import Ctx, Figure, Missing
from .format import f2, shown
from .ref_common import int_arg, ref_fail

# score: the head's clean score of the figure's kind; without(head[, mode]): that score with an
# earlier head removed; drop(n[, mode]): the n earlier heads whose removal lowers it most, with the
# score left; comp(q|k|v, head): the composition score from that head into this one; baseline: the
# composition score of random matrices of the same shapes; loss(1|2): the clean loss on the first
# and second copy of the repeated random tokens; uniform: the loss of a uniform guess over the
# vocabulary (ln of its size), what knowing nothing scores there; losswithout(head[, mode]): the second copy's loss
# with that head removed (any layer); lossrise(n[, mode]): the n heads whose removal raises it most;
# kindscore(head[, kind]): any head's clean score of the figure's kind (or of `kind`), on the same
# scoring texts as the head types page; kindtop(n[, kind]): the n highest-scoring heads;
# topcomp(q|k|v, n): the n earlier heads with the largest composition score into this one.
REFS = {"score": (0, 0), "without": (1, 2), "drop": (1, 2), "comp": (2, 2), "baseline": (0, 0), "uniform": (0, 0), "loss": (1, 1),
        "losswithout": (1, 2), "lossrise": (1, 2), "head": (0, 0), "kindscore": (1, 2), "kindtop": (1, 2),
        "topcomp": (2, 2)}
# the arguments' names, as the reference for authors writes them: {{ id.without(head, ablation) }}
ARGS: dict[str, tuple[str, ...]] = {
    "without": ("head", "ablation"), "drop": ("n", "ablation"), "comp": ("qkv", "head"), "loss": ("copy",),
    "losswithout": ("head", "ablation"), "lossrise": ("n", "ablation"), "kindscore": ("head", "kind"),
    "kindtop": ("n", "kind"), "topcomp": ("qkv", "n"),
}
REFS.update(circuit_robust.REFS)  # the copying test under four methods, with intervals
ARGS.update(circuit_robust.ARGS)
COMP_NAMES = {"q": "Q", "k": "K", "v": "V"}


def _load(d, ctx: Ctx):
    spec_l, spec_h = None, None
    meta = ctx.store.model_meta(d.model) if ctx.store is not None else None
    if meta is None:
        return None
    spec_l, spec_h = int(meta["nLayer"]), int(meta["nHead"])
    # a damaged circuits.json raises DamagedFile: the build names the file (markdown/course.py
    # store_failure), not this figure's line
    return circuits_file.load_circuits(ctx.store, d.model, tuple(KINDS), spec_l, spec_h)


def render(d, ctx: Ctx) -> str:
    doc = _load(d, ctx)
    n = ctx.next_number()
    if doc is None:
        ctx.note_missing(Missing(d.model, Missing.HEAD_SCORES), d.where)
        ctx.register(d, Figure("circuit", n, d, pending=True))
        return templating.render("circuit_pending.html", n=n, model=d.model, head=f"L{d.layer}H{d.head}")
    fig = Figure("circuit", n, d, layer=d.layer - 1, head=d.head - 1, numbers={"doc": doc})
    ctx.register(d, fig)
    l2, h2 = d.layer - 1, d.head - 1
    ki = doc["kinds"].index(d.score)
    H = doc["cleanScores"].shape[2]
    modes = doc["ablations"]
    rows = []
    for l1 in range(l2):
        for h1 in range(H):
            a = l1 * H + h1
            rows.append({
                "label": head_label(l1, h1),
                "scores": [f2(float(doc["ablatedScores"][modes.index(m), a, ki, l2, h2])) for m in modes],
                "losses": [f2(float(doc["iclAblated"][modes.index(m), a, 1])) for m in modes],
                "comp": [f2(float(doc["composition"][c, l1, h1, l2, h2])) for c in range(3)],
            })
    return templating.render(
        "circuit.html", n=n, model=d.model, head=head_words(l2, h2), label=head_label(l2, h2), kind=NAMES[d.score],
        clean=f2(float(doc["cleanScores"][ki, l2, h2])), modes=modes, uniform=f2(uniform_loss(d.model)),
        loss1=f2(float(doc["iclClean"][0])), loss2=f2(float(doc["iclClean"][1])), rows=rows,
        baseline=f2(float(doc["compositionBaseline"])), caption=d.caption, rotary="compositionPositions" in doc,
    )


def uniform_loss(model: str) -> float:
    """The loss, in nats per token, of a guess that gives every token of the vocabulary the same
    probability: what a model that knows nothing scores on random tokens."""
    return math.log(config_facts(model)["vocabSize"])


def _mode(ref: Ref, fig: Figure, args) -> int:
    modes = fig.numbers["doc"]["ablations"]
    mode = args[0] if args else fig.directive.ablation
    if mode not in modes:
        ref_fail(ref, f"{mode!r} is not an ablation circuits.json holds ({', '.join(modes)})", "write zero or mean")
    return modes.index(mode)


def ref(ref: Ref, fig: Figure) -> str:
    doc, d = fig.numbers["doc"], fig.directive
    L, H = doc["cleanScores"].shape[1:]
    ki, l2, h2 = doc["kinds"].index(d.score), fig.layer, fig.head
    if ref.name in circuit_robust.REFS:
        return circuit_robust.ref(ref, doc, L, H, d.score)
    if ref.name == "head":
        return head_words(l2, h2)
    if ref.name == "score":
        return f2(float(doc["cleanScores"][ki, l2, h2]))
    if ref.name == "baseline":
        return f2(float(doc["compositionBaseline"]))
    if ref.name == "uniform":
        return f2(uniform_loss(d.model))
    if ref.name == "loss":
        return f2(float(doc["iclClean"][int_arg(ref, ref.args[0], "copy", 1, 2) - 1]))
    if ref.name in ("kindscore", "kindtop"):
        kind = ref.args[1] if len(ref.args) > 1 else d.score
        if kind not in doc["kinds"]:
            ref_fail(ref, f"unknown score kind {kind!r}", f"use one of: {', '.join(doc['kinds'])}")
        mat = doc["cleanScores"][doc["kinds"].index(kind)]  # (layer, head)
        if ref.name == "kindscore":
            l, h = head_arg(ref, ref.args[0], L, H)
            return f2(float(mat[l, h]))
        k = int_arg(ref, ref.args[0], "count", 1, L * H)
        cells = sorted(((l, h, float(mat[l, h])) for l in range(L) for h in range(H)), key=lambda c: (-shown(c[2]), c[0], c[1]))
        return ", ".join(f"{head_label(l, h)} {f2(v)}" for l, h, v in cells[:k])
    if ref.name == "topcomp":
        c = ref.args[0].lower()
        if c not in COMP_NAMES:
            ref_fail(ref, f"{ref.args[0]!r} is not a composition kind", "write q, k or v")
        k = int_arg(ref, ref.args[1], "count", 1, l2 * H)
        cells = sorted(((l, h, float(doc["composition"]["qkv".index(c), l, h, l2, h2])) for l in range(l2) for h in range(H)),
                       key=lambda x: (-shown(x[2]), x[0], x[1]))
        return ", ".join(f"{head_label(l, h)} {f2(v)}" for l, h, v in cells[:k])
    if ref.name == "comp":
        c = ref.args[0].lower()
        if c not in COMP_NAMES:
            ref_fail(ref, f"{ref.args[0]!r} is not a composition kind", "write q, k or v")
        l1, h1 = head_arg(ref, ref.args[1], L, H)
        if l1 >= l2:
            ref_fail(ref, f"{ref.args[1]} is not in an earlier layer than {head_label(l2, h2)}", "name a head of an earlier layer")
        return f2(float(doc["composition"]["qkv".index(c), l1, h1, l2, h2]))
    if ref.name in ("drop", "lossrise"):
        k = int_arg(ref, ref.args[0], "count", 1, L * H)
        m = _mode(ref, fig, ref.args[1:])
        if ref.name == "drop":
            cells = [(a, float(doc["ablatedScores"][m, a, ki, l2, h2])) for a in range(l2 * H)]
            cells.sort(key=lambda c: (shown(c[1]), c[0]))
        else:
            cells = [(a, float(doc["iclAblated"][m, a, 1])) for a in range(L * H)]
            cells.sort(key=lambda c: (-shown(c[1]), c[0]))
        return ", ".join(f"{head_label(a // H, a % H)} {f2(v)}" for a, v in cells[:k])
    l1, h1 = head_arg(ref, ref.args[0], L, H)
    m = _mode(ref, fig, ref.args[1:])
    if ref.name == "losswithout":
        return f2(float(doc["iclAblated"][m, l1 * H + h1, 1]))
    if l1 >= l2:
        ref_fail(ref, f"{ref.args[0]} is not in an earlier layer than {head_label(l2, h2)}, so removing it cannot change its weights", "name a head of an earlier layer")
    return f2(float(doc["ablatedScores"][m, l1 * H + h1, ki, l2, h2]))


assert set(heads.KINDS) == set(KINDS)
