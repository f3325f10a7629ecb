"""What the directive kinds share: the Directive base, token names, head picks, and the checks
of one option's value (an id, a model, a sentence, a number, a vector). Each check returns the
value as the figure uses it or raises a one-line LessonError naming the option."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

from ..registry import KINDS as SCORE_KINDS
from ..registry import MODELS, NAMES
from .body import show
from .errors import fail as _fail

# Rough upper bound on tokens per character, to reject absurd sentences before tracing; the exact
# token count is checked against the context by the tracer.
MAX_SENTENCE_CHARS = 2000


@dataclass(frozen=True)
class TokenRef:
    """A token named by its text ('her', '·her', ' her') or by its position ('#6'). Positions
    count from 0, which is the model's <|endoftext|>, so a sentence's first word is #1."""

    text: str | None = None
    index: int | None = None  # 0-based: position 0 is <|endoftext|>

    def describe(self) -> str:
        return f"#{self.index}" if self.index is not None else repr(self.text)


@dataclass(frozen=True)
class Pick:
    """How a figure chooses its head: fixed, or by a rule evaluated on the trace at build time."""

    rule: str  # "fixed" | "best" | "max-weight" | "previous-token" | "first-token" | "self"
    layer: int | None = None  # 1-based, for fixed
    head: int | None = None  # 1-based, for fixed
    source: TokenRef | None = None  # for max-weight: the token that looks ...
    target: TokenRef | None = None  # ... and the token it looks at
    kind: str | None = None  # for best: the score kind, from the model's heads.json ...
    rank: int = 1  # ... and which head of its ranking (1 = the highest score)

    def describe(self) -> str:
        if self.rule == "fixed":
            return f"layer {self.layer}, head {self.head}"
        if self.rule == "max-weight":
            return f"the head with the largest weight from {self.source.describe()} to {self.target.describe()}"
        if self.rule == "best":
            if self.rank == 1:
                return f"the highest-scoring {NAMES[self.kind]} on the scoreboard"
            return f"the {NAMES[self.kind]} ranked {self.rank} on the scoreboard"
        return {
            "previous-token": "the head that looks most at the previous token",
            "first-token": "the head that looks most at position 0, <|endoftext|>",
            "self": "the head that looks most at the token itself",
        }[self.rule]


PICK_RULES = ("max-weight", "previous-token", "first-token", "self")


@dataclass(frozen=True)
class Directive:
    kind: str
    where: str  # "path:line" of the fence's opening line
    id: str | None
    options: dict = field(default_factory=dict, compare=False, hash=False)
    # "path:line" of each top-level option, for a mistake found when the figure is drawn
    option_where: dict = field(default_factory=dict, compare=False, hash=False, repr=False)


ID_RE = re.compile(r"^[a-z][a-z0-9_-]*$")
RESERVED_IDS = {"model", "page"}


