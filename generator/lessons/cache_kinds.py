"""Chapter 7's directive kinds: what a model keeps while it writes, and which keys a query may see.

    ```kv-cache
    models: [tiny, tiny-rope, gpt2, llama-2-7b, mistral-7b]   # optional: the default is every model
    bytes: 2                    # optional: bytes per number, 2 (half precision, the default) or 4 (float32)
    id: cache
    ```

    ```masks
    tokens: 8                   # optional: the tokens each grid shows (3 to 16, default 8)
    window: 3                   # optional: the sliding window, in tokens (default 3)
    id: masks
    ```

`models` names the course's models (registry.MODELS) and the current open models of the literature
file (registry.open_models(): their published configuration, cited). Both figures are drawn at build
time from configuration alone, with no trace and no JavaScript.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any

from ..registry import MODELS, LiteratureError, open_models
from .body import show
from .errors import LessonError
from .errors import fail as _fail
from .values import Directive, text_option

BYTES = {2: "half precision, as models are usually run", 4: "float32, as the course's models are stored"}
MIN_TOKENS, MAX_TOKENS = 3, 16  # fewer shows no pattern; more cells than this do not fit a phone column


@dataclass(frozen=True)
class KvCache(Directive):
    models: tuple[str, ...] = ()  # course models and literature ids, in the table's order
    bytes: int = 2  # bytes per stored number
    caption: str | None = None


@dataclass(frozen=True)
class Masks(Directive):
    tokens: int = 8  # tokens in each grid (rows and columns)
    window: int = 3  # the sliding window: a query sees itself and the window − 1 tokens before it
    caption: str | None = None


SPECS: dict[str, tuple[set[str], set[str]]] = {
    "kv-cache": ({"models", "bytes", "id", "caption"}, set()),
    "masks": ({"tokens", "window", "id", "caption"}, set()),
}


def literature_ids() -> tuple[str, ...]:
    """The literature file's model ids; its mistakes are lesson mistakes at the file's line."""
    try:
        return tuple(m.id for m in open_models())
    except LiteratureError as e:
        raise LessonError(e.where, e.problem, e.fix) from None


def parse_kv_cache(data: dict, common: dict, where: str) -> KvCache:
    kind = "kv-cache"
    known = tuple(MODELS) + literature_ids()
    names = data.get("models", list(known))
    if not isinstance(names, list) or not names:
        _fail(where, f"{kind}: 'models' must be a list of model names, not {show(names)}", "write `models: [tiny, tiny-rope, gpt2, llama-2-7b]`")
    for name in names:
        if not isinstance(name, str) or name not in known:
            near = difflib.get_close_matches(str(name), known, n=1, cutoff=0.6)
            hint = f": did you mean {near[0]}?" if near else ""
            _fail(where, f"{kind}: 'models' names {show(name)}, which is neither a course model nor in generator/literature/open_models.yml{hint}",
                  f"use some of: {', '.join(known)}")
    if len(set(names)) != len(names):
        _fail(where, f"{kind}: 'models' names a model twice", "name each model once")
    size = data.get("bytes", 2)
    if not isinstance(size, int) or isinstance(size, bool) or size not in BYTES:  # a mapping is unhashable
        _fail(where, f"{kind}: 'bytes' must be 2 or 4, not {show(size)}", "write `bytes: 2` (half precision, as models are usually run) or `bytes: 4` (float32)")
    return KvCache(**common, models=tuple(names), bytes=size, caption=text_option(data.get("caption"), where, kind, "caption"))


def _count(value: Any, where: str, kind: str, name: str, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        _fail(where, f"{kind}: '{name}' must be a whole number from {lo} to {hi}, not {show(value)}", f"write `{name}: {min(max(lo, 3), hi)}`")
    return value


def parse_masks(data: dict, common: dict, where: str) -> Masks:
    kind = "masks"
    tokens = _count(data.get("tokens", 8), where, kind, "tokens", MIN_TOKENS, MAX_TOKENS)
    window = _count(data.get("window", 3), where, kind, "window", 1, tokens - 1)
    return Masks(**common, tokens=tokens, window=window, caption=text_option(data.get("caption"), where, kind, "caption"))


BUILDERS = {"kv-cache": parse_kv_cache, "masks": parse_masks}
