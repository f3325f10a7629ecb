"""The "traces pending" box of a figure whose sentences are not traced yet."""

from __future__ import annotations

from .. import schema
from ..lessons import directives as D
from ..registry import MODELS
from . import templating
from .context import Ctx, Figure


def traces_pending(d: D.Directive, ctx: Ctx, model: str, texts: list[str]) -> str:
    n = ctx.next_number()
    ctx.register(d, Figure(d.kind, n, d, pending=True))
    spec = MODELS[model]
    pinned = {"hf_name": spec.hf_name, "revision": schema.short_revision(spec.revision)} if spec.revision else None
    return templating.render("pending.html", n=n, kind=d.kind, model=model, texts=texts, pinned=pinned)
