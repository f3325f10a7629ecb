"""The `rope-distance` directive: position by rotation. One head's score for one query and one
key, the same two vectors placed at every distance apart, beside the head's mean over the
scoring sentences (generator/model/rotary.py, traces/<model>/rotary.json).

    ```rope-distance
    model: tiny-rope                 # a rotary model (default tiny-rope)
    sentence: "Tom had a red ball. Tom gave the red ball to Sam."
    pick: {best: previous-token}     # or layer: and head:
    token: Sam                       # the query; default: the last token
    key: to                          # the key, at or before it; default: the token just before
    id: turn
    ```

The pair (sentence, token, key) is resolved when `make traces` writes rotary.json, with every
head's curve, so a `pick` by rule can choose any head at build time.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..registry import MODELS
from .body import show
from .errors import fail as _fail
from .values import Directive, Pick, TokenRef, pick_option, sentence_option, text_option, token_option

DEFAULT_MODEL = "tiny-rope"


@dataclass(frozen=True)
class RopeDistance(Directive):
    model: str = DEFAULT_MODEL
    sentence: str = ""
    pick: Pick = Pick("fixed", 1, 1)
    token: TokenRef | None = None  # the query; default: the last token
    key: TokenRef | None = None  # the key; default: the token just before the query
    caption: str | None = None


SPECS: dict[str, tuple[set[str], set[str]]] = {
    "rope-distance": ({"model", "sentence", "layer", "head", "pick", "token", "key", "id", "caption"}, {"sentence"}),
}


def parse_rope_distance(data: dict, common: dict, where: str) -> RopeDistance:
    kind = "rope-distance"
    model = data.get("model", DEFAULT_MODEL)
    rotary = sorted(m for m, s in MODELS.items() if s.rotary)
    if model not in rotary:
        _fail(where, f"{kind}: model {show(model)} has no rotary positions", f"write `model: {rotary[0]}`" if rotary else "use a rotary model")
    pick = pick_option(data, model, where, kind)
    if pick.rule not in ("fixed", "best"):
        _fail(where, f"{kind}: pick rule {pick.rule} needs a figure's attention weights, which this figure does not draw",
              "write `pick: {best: previous-token}`, or `layer:` and `head:`")
    return RopeDistance(
        **common,
        model=model,
        sentence=sentence_option(data["sentence"], where, kind),
        pick=pick,
        token=token_option(data["token"], where, kind, "token") if "token" in data else None,
        key=token_option(data["key"], where, kind, "key") if "key" in data else None,
        caption=text_option(data.get("caption"), where, kind, "caption"),
    )


BUILDERS = {"rope-distance": parse_rope_distance}


def named(directives, model: str) -> list[RopeDistance]:
    """The `rope-distance` figures of `model`, in order."""
    return [d for d in directives if isinstance(d, RopeDistance) and d.model == model]


def _hits(ref: TokenRef, texts: list[str]) -> list[int]:
    """Positions a name matches, by render.token_names.resolve_token's rule: 'her' matches her and
    ·her; '·her' or ' her' only ·her."""
    if ref.index is not None:
        return [ref.index] if 0 <= ref.index < len(texts) else []
    name = ref.text or ""
    spaced = name.startswith((" ", "·"))
    bare = name[1:] if spaced else name
    return [i for i, t in enumerate(texts) if (t == " " + bare if spaced else t in (bare, " " + bare))]


def positions(d: RopeDistance, texts: list[str]) -> tuple[int | None, int | None]:
    """(query, key) positions of the figure's pair in a sentence of token `texts`: None for one
    that names no single token (the figure says so when it is drawn)."""
    def one(ref):
        hits = _hits(ref, texts)
        return hits[0] if len(hits) == 1 else None

    query = len(texts) - 1 if d.token is None else one(d.token)
    if query is None:
        return None, None
    key = (query - 1 if query > 0 else None) if d.key is None else one(d.key)
    return query, key
