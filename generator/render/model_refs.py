"""`{{ model.<name>.<field> }}` references: a model's shape and revision from its stored traces,
or, where a model has no traces here (GPT-2), from its committed configuration
(registry.config_facts); what it keeps per token while it writes (its KV cache, registry.kv_shape:
arithmetic on its config.json, never measured); and `{{ model.tiny.training.<field> }}` from the
training log."""

from __future__ import annotations

import math

from .. import schema
from ..lessons.refs import Ref
from ..registry import MODELS, RUN_BYTES, STORED_BYTES, config_facts, kv_shape
from . import training_figure as training
from .context import Ctx, Missing
from .format import byte_size, esc, f2, whole
from .ref_common import PENDING_REF, ref_fail

FIELDS = ("nLayer", "nHead", "width", "headDim", "nCtx", "nParams", "vocabSize", "revision", "hfName", "nHeads", "sqrtHeadDim",
          "nKvHead", "kvShare", "kvNumbers", "kvNumbersUnshared", "kvBytes", "kvBytes16", "kvContextBytes", "kvContextBytes16",
          "kvContextBytesUnshared")


def kv_field(model: str, name: str) -> str:
    """The KV cache fields, from the config alone: numbers kept per token (a key and a value per layer and
    key/value head), in bytes as stored (float32, STORED_BYTES) or at 16 bits (RUN_BYTES), and for a
    whole context of nCtx tokens."""
    kv = kv_shape(model)
    value = {
        "nKvHead": kv.n_kv_head,
        "kvShare": kv.n_head // kv.n_kv_head,  # query heads per key/value head
        "kvNumbers": kv.numbers_per_token,
        "kvNumbersUnshared": kv.numbers_unshared,
    }.get(name)
    if value is not None:
        return whole(value)
    return byte_size({
        "kvBytes": kv.bytes_per_token(STORED_BYTES),
        "kvBytes16": kv.bytes_per_token(RUN_BYTES),
        "kvContextBytes": kv.bytes_for(kv.n_ctx, STORED_BYTES),
        "kvContextBytes16": kv.bytes_for(kv.n_ctx, RUN_BYTES),
        "kvContextBytesUnshared": kv.bytes_unshared_for(kv.n_ctx, STORED_BYTES),
    }[name])


def known_without_traces(model: str) -> dict:
    """The facts of `model` that its committed config.json and the registry give without traces or
    weights: every shape field, and for a hub model its name and pinned revision."""
    facts = dict(config_facts(model))
    spec = MODELS[model]
    if spec.hf_name:
        facts["hfName"] = spec.hf_name
    if spec.revision:
        facts["revision"] = spec.revision
    return facts


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
    name = parts[1]
    if name == "nKvHead" or name.startswith("kv"):
        return kv_field(model, name)  # the config's arithmetic: the same with or without traces
    meta = ctx.store.model_meta(model) if ctx.store is not None else None
    if meta is None:
        meta = known_without_traces(model)  # GPT-2's published configuration: no weights needed
        if name not in meta and name not in ("nHeads", "sqrtHeadDim"):
            ctx.note_missing(Missing(model, Missing.MODEL), ref.where)
            return PENDING_REF
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
