"""Directive parsing: one dataclass and one validator per kind of fenced block.

A lesson writes a fenced block whose info string names the directive and whose body is YAML:

    ```attention
    model: tiny
    sentence: "Lily wanted to play with her"
    pick: {rule: max-weight, from: her, to: Lily}
    id: lily
    ```

The body is read with yaml.safe_load, then validated here. Everything is pure parsing (no traces,
no torch): `make traces` uses it to find sentences, and the Markdown extension uses it to render.
Every error is a LessonError, one line: `path:line: what is wrong. Fix: how`.
"""

from __future__ import annotations

import math
import re
import reprlib
from dataclasses import dataclass, field
from typing import Any

import yaml

from ..registry import KINDS as SCORE_KINDS
from ..registry import MODELS, NAMES
from .errors import fail as _fail
from .source import bad_char

# Rough upper bound on tokens per character, to reject absurd sentences before tracing; the exact
# token count is checked against the context by the tracer.
MAX_SENTENCE_CHARS = 2000
MAX_BODY_CHARS = 20_000  # a figure's options; far more than any figure needs
MAX_DEPTH = 8  # nesting of lists and mappings in a body (a stepper needs 2)

_SHOW = reprlib.Repr()
_SHOW.maxlevel, _SHOW.maxdict, _SHOW.maxlist, _SHOW.maxstring, _SHOW.maxother = 2, 4, 4, 60, 60


def _show(value: Any) -> str:
    """A parsed value as a message shows it: repr, bounded in length and depth (reprlib never
    builds the full repr of a large value)."""
    return _SHOW.repr(value)


# ---------------------------------------------------------------- reading a body


class _Refused(Exception):
    def __init__(self, mark, problem: str, fix: str):
        self.line = mark.line + 1 if mark is not None else None
        self.problem, self.fix = problem, fix


class _BodyLoader(yaml.SafeLoader):
    """yaml.SafeLoader that refuses anchors and aliases (`&a`/`*a`: an alias bomb expands a few
    lines into gigabytes), nesting deeper than MAX_DEPTH, and a key given twice in one mapping
    (plain YAML keeps the last one silently)."""

    def compose_node(self, parent, index):
        event = self.peek_event()
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
            raise _Refused(event.start_mark, "uses a YAML anchor or alias (&name, *name)", "write each value out in full; a figure's options take no anchors or aliases")
        self._depth = getattr(self, "_depth", 0) + 1
        try:
            if self._depth > MAX_DEPTH:
                raise _Refused(event.start_mark, f"nests lists or mappings more than {MAX_DEPTH} levels deep", "write the options as `key: value` lines with plain lists")
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def construct_mapping(self, node, deep=False):
        seen: dict[tuple[str, str], int] = {}
        for key_node, _value in node.value if isinstance(node, yaml.MappingNode) else ():
            if isinstance(key_node, yaml.ScalarNode):
                k = (key_node.tag, key_node.value)
                line = key_node.start_mark.line + 1
                if k in seen:
                    raise _Refused(None, f"gives the option {_show(key_node.value)} twice (body lines {seen[k]} and {line})", "keep one of them")
                seen[k] = line
        return super().construct_mapping(node, deep=deep)


def _check_strings(value: Any, where: str, kind: str, name: str) -> None:
    """No control character or lone surrogate in any text of the body (keys included)."""
    if isinstance(value, str):
        bad = bad_char(value)
        if bad:
            _fail(where, f"{kind}: '{name}' holds {bad[1]} at character {bad[0] + 1}", "remove it; a figure's text is plain, printable text")
    elif isinstance(value, dict):
        for k, v in value.items():
            _check_strings(k, where, kind, name)
            _check_strings(v, where, kind, name)
    elif isinstance(value, (list, tuple)):
        for v in value:
            _check_strings(v, where, kind, name)


def load_body(body: str, where: str, kind: str) -> Any:
    """The YAML of a fence body, parsed by _BodyLoader; every problem is a LessonError."""
    if len(body) > MAX_BODY_CHARS:
        _fail(where, f"{kind}: the block has {len(body):,} characters, more than the {MAX_BODY_CHARS:,} a figure may have", "shorten the block")
    bad = bad_char(body)
    if bad:
        line = body.count("\n", 0, bad[0]) + 1
        _fail(where, f"{kind}: body line {line} holds {bad[1]}", "remove it; a figure's text is plain, printable text")
    loader = _BodyLoader(body)
    try:
        return loader.get_single_data()
    except _Refused as exc:
        at = f" (body line {exc.line})" if exc.line else ""
        _fail(where, f"{kind}: the block {exc.problem}{at}", exc.fix)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" (body line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        problem = getattr(exc, "problem", None) or "cannot be read"
        _fail(where, f"{kind}: malformed YAML{at}: {problem}", "write the options as `key: value` lines; quote sentences that contain ':' or '#'")
    except (ValueError, TypeError, OverflowError) as exc:  # a tag's constructor (!!timestamp, !!binary ...) gave up
        _fail(where, f"{kind}: the block cannot be read as YAML ({type(exc).__name__}: {_show(str(exc))})", "write the options as plain `key: value` lines, without `!!` tags")
    finally:
        loader.dispose()