def ident_option(value: Any, where: str, kind: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not ID_RE.match(value) or value in RESERVED_IDS:
        _fail(where, f"{kind}: id {show(value)} is not a valid name", "use lowercase letters, digits, '-' or '_', starting with a letter (not 'model' or 'page')")
    return value


def model_option(value: Any, where: str, kind: str) -> str:
    if not isinstance(value, str) or value not in MODELS:
        _fail(where, f"{kind}: unknown model {show(value)}", f"use one of: {', '.join(sorted(MODELS))}")
    return value


CONTROL_TOKEN = "<|endoftext|>"  # both tokenizers' one special token


def sentence_option(value: Any, where: str, kind: str) -> str:
    if not isinstance(value, str):
        _fail(where, f"{kind}: a sentence must be text, not {type(value).__name__} {show(value)}", "quote the sentence")
    if not value.strip():
        _fail(where, f"{kind}: the sentence is empty", "write the sentence to trace")
    if len(value) > MAX_SENTENCE_CHARS:
        _fail(where, f"{kind}: the sentence has {len(value)} characters, more than the {MAX_SENTENCE_CHARS} this course traces", "shorten the sentence")
    if CONTROL_TOKEN in value:  # the tokenizers read it as the control token itself, not as its letters
        _fail(where, f"{kind}: the sentence holds {CONTROL_TOKEN}, which the models read as their control token, not as text",
              f"leave it out: every trace already starts with {CONTROL_TOKEN}")
    return value


def int_option(value: Any, where: str, kind: str, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        _fail(where, f"{kind}: '{name}' must be a whole number, not {show(value)}", f"write `{name}: 1` (counting from 1)")
    return value


def bool_option(value: Any, where: str, kind: str, name: str) -> bool:
    if not isinstance(value, bool):
        _fail(where, f"{kind}: '{name}' must be true or false, not {show(value)}", f"write `{name}: true`")
    return value


def text_option(value: Any, where: str, kind: str, name: str) -> str | None:
    if value is not None and not isinstance(value, str):
        _fail(where, f"{kind}: '{name}' must be text", f"quote the {name}")
    if value is not None and "{{" in value:  # a figure's text is data: readers would see the braces
        _fail(where, f"{kind}: the {name} holds {{{{ … }}}}, and a reference is not filled in there", f"write the {name} as plain text; put the number in the page's text")
    return value


def token_option(value: Any, where: str, kind: str, name: str) -> TokenRef:
    if isinstance(value, bool):
        value = None
    if isinstance(value, int):
        if value < 0:
            _fail(where, f"{kind}: '{name}' position {value} is out of range", "count tokens from 0, which is <|endoftext|>")
        return TokenRef(index=value)
    if isinstance(value, str) and value.strip():
        return parse_token_ref(value.strip(), where, f"{kind}: '{name}'")
    _fail(where, f"{kind}: '{name}' must name a token (its text, like her) or its position (like 6)", f"write `{name}: her`")


def parse_token_ref(text: str, where: str, what: str) -> TokenRef:
    if re.fullmatch(r"#[0-9]+", text):  # ASCII digits: "#６" (full-width) is no position
        index = int(text[1:])
        return TokenRef(index=index)
    return TokenRef(text=text)


def pick_option(data: dict, model: str, where: str, kind: str) -> Pick:
    has_fixed = "layer" in data or "head" in data
    if "pick" in data:
        if has_fixed:
            _fail(where, f"{kind}: give either 'pick' or 'layer' and 'head', not both", "remove one of them")
        return _pick_rule(data["pick"], where, kind)
    if not ("layer" in data and "head" in data):
        _fail(where, f"{kind}: no head chosen", "add `layer:` and `head:` (counting from 1), or a `pick:` rule")
    layer = int_option(data["layer"], where, kind, "layer")
    head = int_option(data["head"], where, kind, "head")
    spec = MODELS[model]
    if not 1 <= layer <= spec.n_layer:
        _fail(where, f"{kind}: layer {layer} is out of range for {model}, which has layers 1 to {spec.n_layer}", f"use a layer from 1 to {spec.n_layer} (counting from 1)")
    if not 1 <= head <= spec.n_head:
        _fail(where, f"{kind}: head {head} is out of range for {model}, which has heads 1 to {spec.n_head}", f"use a head from 1 to {spec.n_head} (counting from 1)")
    return Pick("fixed", layer, head)


def _pick_best(value: dict, where: str, kind: str) -> Pick:
    """`pick: {best: induction}` or `{best: induction, rank: 2}`: a head from heads.json."""
    extra = sorted(set(value) - {"best", "rank"})
    if extra:
        _fail(where, f"{kind}: unknown pick option {', '.join(map(repr, extra))}", "a best-of-kind pick takes best and, optionally, rank")
    if value["best"] not in SCORE_KINDS:
        _fail(where, f"{kind}: unknown score kind {value['best']!r} in pick.best", f"use one of: {', '.join(SCORE_KINDS)}")
    rank = value.get("rank", 1)
    if isinstance(rank, bool) or not isinstance(rank, int) or rank < 1:
        _fail(where, f"{kind}: pick.rank must be a whole number from 1, not {rank!r}", "write `rank: 2` for the second-highest head")
    return Pick("best", kind=value["best"], rank=rank)


def _pick_rule(value: Any, where: str, kind: str) -> Pick:
    if isinstance(value, str):
        value = {"rule": value}
    if isinstance(value, dict) and "best" in value and "rule" not in value:
        return _pick_best(value, where, kind)
    if not isinstance(value, dict) or "rule" not in value:
        _fail(where, f"{kind}: 'pick' must give a rule", f"write `pick: {{rule: max-weight, from: her, to: Lily}}` or one of: {', '.join(PICK_RULES)}")
    rule = value["rule"]
    if not isinstance(rule, str) or rule not in PICK_RULES:
        _fail(where, f"{kind}: unknown pick rule {show(rule)}", f"use one of: {', '.join(PICK_RULES)}")
    extra = sorted(set(value) - {"rule", "from", "to"})
    if extra:
        _fail(where, f"{kind}: unknown pick option {', '.join(map(repr, extra))}", "a pick takes rule, and for max-weight, from and to")
    if rule == "max-weight":
        if "from" not in value or "to" not in value:
            _fail(where, f"{kind}: pick rule max-weight needs 'from' and 'to' tokens", "write `pick: {rule: max-weight, from: her, to: Lily}`")
        return Pick(rule, source=token_option(value["from"], where, kind, "pick.from"), target=token_option(value["to"], where, kind, "pick.to"))
    if "from" in value or "to" in value:
        _fail(where, f"{kind}: pick rule {rule} takes no 'from' or 'to'", "remove them, or use rule max-weight")
    return Pick(rule)


# YAML 1.1 reads `1e3` and `1.0e3` as text (its floats need a dot and a signed exponent, `1.0e+3`);
# a figure's numbers accept them as the numbers they look like.
SCIENTIFIC_RE = re.compile(r"[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)[eE][-+]?[0-9]+")


MAX_MAGNITUDE = 1e6  # a worked example's numbers; past this, products and exponentials overflow


def vector_option(value: Any, where: str, kind: str, name: str) -> tuple[float, ...]:
    if not isinstance(value, list) or not value:
        _fail(where, f"{kind}: '{name}' must be a list of numbers", f"write `{name}: [1, 0]`")
    out = []
    for x in value:
        if isinstance(x, str) and SCIENTIFIC_RE.fullmatch(x.strip()):
            x = float(x)
        if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x):
            _fail(where, f"{kind}: '{name}' holds {show(x)}, which is not a finite number", f"write `{name}` with numbers only")
        if abs(x) > MAX_MAGNITUDE:
            _fail(where, f"{kind}: '{name}' holds {x:g}, larger in size than {MAX_MAGNITUDE:,.0f}", f"write `{name}` with numbers between -{MAX_MAGNITUDE:,.0f} and {MAX_MAGNITUDE:,.0f}")
        out.append(float(x))
    return tuple(out)
