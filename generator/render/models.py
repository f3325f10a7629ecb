"""`{{ model.<name>.<field> }}` references: a model's shape and revision from its stored traces,
and `{{ model.tiny.training.<field> }}` from the training log."""

from __future__ import annotations

import math

from .. import schema
from ..lessons.refs import Ref
from ..registry import MODELS
from . import training
from .context import Ctx, Missing
from .format import esc, f2, whole
from .refs import PENDING_REF, ref_fail

FIELDS = ("nLayer", "nHead", "width", "headDim", "nCtx", "nParams", "vocabSize", "revision", "hfName", "nHeads", "sqrtHeadDim")


def ref(ref: Ref, ctx: Ctx) -> str:
    parts = ref.name.split(".")
    model = parts[0]
    if model not in MODELS:
        ref_fail(ref, f"unknown model '{model}'", f"use one of: {', '.join(sorted(MODELS))}")
    if ref.args and not (len(parts) == 3 and parts[1] == "training"):
        ref_fail(ref, "model references take no arguments", f"write `{{{{ model.{model}.nLayer }}}}`")
    if len(parts) >= 2 and parts[1] == "training":
        return training.model_ref(ref, parts, ctx)
    if len(parts) != 2 or parts[1] not in FIELDS:
        ref_fail(ref, f"unknown model field '{'.'.join(parts[1:])}'", f"use one of: {', '.join(FIELDS)}, or training.<field>")
    meta = ctx.store.model_meta(model) if ctx.store is not None else None
    if meta is None:
        ctx.note_missing(Missing(model, Missing.MODEL), ref.where)
        return PENDING_REF
    name = parts[1]
    if name == "nHeads":
        return whole(meta["nLayer"] * meta["nHead"])
    if name == "sqrtHeadDim":
        return f2(math.sqrt(meta["headDim"]))
    value = meta.get(name)
    if value is None:
        return PENDING_REF
    if name == "revision":
        return f"<code>{esc(schema.short_revision(value))}</code>"
    if isinstance(value, int):
        return whole(value)
    return esc(value)