# ---------------------------------------------------------------- shared value types


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


# ---------------------------------------------------------------- directives


@dataclass(frozen=True)
class Directive:
    kind: str
    where: str  # "path:line" of the fence's opening line
    id: str | None
    options: dict = field(default_factory=dict, compare=False, hash=False)


@dataclass(frozen=True)
class Attention(Directive):
    model: str = ""
    sentence: str = ""
    pick: Pick = Pick("fixed", 1, 1)
    token: TokenRef | None = None  # focus token; default: the last
    show_heads: bool = False
    caption: str | None = None


@dataclass(frozen=True)
class Compare(Directive):
    model: str = ""
    sentences: tuple[str, str] = ("", "")
    pick: Pick = Pick("fixed", 1, 1)
    token: TokenRef | None = None
    caption: str | None = None


@dataclass(frozen=True)
class Stepper(Directive):
    tokens: tuple[str, ...] = ()
    query: tuple[tuple[float, ...], ...] = ()
    key: tuple[tuple[float, ...], ...] = ()
    value: tuple[tuple[float, ...], ...] = ()
    focus: int = 0  # 0-based index of the token whose row the numbers follow


@dataclass(frozen=True)
class Softmax(Directive):
    scores: tuple[float, ...] = ()
    labels: tuple[str, ...] = ()


@dataclass(frozen=True)
class Scoreboard(Directive):
    model: str = ""
    scores: tuple[str, ...] = ()


@dataclass(frozen=True)
class Training(Directive):
    model: str = "tiny"


@dataclass(frozen=True)
class Predictions(Directive):
    model: str = ""
    sentences: tuple[str, ...] = ()



# kind -> (allowed keys, required keys)
SPECS: dict[str, tuple[set[str], set[str]]] = {
    "attention": ({"model", "sentence", "layer", "head", "pick", "token", "id", "show_heads", "caption"}, {"model", "sentence"}),
    "compare": ({"model", "sentences", "layer", "head", "pick", "token", "id", "caption"}, {"model", "sentences"}),
    "stepper": ({"tokens", "query", "key", "value", "focus", "id"}, {"tokens", "query", "key", "value"}),
    "softmax": ({"scores", "labels", "id"}, {"scores"}),
    "scoreboard": ({"model", "scores", "id"}, {"model"}),
    "training": ({"model", "id"}, set()),
    "predictions": ({"model", "sentences", "id"}, {"model", "sentences"}),
}
DIRECTIVE_KINDS = tuple(SPECS)

ID_RE = re.compile(r"^[a-z][a-z0-9_-]*$")
RESERVED_IDS = {"model", "page"}

