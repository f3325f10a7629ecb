"""The `score-split` directive: why a head looks where it looks. One head's score for one cell
(query token, key token) split into the parts of the residual stream that made it
(generator/model/score_parts.py, traces/<model>/splits.json).

    ```score-split
    model: tiny
    sentence: "Tom had a red ball. Tom gave the red ball to Sam."
    layer: 1                 # or pick:, as an attention figure chooses its head
    head: 4
    token: ball              # the query (the row); default: the last token
    key: red                 # the key (the column); default: where the head looks most from `token`
    side: key                # key (default): the key's parts | query: the query's parts | table: layer 1 only
    id: why-prev
    ```

A GPT-2 figure names its head by `layer` and `head` (splits.json holds only the heads GPT-2's
figures name; the course's own models' files hold every head). A rotary model (tiny-rope) has no
position part and no `side: table`: its positions enter only through the rotation of q and k.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..registry import MODELS
from .body import show
from .errors import fail as _fail
from .values import Directive, Pick, TokenRef, model_option, pick_option, sentence_option, text_option, token_option

SIDES = ("key", "query", "table")


@dataclass(frozen=True)
class ScoreSplit(Directive):
    model: str = ""
    sentence: str = ""
    pick: Pick = Pick("fixed", 1, 1)
    token: TokenRef | None = None  # the query; default: the last token
    key: TokenRef | None = None  # the key; default: the head's largest weight from the query
    side: str = "key"
    caption: str | None = None


SPECS: dict[str, tuple[set[str], set[str]]] = {
    "score-split": ({"model", "sentence", "layer", "head", "pick", "token", "key", "side", "id", "caption"}, {"model", "sentence"}),
}


def side_option(value: Any, where: str, kind: str) -> str:
    if value not in SIDES:
        _fail(where, f"{kind}: 'side' must be one of {', '.join(SIDES)}, not {show(value)}",
              "write `side: key` (the key's parts), `side: query` (the query's parts) or `side: table` (layer 1: both)")
    return value


def parse_score_split(data: dict, common: dict, where: str) -> ScoreSplit:
    kind = "score-split"
    model = model_option(data["model"], where, kind)
    pick = pick_option(data, model, where, kind)
    if not MODELS[model].trained_here and pick.rule != "fixed":
        _fail(where, f"{kind}: a {model} figure names its head by 'layer' and 'head', not by 'pick'",
              "write `layer:` and `head:` (splits.json keeps only the heads that GPT-2's figures name)")
    side = side_option(data.get("side", "key"), where, kind)
    if side == "table" and MODELS[model].rotary:
        _fail(where, f"{kind}: 'side' table splits layer 1's score by token and position parts, and {model} has no position "
                     "part: its positions enter only through the rotation of query and key",
              "write `side: key` or `side: query`, and refer to `{{ id.rotation }}` for what the rotation adds")
    if side == "table" and not (pick.rule == "fixed" and pick.layer == 1):
        _fail(where, f"{kind}: 'side' table needs a head of layer 1, whose stream has only token, position and biases",
              "write `layer: 1`, or `side: key`")
    return ScoreSplit(
        **common,
        model=model,
        sentence=sentence_option(data["sentence"], where, kind),
        pick=pick,
        token=token_option(data["token"], where, kind, "token") if "token" in data else None,
        key=token_option(data["key"], where, kind, "key") if "key" in data else None,
        side=side,
        caption=text_option(data.get("caption"), where, kind, "caption"),
    )


BUILDERS = {"score-split": parse_score_split}


def sentences(d: Directive) -> list[tuple[str, str]]:
    """(model, sentence) pairs a score-split figure needs traced."""
    return [(d.model, d.sentence)] if isinstance(d, ScoreSplit) else []


def needs(directives) -> dict[tuple[str, str], set[tuple[int, int]] | None]:
    """What splits.json must hold: (model, sentence) -> the (layer, head) pairs (from 0) its
    figures name, or None for every head (the course's own models always keep every head, so a
    figure's `pick` can choose any)."""
    out: dict[tuple[str, str], set[tuple[int, int]] | None] = {}
    for d in directives:
        if not isinstance(d, ScoreSplit):
            continue
        key = (d.model, d.sentence)
        if MODELS[d.model].trained_here:
            out[key] = None
        else:
            out.setdefault(key, set()).add((d.pick.layer - 1, d.pick.head - 1))
    return out
