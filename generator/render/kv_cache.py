"""`kv-cache` figures: what each model keeps of every token while it writes (its KV cache), as a
table made at build time from configuration alone: the course's models from their committed
config.json (registry.kv_shape), current open models from their published config.json as cited
literature (registry.open_models). Arithmetic, never a measurement; no script (kv_cache.html)."""

from __future__ import annotations

from dataclasses import dataclass

from ..lessons.cache_kinds import BYTES, KvCache
from ..lessons.errors import LessonError
from ..lessons.refs import Ref
from ..registry import MODELS, KvShape, LiteratureError, kv_shape, open_models
from . import templating
from .context import Ctx, Figure
from .format import byte_size, caption_name, whole
from .ref_common import ref_fail

# {{ cache.perToken(llama-2-7b) }}: each takes the model's name (a course model or a literature id)
REFS: dict[str, tuple[int, int]] = {name: (1, 1) for name in (
    "perToken", "context", "unshared", "numbers", "tokens", "window", "share", "layers", "heads", "kvHeads")}
ARGS: dict[str, tuple[str, ...]] = {name: ("model",) for name in REFS}


@dataclass(frozen=True)
class Row:
    key: str  # the name the lesson gives it
    name: str  # as the reader reads it
    kv: KvShape
    source: str | None  # the config.json's URL (literature), None for the course's own
    read: str | None
    window_words: str  # which layers use a sliding window (and whether heads have learned sinks), in words


def window_words(kv: KvShape) -> str:
    if not kv.window or not kv.window_layers:
        return "none"
    where = "every layer" if kv.window_layers == kv.n_layer else f"{kv.window_layers} of {kv.n_layer} layers"
    return f"{whole(kv.window)} tokens, on {where}"


def rows_of(d: KvCache) -> list[Row]:
    try:
        literature = {m.id: m for m in open_models()}
    except LiteratureError as e:
        raise LessonError(e.where, e.problem, e.fix) from None
    rows = []
    for key in d.models:
        if key in MODELS:
            kv = kv_shape(key)
            rows.append(Row(key, caption_name(key), kv, None, None, window_words(kv)))
        else:
            m = literature[key]
            sinks = "; learned sinks in every head" if m.learned_sinks else ""
            rows.append(Row(key, m.name, m.kv, m.source, m.read, window_words(m.kv) + sinks))
    return rows


def numbers_of(rows: list[Row], size: int) -> dict[str, dict]:
    """Every number the table shows, per model, as the references give them."""
    return {r.key: {
        "perToken": byte_size(r.kv.bytes_per_token(size)),
        "context": byte_size(r.kv.bytes_for(r.kv.n_ctx, size)),
        "unshared": byte_size(r.kv.bytes_unshared_for(r.kv.n_ctx, size)),
        "numbers": whole(r.kv.numbers_per_token),
        "tokens": whole(r.kv.n_ctx),
        "window": whole(r.kv.window) if r.kv.window else "none",
        "share": whole(r.kv.n_head // r.kv.n_kv_head),
        "layers": whole(r.kv.n_layer),
        "heads": whole(r.kv.n_head),
        "kvHeads": whole(r.kv.n_kv_head),
    } for r in rows}


def render(d: KvCache, ctx: Ctx) -> str:
    rows = rows_of(d)
    numbers = numbers_of(rows, d.bytes)
    n = ctx.next_number()
    ctx.register(d, Figure("kv-cache", n, d, numbers=numbers))
    course = [r for r in rows if r.source is None]
    cited = [r for r in rows if r.source is not None]
    return templating.render("kv_cache.html", n=n, d=d, rows=rows, numbers=numbers, precision=BYTES[d.bytes],
                             course=course, cited=cited, read=sorted({r.read for r in cited}))


def ref(ref: Ref, fig: Figure) -> str:
    model = ref.args[0]
    if model not in fig.numbers:
        ref_fail(ref, f"the figure shows no model '{model}'", f"use one of: {', '.join(fig.numbers)}")
    return fig.numbers[model][ref.name]