def parse_directive(kind: str, body: str, where: str) -> Directive:
    """Parse and validate one fence body. `where` is "path:line" of the opening fence."""
    if kind not in SPECS:
        _fail(where, f"unknown directive '{kind}'", f"use one of: {', '.join(DIRECTIVE_KINDS)}")
    data = load_body(body, where, kind) if body.strip() else None
    if data is None:
        _fail(where, f"{kind}: the block is empty", f"give at least: {', '.join(sorted(SPECS[kind][1])) or 'model'}")
    if not isinstance(data, dict):
        _fail(where, f"{kind}: the body must be a mapping of options, not a {type(data).__name__}", "write the options as `key: value` lines")
    allowed, required = SPECS[kind]
    unknown = sorted(set(map(str, data)) - allowed)
    if unknown:
        _fail(where, f"{kind}: unknown option {', '.join(_show(u) for u in unknown[:3])}", f"allowed options are: {', '.join(sorted(allowed))}")
    for name, value in data.items():
        _check_strings(value, where, kind, name)
    missing = sorted(required - set(data))
    if missing:
        _fail(where, f"{kind}: missing option {', '.join(repr(m) for m in missing)}", f"add `{missing[0]}: ...` to the block")
    ident = _ident(data.get("id"), where, kind)
    common = dict(kind=kind, where=where, id=ident, options=data)

    if kind == "attention":
        model = _model(data["model"], where, kind)
        return Attention(
            **common,
            model=model,
            sentence=_sentence(data["sentence"], where, kind),
            pick=_pick(data, model, where, kind),
            token=_token_ref(data.get("token"), where, kind, "token") if "token" in data else None,
            show_heads=_bool(data.get("show_heads", False), where, kind, "show_heads"),
            caption=_opt_str(data.get("caption"), where, kind, "caption"),
        )
    if kind == "compare":
        model = _model(data["model"], where, kind)
        sentences = data["sentences"]
        if not isinstance(sentences, list) or len(sentences) != 2:
            _fail(where, "compare: 'sentences' must be a list of exactly two sentences", 'write `sentences: ["first sentence", "second sentence"]`')
        return Compare(
            **common,
            model=model,
            sentences=tuple(_sentence(s, where, kind) for s in sentences),
            pick=_pick(data, model, where, kind),
            token=_token_ref(data.get("token"), where, kind, "token") if "token" in data else None,
            caption=_opt_str(data.get("caption"), where, kind, "caption"),
        )
    if kind == "stepper":
        return _stepper(data, common, where)
    if kind == "softmax":
        scores = _vector(data["scores"], where, kind, "scores")
        if not 2 <= len(scores) <= 8:
            _fail(where, f"softmax: 'scores' has {len(scores)} numbers", "give between 2 and 8 scores")
        labels = data.get("labels", [chr(ord("a") + i) for i in range(len(scores))])
        if not isinstance(labels, list) or len(labels) != len(scores) or not all(isinstance(x, (str, int)) for x in labels):
            _fail(where, "softmax: 'labels' must be a list with one label per score", f"give {len(scores)} labels")
        return Softmax(**common, scores=scores, labels=tuple(str(x) for x in labels))
    if kind == "scoreboard":
        scores = data.get("scores", list(SCORE_KINDS))
        if not isinstance(scores, list) or not scores:
            _fail(where, "scoreboard: 'scores' must be a non-empty list", f"choose from: {', '.join(SCORE_KINDS)}")
        for s in scores:
            if s not in SCORE_KINDS:
                _fail(where, f"scoreboard: unknown score '{s}'", f"choose from: {', '.join(SCORE_KINDS)}")
        return Scoreboard(**common, model=_model(data["model"], where, kind), scores=tuple(scores))
    if kind == "training":
        model = _model(data.get("model", "tiny"), where, kind)
        if model != "tiny":
            _fail(where, f"training: only the tiny model has a training log in this course, not '{model}'", "write `model: tiny`")
        return Training(**common, model=model)
    if kind == "predictions":
        sentences = data["sentences"]
        if isinstance(sentences, str):
            sentences = [sentences]
        if not isinstance(sentences, list) or not sentences:
            _fail(where, "predictions: 'sentences' must be a list of sentences", 'write `sentences: ["a sentence"]`')
        return Predictions(
            **common,
            model=_model(data["model"], where, kind),
            sentences=tuple(_sentence(s, where, kind) for s in sentences),
        )
    raise AssertionError(kind)  # SPECS and the branches above cover every kind


