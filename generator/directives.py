"""Directive parsing: the one module that reads the course's fenced blocks and prose references.

A lesson writes a fenced block whose info string names the directive and whose body is YAML:

    ```attention
    model: tiny
    sentence: "Lily wanted to play with her"
    pick: {rule: max-weight, from: her, to: Lily}
    id: lily
    ```

and refers to its numbers in prose with `{{ lily.weight(her, Lily) }}`. Everything here is pure
parsing and validation (no traces, no torch): `make traces` uses it to find sentences, and the
Markdown extension uses it to render. Every error is one line: `path:line: what is wrong. Fix: how`.
"""

from __future__ import annotations

import math
import re
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

# Model names the course knows. Kept here (not imported from models.py) so parsing needs no torch.
KNOWN_MODELS: dict[str, dict[str, int]] = {
    "tiny": {"n_layer": 4, "n_head": 4, "n_ctx": 256},
    "gpt2": {"n_layer": 12, "n_head": 12, "n_ctx": 1024},
}

# Rough upper bound on tokens per character, to reject absurd sentences before tracing; the exact
# token count is checked against the context by the tracer.
MAX_SENTENCE_CHARS = 2000

SOURCE_MARK = "# @source "  # injected into fence bodies by the Markdown preprocessor
CODE_REF_PREFIX = "__course_ref_"  # stands in for a reference inside code until it is filled in


class DirectiveError(ValueError):
    """A lesson mistake. str() is the one-line message `path:line: problem. Fix: remedy`."""

    def __init__(self, where: str, problem: str, fix: str):
        self.where, self.problem, self.fix = where, problem, fix
        super().__init__(f"{where}: {problem}. Fix: {fix}")


# ---------------------------------------------------------------- shared value types


@dataclass(frozen=True)
class TokenRef:
    """A token named by its text ('her', '·her', ' her') or by its 1-based position ('#6')."""

    text: str | None = None
    index: int | None = None  # 1-based

    def describe(self) -> str:
        return f"#{self.index}" if self.index is not None else repr(self.text)


