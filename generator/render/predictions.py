"""`predictions` figures: the model's top next tokens after every token of some sentences."""

from __future__ import annotations

from ..lessons.directives import Predictions
from ..lessons.refs import Ref
from . import templating
from .context import Ctx, Figure, load_panel
from .format import f2, page_tokens, tok
from .grid import provenance
from .pending import reader_name, traces_pending
from .ref_common import int_arg, ref_fail, token_arg

# tokens: the first sentence's token count; guess(token, sentence): the model's first guess after
# that token of that sentence (1, 2, ...), with its probability: "·her 0.83".
REFS = {"tokens": (0, 0), "guess": (2, 2)}
# the arguments' names, as the reference for authors writes them: {{ id.guess(token, sentence) }}
ARGS: dict[str, tuple[str, ...]] = {"guess": ("token", "sentence")}


def render(d: Predictions, ctx: Ctx) -> str:
    panels = [load_panel(d, d.model, s, ctx) for s in d.sentences]
    if any(p is None for p in panels):
        return traces_pending(d, ctx, d.model, [s for s, p in zip(d.sentences, panels) if p is None])
    n = ctx.next_number()
    sentences = []
    for p in panels:
        preds = p.trace.get("predictions") or []
        rows = [(t, (preds[i] if i < len(preds) else [])[: d.guesses]) for i, t in enumerate(p.tokens)]
        k = min(d.guesses, max((len(r) for r in preds), default=0))
        sentences.append({"model": reader_name(p.model), "text": p.trace["text"], "k": k, "rows": rows})
    payload = {
        "sentences": [
            {"key": p.key, "text": p.trace["text"], "tokens": page_tokens(p.tokens), "predictions": p.trace.get("predictions") or []}
            for p in panels
        ]
    }
    ctx.register(d, Figure("predictions", n, d, panels=list(panels)))
    return templating.render("predictions.html", n=n, model=d.model, sentences=sentences, prov=provenance(ctx, panels, None), payload=payload)


def ref(ref: Ref, fig: Figure) -> str:
    if ref.name == "tokens":
        return str(len(fig.panels[0].tokens))
    panel = fig.panels[int_arg(ref, ref.args[1], "sentence", 1, len(fig.panels)) - 1]
    q = token_arg(ref, panel, ref.args[0], "token")
    preds = panel.trace.get("predictions") or []
    if q >= len(preds) or not preds[q]:
        ref_fail(ref, "the trace records no guess after that token", "retrace the sentence with `make traces`")
    first = preds[q][0]
    return f"{tok(first)} {f2(first['prob'])}"