def _ident(value: Any, where: str, kind: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not ID_RE.match(value) or value in RESERVED_IDS:
        _fail(where, f"{kind}: id {_show(value)} is not a valid name", "use lowercase letters, digits, '-' or '_', starting with a letter (not 'model' or 'page')")
    return value


def _model(value: Any, where: str, kind: str) -> str:
    if not isinstance(value, str) or value not in MODELS:
        _fail(where, f"{kind}: unknown model {_show(value)}", f"use one of: {', '.join(sorted(MODELS))}")
    return value


def _sentence(value: Any, where: str, kind: str) -> str:
    if not isinstance(value, str):
        _fail(where, f"{kind}: a sentence must be text, not {type(value).__name__} {_show(value)}", "quote the sentence")
    if not value.strip():
        _fail(where, f"{kind}: the sentence is empty", "write the sentence to trace")
    if len(value) > MAX_SENTENCE_CHARS:
        _fail(where, f"{kind}: the sentence has {len(value)} characters, more than the {MAX_SENTENCE_CHARS} this course traces", "shorten the sentence")
    return value


def _int(value: Any, where: str, kind: str, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        _fail(where, f"{kind}: '{name}' must be a whole number, not {_show(value)}", f"write `{name}: 1` (counting from 1)")
    return value


def _bool(value: Any, where: str, kind: str, name: str) -> bool:
    if not isinstance(value, bool):
        _fail(where, f"{kind}: '{name}' must be true or false, not {_show(value)}", f"write `{name}: true`")
    return value


def _opt_str(value: Any, where: str, kind: str, name: str) -> str | None:
    if value is not None and not isinstance(value, str):
        _fail(where, f"{kind}: '{name}' must be text", f"quote the {name}")
    return value


def _token_ref(value: Any, where: str, kind: str, name: str) -> TokenRef:
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
    if re.fullmatch(r"#\d+", text):
        index = int(text[1:])
        return TokenRef(index=index)
    return TokenRef(text=text)


def _pick(data: dict, model: str, where: str, kind: str) -> Pick:
    has_fixed = "layer" in data or "head" in data
    if "pick" in data:
        if has_fixed:
            _fail(where, f"{kind}: give either 'pick' or 'layer' and 'head', not both", "remove one of them")
        return _pick_rule(data["pick"], where, kind)
    if not ("layer" in data and "head" in data):
        _fail(where, f"{kind}: no head chosen", "add `layer:` and `head:` (counting from 1), or a `pick:` rule")
    layer = _int(data["layer"], where, kind, "layer")
    head = _int(data["head"], where, kind, "head")
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
        _fail(where, f"{kind}: unknown pick rule {_show(rule)}", f"use one of: {', '.join(PICK_RULES)}")
    extra = sorted(set(value) - {"rule", "from", "to"})
    if extra:
        _fail(where, f"{kind}: unknown pick option {', '.join(map(repr, extra))}", "a pick takes rule, and for max-weight, from and to")
    if rule == "max-weight":
        if "from" not in value or "to" not in value:
            _fail(where, f"{kind}: pick rule max-weight needs 'from' and 'to' tokens", "write `pick: {rule: max-weight, from: her, to: Lily}`")
        return Pick(rule, source=_token_ref(value["from"], where, kind, "pick.from"), target=_token_ref(value["to"], where, kind, "pick.to"))
    if "from" in value or "to" in value:
        _fail(where, f"{kind}: pick rule {rule} takes no 'from' or 'to'", "remove them, or use rule max-weight")
    return Pick(rule)


# YAML 1.1 reads `1e3` and `1.0e3` as text (its floats need a dot and a signed exponent, `1.0e+3`);
# a figure's numbers accept them as the numbers they look like.
SCIENTIFIC_RE = re.compile(r"[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)[eE][-+]?[0-9]+")


def _vector(value: Any, where: str, kind: str, name: str) -> tuple[float, ...]:
    if not isinstance(value, list) or not value:
        _fail(where, f"{kind}: '{name}' must be a list of numbers", f"write `{name}: [1, 0]`")
    out = []
    for x in value:
        if isinstance(x, str) and SCIENTIFIC_RE.fullmatch(x.strip()):
            x = float(x)
        if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x):
            _fail(where, f"{kind}: '{name}' holds {_show(x)}, which is not a finite number", f"write `{name}` with numbers only")
        out.append(float(x))
    return tuple(out)


def _stepper(data: dict, common: dict, where: str) -> Stepper:
    kind = "stepper"
    tokens = data["tokens"]
    if not isinstance(tokens, list) or not 2 <= len(tokens) <= 6 or not all(isinstance(t, str) and t.strip() for t in tokens):
        _fail(where, "stepper: 'tokens' must be a list of 2 to 6 words", "write `tokens: [Lily, ran, she]`")
    n = len(tokens)
    mats = {}
    for name in ("query", "key", "value"):
        rows = data[name]
        if not isinstance(rows, list) or len(rows) != n:
            _fail(where, f"stepper: '{name}' must have one vector per token ({n})", f"give {n} vectors, like `{name}: [[1, 0], ...]`")
        mats[name] = tuple(_vector(r, where, kind, name) for r in rows)
    dims = {len(r) for m in (mats["query"], mats["key"]) for r in m}
    if len(dims) != 1:
        _fail(where, "stepper: queries and keys must all have the same length", "give every query and key the same number of entries")
    if len({len(r) for r in mats["value"]}) != 1:
        _fail(where, "stepper: the values must all have the same length", "give every value the same number of entries")
    return Stepper(**common, tokens=tuple(tokens), focus=_focus(data, tokens, where), **mats)


def _focus(data: dict, tokens: list[str], where: str) -> int:
    """The 0-based focus row: `focus:` names a token by its text (which must be unique) or its
    position counting from 1; without `focus`, the last token."""
    if "focus" not in data:
        return len(tokens) - 1
    focus = data["focus"]
    if isinstance(focus, int) and not isinstance(focus, bool):
        if not 1 <= focus <= len(tokens):
            _fail(where, f"stepper: focus position {focus} is out of range", f"give a position from 1 to {len(tokens)}, or a token's text")
        return focus - 1
    hits = [i for i, t in enumerate(tokens) if t == focus]
    if not hits:
        _fail(where, f"stepper: focus {_show(focus)} is not one of the tokens", f"use one of: {', '.join(tokens)}")
    if len(hits) > 1:
        _fail(where, f"stepper: focus {_show(focus)} is tokens {' and '.join(str(i + 1) for i in hits)}", f"give its position instead, like `focus: {hits[-1] + 1}`")
    return hits[0]