@dataclass(frozen=True)
class Pick:
    """How a figure chooses its head: fixed, or by a rule evaluated on the trace at build time."""

    rule: str  # "fixed" | "max-weight" | "previous-token" | "first-token" | "self"
    layer: int | None = None  # 1-based, for fixed
    head: int | None = None  # 1-based, for fixed
    source: TokenRef | None = None  # for max-weight: the token that looks ...
    target: TokenRef | None = None  # ... and the token it looks at

    def describe(self) -> str:
        if self.rule == "fixed":
            return f"layer {self.layer}, head {self.head}"
        if self.rule == "max-weight":
            return f"the head with the largest weight from {self.source.describe()} to {self.target.describe()}"
        return {
            "previous-token": "the head that looks most at the previous token",
            "first-token": "the head that looks most at the first token",
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


SCORE_KINDS = ("previous-token", "duplicate-token", "induction", "sink")

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
# `{{ page.minutes }}` (reading time) and `{{ page.words }}`: filled in by lesson_ext from the page's own words.
PAGE_FIELDS = ("minutes", "words")


def _fail(where: str, problem: str, fix: str):
    raise DirectiveError(where, problem, fix)


def split_source_mark(body: str, fallback: str) -> tuple[str, str]:
    """Strip the `# @source path:line` line the preprocessor injects; return (body, where)."""
    lines = body.split("\n")
    for i, line in enumerate(lines):
        if line.strip().startswith(SOURCE_MARK):
            where = line.strip()[len(SOURCE_MARK):].strip()
            return "\n".join(lines[:i] + lines[i + 1:]), where
    return body, fallback


def parse_directive(kind: str, body: str, where: str) -> Directive:
    """Parse and validate one fence body. `where` is "path:line" of the opening fence."""
    if kind not in SPECS:
        _fail(where, f"unknown directive '{kind}'", f"use one of: {', '.join(DIRECTIVE_KINDS)}")
    try:
        data = yaml.safe_load(body) if body.strip() else None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" (body line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        problem = getattr(exc, "problem", None) or "cannot be read"
        _fail(where, f"{kind}: malformed YAML{at}: {problem}", "write the options as `key: value` lines; quote sentences that contain ':' or '#'")
    if data is None:
        _fail(where, f"{kind}: the block is empty", f"give at least: {', '.join(sorted(SPECS[kind][1])) or 'model'}")
    if not isinstance(data, dict):
        _fail(where, f"{kind}: the body must be a mapping of options, not a {type(data).__name__}", "write the options as `key: value` lines")
    allowed, required = SPECS[kind]
    unknown = sorted(set(map(str, data)) - allowed)
    if unknown:
        _fail(where, f"{kind}: unknown option {', '.join(repr(u) for u in unknown)}", f"allowed options are: {', '.join(sorted(allowed))}")
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
        _fail(where, f"{kind}: id {value!r} is not a valid name", "use lowercase letters, digits, '-' or '_', starting with a letter (not 'model' or 'page')")
    return value


def _model(value: Any, where: str, kind: str) -> str:
    if value not in KNOWN_MODELS:
        _fail(where, f"{kind}: unknown model {value!r}", f"use one of: {', '.join(sorted(KNOWN_MODELS))}")
    return value


def _sentence(value: Any, where: str, kind: str) -> str:
    if not isinstance(value, str):
        _fail(where, f"{kind}: a sentence must be text, not {type(value).__name__} {value!r}", "quote the sentence")
    if not value.strip():
        _fail(where, f"{kind}: the sentence is empty", "write the sentence to trace")
    if len(value) > MAX_SENTENCE_CHARS:
        _fail(where, f"{kind}: the sentence has {len(value)} characters, more than the {MAX_SENTENCE_CHARS} this course traces", "shorten the sentence")
    return value


def _int(value: Any, where: str, kind: str, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        _fail(where, f"{kind}: '{name}' must be a whole number, not {value!r}", f"write `{name}: 1` (counting from 1)")
    return value


def _bool(value: Any, where: str, kind: str, name: str) -> bool:
    if not isinstance(value, bool):
        _fail(where, f"{kind}: '{name}' must be true or false, not {value!r}", f"write `{name}: true`")
    return value


def _opt_str(value: Any, where: str, kind: str, name: str) -> str | None:
    if value is not None and not isinstance(value, str):
        _fail(where, f"{kind}: '{name}' must be text", f"quote the {name}")
    return value


def _token_ref(value: Any, where: str, kind: str, name: str) -> TokenRef:
    if isinstance(value, bool):
        value = None
    if isinstance(value, int):
        if value < 1:
            _fail(where, f"{kind}: '{name}' position {value} is out of range", "count tokens from 1")
        return TokenRef(index=value)
    if isinstance(value, str) and value.strip():
        return parse_token_ref(value.strip(), where, f"{kind}: '{name}'")
    _fail(where, f"{kind}: '{name}' must name a token (its text, like her) or its position (like 6)", f"write `{name}: her`")


def parse_token_ref(text: str, where: str, what: str) -> TokenRef:
    if re.fullmatch(r"#\d+", text):
        index = int(text[1:])
        if index < 1:
            _fail(where, f"{what}: token position {text} is out of range", "count tokens from #1")
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
    limits = KNOWN_MODELS[model]
    if not 1 <= layer <= limits["n_layer"]:
        _fail(where, f"{kind}: layer {layer} is out of range for {model}, which has layers 1 to {limits['n_layer']}", f"use a layer from 1 to {limits['n_layer']} (counting from 1)")
    if not 1 <= head <= limits["n_head"]:
        _fail(where, f"{kind}: head {head} is out of range for {model}, which has heads 1 to {limits['n_head']}", f"use a head from 1 to {limits['n_head']} (counting from 1)")
    return Pick("fixed", layer, head)


def _pick_rule(value: Any, where: str, kind: str) -> Pick:
    if isinstance(value, str):
        value = {"rule": value}
    if not isinstance(value, dict) or "rule" not in value:
        _fail(where, f"{kind}: 'pick' must give a rule", f"write `pick: {{rule: max-weight, from: her, to: Lily}}` or one of: {', '.join(PICK_RULES)}")
    rule = value["rule"]
    if rule not in PICK_RULES:
        _fail(where, f"{kind}: unknown pick rule {rule!r}", f"use one of: {', '.join(PICK_RULES)}")
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


def _vector(value: Any, where: str, kind: str, name: str) -> tuple[float, ...]:
    if not isinstance(value, list) or not value:
        _fail(where, f"{kind}: '{name}' must be a list of numbers", f"write `{name}: [1, 0]`")
    out = []
    for x in value:
        if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x):
            _fail(where, f"{kind}: '{name}' holds {x!r}, which is not a finite number", f"write `{name}` with numbers only")
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
    focus = data.get("focus", tokens[-1])
    if focus not in tokens:
        _fail(where, f"stepper: focus {focus!r} is not one of the tokens", f"use one of: {', '.join(tokens)}")
    return Stepper(**common, tokens=tuple(tokens), focus=tokens.index(focus), **mats)


# ---------------------------------------------------------------- finding fences in files

FENCE_OPEN = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})[ \t]*(?P<lang>[\w-]+)?[^\n`]*$")


@dataclass(frozen=True)
class FenceBlock:
    kind: str
    body: str
    line: int  # 1-based line of the opening fence
    indent: str


def iter_fences(text: str):
    """Every fenced block of a Markdown text (at any indent), with its line number."""
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        m = FENCE_OPEN.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence, lang = m["indent"], m["fence"], (m["lang"] or "")
        close = re.compile(rf"^{re.escape(indent)}{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$")
        body, j = [], i + 1
        while j < len(lines) and not close.match(lines[j]):
            line = lines[j]
            body.append(line[len(indent):] if line.startswith(indent) else line.lstrip())
            j += 1
        yield FenceBlock(lang, "\n".join(body), i + 1, indent)
        i = j + 1


def parse_file(path: Path, display_path: str | None = None) -> list[Directive]:
    """Every course directive in one Markdown file, validated."""
    shown = display_path or str(path)
    text = path.read_text(encoding="utf-8")
    found = []
    for block in iter_fences(text):
        if block.kind in SPECS:
            found.append(parse_directive(block.kind, block.body, f"{shown}:{block.line}"))
    check_ids(found)
    list(iter_refs(text, shown))  # syntax only; what a reference means is checked against traces
    return found


def check_ids(directives: list[Directive]) -> None:
    seen: dict[str, str] = {}
    for d in directives:
        if d.id is None:
            continue
        if d.id in seen:
            _fail(d.where, f"{d.kind}: id '{d.id}' is used twice on this page (first at {seen[d.id]})", "give each figure its own id")
        seen[d.id] = d.where


@dataclass(frozen=True)
class Requested:
    """One (model, sentence) a lesson needs traced, and where the lesson asks for it."""

    model: str
    text: str
    source: str  # "path:line"


def iter_markdown(content_dir: Path):
    return sorted(p for p in content_dir.rglob("*.md") if "generated" not in p.parts)


def collect(content_dir: Path) -> list[Requested]:
    """Every (model, sentence) pair the lessons use, first use first, each once."""
    seen: dict[tuple[str, str], Requested] = {}
    for path in iter_markdown(content_dir):
        shown = path.relative_to(content_dir.parent).as_posix() if content_dir.parent in path.parents else str(path)
        for d in parse_file(path, shown):
            for model, text in directive_sentences(d):
                seen.setdefault((model, text), Requested(model, text, d.where))
    return list(seen.values())


def directive_sentences(d: Directive) -> list[tuple[str, str]]:
    if isinstance(d, Attention):
        return [(d.model, d.sentence)]
    if isinstance(d, (Compare, Predictions)):
        return [(d.model, s) for s in d.sentences]
    return []


def collect_requests(content_dir: Path):
    """For the trace step: items with `.request` (a store.TraceRequest) and `.source`."""
    from .store import TraceRequest  # store is torch-free

    @dataclass(frozen=True)
    class Item:
        request: TraceRequest
        source: str

    return [Item(TraceRequest(r.model, r.text), r.source) for r in collect(content_dir)]


# ---------------------------------------------------------------- prose references

# {{ lily.weight(her, Lily) }}  {{ lily.layer }}  {{ model.tiny.nLayer }}
REF_RE = re.compile(r"\{\{(?P<body>.*?)\}\}")
LINE_MARK_RE = re.compile(r"\s@(?P<line>\d+)\s*$")
REF_BODY_RE = re.compile(r"^(?P<target>[a-z][a-z0-9_-]*)\.(?P<path>[A-Za-z][A-Za-z0-9_.]*)(?:\((?P<args>[^()]*)\))?$")


@dataclass(frozen=True)
class Ref:
    target: str  # a figure id, or "model"
    name: str  # e.g. "weight", or "tiny.nLayer" for model refs
    args: tuple[str, ...]
    where: str
    raw: str


def parse_ref(body: str, where: str) -> Ref:
    """Parse the inside of `{{ ... }}` (a trailing ` @line` mark, if injected, sets the line)."""
    m = LINE_MARK_RE.search(body)
    if m:
        path = where.rsplit(":", 1)[0]
        where = f"{path}:{m['line']}"
        body = body[: m.start()]
    raw = body.strip()
    mb = REF_BODY_RE.match(raw)
    if not mb:
        _fail(where, f"reference {{{{ {raw} }}}} cannot be read", "write `{{ figure-id.weight(her, Lily) }}` or `{{ model.tiny.nLayer }}`")
    args = tuple(a.strip() for a in mb["args"].split(",")) if mb["args"] is not None and mb["args"].strip() else ()
    if any(not a for a in args):
        _fail(where, f"reference {{{{ {raw} }}}} has an empty argument", "separate arguments with single commas")
    if mb["target"] == "page" and (mb["path"] not in PAGE_FIELDS or args):
        _fail(where, f"unknown page reference {{{{ {raw} }}}}", f"use one of: {', '.join('{{ page.' + f + ' }}' for f in PAGE_FIELDS)}")
    return Ref(mb["target"], mb["path"], args, where, raw)


def iter_refs(text: str, shown: str):
    """Every `{{ }}` reference of a page, in prose and in code, with its line number (the
    bodies of course directives hold YAML, not references)."""
    code_refs: list = []
    for _i, line, role, _fence in walk_lines(annotate_source(text.split("\n"), shown, 1, code_refs)):
        if role == "prose":
            for rm in REF_RE.finditer(strip_code_spans(line)):
                yield parse_ref(rm["body"], shown)
    for _placeholder, ref in code_refs:
        yield ref


CODE_SPAN_RE = re.compile(r"(`+)(.+?)\1")


