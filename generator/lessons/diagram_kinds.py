"""The drawn diagrams' directive kinds: pictures made at build time from a model's config or from a
stepper's made-up vectors, with no trace and no JavaScript.

    ```architecture
    model: tiny
    here: L2H3                  # optional: the part the page's figures read, marked "here"
    id: parts
    ```

    ```arrows
    stepper: toy                # the id of a stepper figure above on the page
    show: all                   # the default: steps 1-3 (`scores`) and steps 4-5 (`mixing`)
    id: toy-arrows
    ```

`here` takes `embedding`, `unembedding`, `residual`, `heads` (every head), a layer's heads (`L2`),
one head (`L2H3`), a layer's MLP (`MLP2`) or the id of an attention or compare figure above on the
page (`lily`: the head it shows, found when the page is built), or a list of them.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from typing import Any

from ..registry import MODELS
from .body import show
from .errors import fail as _fail
from .values import ID_RE, Directive, model_option, text_option

PLACES = ("embedding", "unembedding", "residual", "heads")  # the parts `here` names by a word
_PART_RE = re.compile(r"^(?:L(\d+)H(\d+)|L(\d+)|MLP(\d+))$")
FIGURE = "#"  # `here: lily` is kept as "#lily"
MAX_HERE = 4  # more marks than this and "here" says nothing
SHOWS = ("all", "scores", "mixing")  # the five steps of the stepper, steps 1-3, steps 4-5


@dataclass(frozen=True)
class Architecture(Directive):
    model: str = "tiny"
    here: tuple[str, ...] = ()  # the marked parts, as written: "L2H3", "MLP2", "embedding" …
    caption: str | None = None


@dataclass(frozen=True)
class Arrows(Directive):
    stepper: str = ""  # the id of the stepper whose vectors are drawn
    show: str = "all"
    caption: str | None = None


SPECS: dict[str, tuple[set[str], set[str]]] = {
    "architecture": ({"model", "here", "id", "caption"}, {"model"}),
    "arrows": ({"stepper", "show", "id", "caption"}, {"stepper"}),
}


def part_option(value: Any, model: str, where: str, kind: str) -> str:
    """One part of the model, checked against its shape: `L5H1` in a 4-layer model is refused."""
    spec = MODELS[model]
    examples = "`embedding`, `unembedding`, `residual`, `heads`, `L2`, `L2H3` or `MLP2`"
    text = str(value).strip() if isinstance(value, (str, int)) and not isinstance(value, bool) else None
    m = _PART_RE.match(text) if text else None
    if text in PLACES:
        return text
    near = difflib.get_close_matches(text.lower(), PLACES, n=1, cutoff=0.7) if text else []
    if not m and text and ID_RE.match(text) and not near:
        return FIGURE + text  # an attention figure's id: its head is marked, once the page knows it
    if not m:
        hint = f": did you mean {near[0]}?" if near else ""
        _fail(where, f"{kind}: 'here' names {show(value)}, which is no part of the model{hint}", f"write one of {examples}")
    layer = int(m[1] or m[3] or m[4])
    if not 1 <= layer <= spec.n_layer:
        _fail(where, f"{kind}: 'here' names {text}, but {model} has layers 1 to {spec.n_layer}", f"name a layer from 1 to {spec.n_layer}")
    if m[2] and not 1 <= int(m[2]) <= spec.n_head:
        _fail(where, f"{kind}: 'here' names {text}, but {model}'s layers have heads 1 to {spec.n_head}", f"name a head from 1 to {spec.n_head}")
    return text


def parse_architecture(data: dict, common: dict, where: str) -> Architecture:
    kind = "architecture"
    model = model_option(data["model"], where, kind)
    here = data.get("here", [])
    here = here if isinstance(here, list) else [here]
    if len(here) > MAX_HERE:
        _fail(where, f"{kind}: 'here' marks {len(here)} parts, more than {MAX_HERE}", "mark only the parts the next figures read")
    parts = tuple(part_option(p, model, where, kind) for p in here)
    if len(set(parts)) != len(parts):
        _fail(where, f"{kind}: 'here' names a part twice", "name each part once")
    return Architecture(**common, model=model, here=parts, caption=text_option(data.get("caption"), where, kind, "caption"))


def parse_arrows(data: dict, common: dict, where: str) -> Arrows:
    kind = "arrows"
    stepper = data["stepper"]
    if not isinstance(stepper, str) or not ID_RE.match(stepper):
        _fail(where, f"{kind}: 'stepper' must be the id of a stepper figure, not {show(stepper)}", "write `stepper: toy`")
    what = data.get("show", "all")
    if what not in SHOWS:
        near = difflib.get_close_matches(str(what), SHOWS, n=1, cutoff=0.6)
        hint = f": did you mean {near[0]}?" if near else ""
        _fail(where, f"{kind}: 'show' must be all, scores or mixing, not {show(what)}{hint}",
              "write `show: all` (every step), `show: scores` (queries, keys, scores and weights) or `show: mixing` (the values added up)")
    return Arrows(**common, stepper=stepper, show=what, caption=text_option(data.get("caption"), where, kind, "caption"))


BUILDERS = {"architecture": parse_architecture, "arrows": parse_arrows}
