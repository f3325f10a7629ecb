"""`attribution` figures: each head's, the embedding's, each MLP's and the biases' direct share
of one logit (or of a difference of two) at one position: direct logit attribution, through ln_f
with its scale frozen at the clean run, from the trace's causal block. The parts add up to the
logit the model computed."""

from __future__ import annotations

from ..lessons.refs import Ref
from . import templating
from .causal_data import clean_logit, dla_parts, focused_panel, measure_html, measure_name, signed_style, target_tokens, verdict
from .context import Ctx, Figure
from .format import diff2, f2, minus2, percent, shown, tok
from .grid import provenance
from .ref_common import int_arg, ref_fail

# total: the logit (difference) the parts add up to; share(part): one part's direct share (part:
# L2H3, MLP4, embedding or biases); top(n): the n largest shares, with their values;
# percent(part): the part's share of the total, as a whole percent; verdict(part): "carries most
# of" ... from that share.
REFS = {"total": (0, 0), "share": (1, 1), "top": (1, 1), "percent": (1, 1), "verdict": (1, 1), "measure": (0, 0)}
# the arguments' names, as the reference for authors writes them: {{ id.share(part) }}
ARGS: dict[str, tuple[str, ...]] = {"share": ("part",), "top": ("n",), "percent": ("part",), "verdict": ("part",)}


def _words(part: str) -> str:
    if part.startswith("MLP"):
        return f"the MLP of layer {part[3:]}"
    if part.startswith("L") and "H" in part:
        layer, head = part[1:].split("H")
        return f"layer {layer}, head {head}"
    return {"embedding": "the embedding (token and position)", "biases": "the biases"}.get(part, part)


def render(d, ctx: Ctx) -> str:
    targets = target_tokens(d.model, d.targets, d.where, d.kind)
    panel, pos, pending = focused_panel(d, ctx, targets)
    if panel is None:
        return pending
    n = ctx.next_number()
    ctx.register(d, Figure("attribution", n, d, panels=[panel], focus=pos, numbers={"targets": targets}))
    parts = panel.trace["causal"]["parts"]
    values = dla_parts(panel, pos, targets)
    scale = max(float(abs(values).max()), 1e-9)
    rows = [{"part": p, "words": _words(p), "text": diff2(float(v)), "style": signed_style(float(v), scale),
             "width": round(100 * abs(float(v)) / scale, 1), "negative": float(v) < 0} for p, v in zip(parts, values)]
    top = max(range(len(parts)), key=lambda i: (abs(shown(float(values[i]))), -i))
    return templating.render(
        "attribution.html", n=n, model=d.model, token=tok(panel.tokens[pos]), measure=measure_name(targets, one="logit"),
        # what the parts add up to: the stored logit (difference), not the sum of rounded shares
        total=_total_text(clean_logit(panel, pos, targets), targets),
        rows=rows, top=rows[top], prov=provenance(ctx, [panel], d.caption),
    )


def _total_text(total: float, targets: list[dict]) -> str:
    return diff2(total) if len(targets) == 2 else minus2(total)


def _part(ref: Ref, parts: list[str], arg: str) -> int:
    if arg not in parts:
        heads, mlps = [p for p in parts if p.startswith("L")], [p for p in parts if p.startswith("MLP")]
        ref_fail(ref, f"no part {arg!r}", f"name one of: embedding, {heads[0]}…{heads[-1]}, {mlps[0]}…{mlps[-1]}, biases")
    return parts.index(arg)


def ref(ref: Ref, fig: Figure) -> str:
    panel, pos, targets = fig.panels[0], fig.focus, fig.numbers["targets"]
    parts = panel.trace["causal"]["parts"]
    values = dla_parts(panel, pos, targets)
    total = clean_logit(panel, pos, targets)
    if ref.name == "measure":
        return measure_html(targets, one="logit")
    if ref.name == "total":
        return _total_text(total, targets)
    if ref.name == "top":
        k = int_arg(ref, ref.args[0], "count", 1, len(parts))
        order = sorted(range(len(parts)), key=lambda i: (-abs(shown(float(values[i]))), i))[:k]
        return ", ".join(f"{parts[i]} {diff2(float(values[i]))}" for i in order)
    i = _part(ref, parts, ref.args[0])
    v = float(values[i])
    if ref.name == "share":
        return diff2(v)
    if ref.name == "percent":
        if shown(total) == 0:
            ref_fail(ref, "the total is 0.00, so a part has no share of it", "use share(...)")
        return percent(v / total)
    return verdict(v, total)