def strip_code_spans(line: str) -> str:
    return CODE_SPAN_RE.sub(lambda m: " " * len(m.group(0)), line)


# ---------------------------------------------------------------- source marks (for the Markdown extension)


def walk_lines(lines: list[str]):
    """Yield (index, line, role, fence_match) for each line: role is 'open', 'body', 'close' or
    'prose'; fence_match is the opening fence's match while inside a fence."""
    opened = None
    for i, line in enumerate(lines):
        if opened is None:
            m = FENCE_OPEN.match(line)
            if m:
                opened = m
                yield i, line, "open", m
            else:
                yield i, line, "prose", None
        elif line.strip().startswith(opened["fence"]) and not line.strip().strip(opened["fence"][0]):
            yield i, line, "close", opened
            opened = None
        else:
            yield i, line, "body", opened


def page_targets(lines: list[str]) -> set[str]:
    """What a reference inside code may name: the ids of the page's figures, `model` and `page`."""
    ids, body, fence = {"model", "page"}, [], None
    for _i, line, role, match in walk_lines(lines):
        if role == "open":
            fence, body = match, []
        elif role == "body":
            body.append(line)
        elif role == "close" and (fence["lang"] or "") in SPECS:
            try:
                data = yaml.safe_load(textwrap.dedent("\n".join(body)))
            except yaml.YAMLError:
                continue  # the fence itself reports it
            if isinstance(data, dict) and isinstance(data.get("id"), str):
                ids.add(data["id"])
    return ids


