"""The box of a figure whose sentences are not traced yet: what can be known without the model's
weights (the sentence's real tokens from the committed tokenizer, the grid's size from the model's
configuration) and one sentence for readers. What an author should do goes to the build log
(context.Missing.warning), never onto the page."""

from __future__ import annotations

from .. import tokens as tokenizer
from ..lessons import directives as D
from ..registry import config_facts
from . import templating
from .context import Ctx, Figure

READER_NAMES = {"gpt2": "GPT-2 small", "tiny": "the course's tiny model"}


def known_tokens(model: str, text: str) -> list[str] | None:
    """The displayed tokens a trace of `text` will have, or None without a committed tokenizer."""
    try:
        return [t.display for t in tokenizer.encode(model, text)]
    except tokenizer.NoTokenizer:
        return None


def traces_pending(d: D.Directive, ctx: Ctx, model: str, texts: list[str]) -> str:
    n = ctx.next_number()
    ctx.register(d, Figure(d.kind, n, d, pending=True))
    facts = config_facts(model)
    sentences = [{"text": t, "tokens": known_tokens(model, t)} for t in texts]
    return templating.render(
        "pending.html", n=n, kind=d.kind, model=model, reader_name=READER_NAMES.get(model, model), sentences=sentences,
        n_layer=facts["nLayer"], n_head=facts["nHead"],
    )
