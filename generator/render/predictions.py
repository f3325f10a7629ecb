"""`predictions` figures: the model's top next tokens after every token of some sentences."""

from __future__ import annotations

from ..lessons.directives import Predictions
from ..lessons.refs import Ref
from . import templating
from .context import Ctx, Figure, load_panel
from .format import page_tokens
from .grid import provenance
from .pending import READER_NAMES, traces_pending

REFS = {"tokens": (0, 0)}


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
        sentences.append({"model": READER_NAMES.get(p.model, p.model), "text": p.trace["text"], "k": k, "rows": rows})
    payload = {
        "sentences": [
            {"key": p.key, "text": p.trace["text"], "tokens": page_tokens(p.tokens), "predictions": p.trace.get("predictions") or []}
            for p in panels
        ]
    }
    ctx.register(d, Figure("predictions", n, d, panels=list(panels)))
    return templating.render("predictions.html", n=n, model=d.model, sentences=sentences, prov=provenance(ctx, panels, None), payload=payload)


def ref(ref: Ref, fig: Figure) -> str:
    return str(len(fig.panels[0].tokens))