def annotate_source(lines: list[str], shown: str, first_line: int = 1, code_refs: list | None = None) -> list[str]:
    """Mark where each directive and reference comes from, so rendering errors name `path:line`.

    `lines` are a page's Markdown lines, `lines[0]` being line `first_line` of the file `shown`.
    Every course fence gets `# @source shown:line` as its first body line (at the fence's indent,
    so fences inside content tabs stay intact), and every `{{ ... }}` outside fences and code
    spans gets ` @line` before its `}}`. parse_directive/split_source_mark and parse_ref read both.

    References inside code (fenced code blocks and code spans) are references too when they name
    a figure of the page (or `model.`/`page.`), so that Code views can say
    `trace.layers[{{ lily.layer0 }}]` and run as written; other braces in code stay as written.
    Each is parsed here,
    replaced by a placeholder identifier that survives syntax highlighting, and appended to
    `code_refs` as (placeholder, Ref); the Markdown extension fills them in after rendering.
    """
    out: list[str] = []
    targets = page_targets(lines) if code_refs is not None else set()

    def code_placeholders(text: str, lineno: int) -> str:
        if code_refs is None:
            return text

        def swap(m: re.Match) -> str:
            mb = REF_BODY_RE.match(m["body"].strip())
            if not mb or mb["target"] not in targets:
                return m.group(0)  # other braces in code (a template, a dict) stay as written
            ref = parse_ref(m["body"], f"{shown}:{lineno}")
            placeholder = f"{CODE_REF_PREFIX}{len(code_refs)}__"
            code_refs.append((placeholder, ref))
            return placeholder

        return REF_RE.sub(swap, text)

    for i, line, role, fence in walk_lines(lines):
        lineno = first_line + i
        directive = fence is not None and (fence["lang"] or "") in SPECS
        if role == "open":
            out.append(line)
            if directive:
                out.append(f"{fence['indent']}{SOURCE_MARK}{shown}:{lineno}")
            continue
        if role == "body" and not directive:
            line = code_placeholders(line, lineno)
        elif role == "prose":
            line = CODE_SPAN_RE.sub(lambda cm: code_placeholders(cm.group(0), lineno), line)
            ends = [rm.end() - 2 for rm in REF_RE.finditer(strip_code_spans(line)) if not LINE_MARK_RE.search(rm["body"])]
            for end in reversed(ends):
                line = f"{line[:end]} @{lineno}{line[end:]}"
        out.append(line)
    return out
