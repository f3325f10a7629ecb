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

import re
from dataclasses import dataclass

from ..registry import KINDS as SCORE_KINDS, MODELS
from ..schema import TOP_K_PREDICTIONS
from .body import MAX_BODY_CHARS, MAX_DEPTH, check_strings, load_body, load_body_lines, show
from . import cache_kinds, causal_kinds, diagram_kinds, guess_kind, rope_kinds, split_kinds, token_kinds, vector_kinds
from .errors import LessonError, a_type
from .errors import fail as _fail
from .values import (
    ID_RE, MAX_SENTENCE_CHARS, PICK_RULES, RESERVED_IDS, SCIENTIFIC_RE, Directive, Pick, TokenRef,
    bool_option, ident_option, int_option, model_option, parse_token_ref, pick_option,
    sentence_option, text_option, token_option, vector_option,
)

__all__ = [  # what other modules read from here, the shared names included
    "MAX_BODY_CHARS", "MAX_DEPTH", "MAX_SENTENCE_CHARS", "ID_RE", "RESERVED_IDS", "PICK_RULES",
    "SCIENTIFIC_RE", "Directive", "Pick", "TokenRef", "load_body", "parse_token_ref",
    "SPECS", "DIRECTIVE_KINDS", "PATTERN_ONLY", "parse_directive", "check_code_fence",
]


@dataclass(frozen=True)
class Attention(Directive):
    model: str = ""
    sentence: str = ""
    pick: Pick = Pick("fixed", 1, 1)
    token: TokenRef | None = None  # focus token; default: the last
    show_heads: bool = False
    caption: str | None = None
    pattern_only: bool = False  # `pattern-only: true`: the figure tells the reader its head is only a pattern
    heads: str = "one"  # "group": beside it, the other query heads that share its key and value


@dataclass(frozen=True)
class Compare(Directive):
    model: str = ""
    sentences: tuple[str, str] = ("", "")
    pick: Pick = Pick("fixed", 1, 1)
    token: TokenRef | None = None
    caption: str | None = None
    pattern_only: bool = False


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
    pattern_only: bool = False


@dataclass(frozen=True)
class Training(Directive):
    model: str = "tiny"


@dataclass(frozen=True)
class Predictions(Directive):
    model: str = ""
    sentences: tuple[str, ...] = ()
    guesses: int = TOP_K_PREDICTIONS  # columns of guesses shown, of the TOP_K_PREDICTIONS traced


# kind -> (allowed keys, required keys)
SPECS: dict[str, tuple[set[str], set[str]]] = {
    "attention": ({"model", "sentence", "layer", "head", "pick", "token", "id", "show_heads", "caption", "pattern-only", "heads"}, {"model", "sentence"}),
    "compare": ({"model", "sentences", "layer", "head", "pick", "token", "id", "caption", "pattern-only"}, {"model", "sentences"}),
    "stepper": ({"tokens", "query", "key", "value", "focus", "id"}, {"tokens", "query", "key", "value"}),
    "softmax": ({"scores", "labels", "id"}, {"scores"}),
    "scoreboard": ({"model", "scores", "id", "pattern-only"}, {"model"}),
    "training": ({"model", "id"}, set()),
    "predictions": ({"model", "sentences", "guesses", "id"}, {"model", "sentences"}),
}
# Chapters 1 and 2's kinds, the causal chapter's, the drawn diagrams and the guesses live in their own modules, one per family; each gives its SPECS and a
# builder per kind, called with the checked options like the branches below.
FAMILIES = (token_kinds, vector_kinds, causal_kinds, diagram_kinds, guess_kind, split_kinds, rope_kinds, cache_kinds)
BUILDERS = {kind: build for family in FAMILIES for kind, build in family.BUILDERS.items()}
SPECS |= {kind: spec for family in FAMILIES for kind, spec in family.SPECS.items()}
DIRECTIVE_KINDS = tuple(SPECS)


def _heads_option(value, model: str, where: str, kind: str) -> str:
    """`heads: group`: the figure's head and the other query heads that read the same key and value."""
    if value not in ("one", "group"):
        _fail(where, f"{kind}: 'heads' must be one or group, not {show(value)}", "write `heads: group` to show the heads that share one key and value")
    spec = MODELS[model]
    if value == "group" and spec.kv_heads == spec.n_head:
        _fail(where, f"{kind}: 'heads' is group, but {model} gives every head its own key and value",
              f"use a model whose heads share keys ({', '.join(m for m, s in MODELS.items() if s.kv_heads < s.n_head)}), or leave out `heads`")
    return value


def parse_directive(kind: str, body: str, where: str) -> Directive:
    """Parse and validate one fence body. `where` is "path:line" of the opening fence; a mistake
    in one option names that option's line (:func:`at_option`)."""
    if kind not in SPECS:
        _fail(where, f"unknown directive '{kind}'", f"use one of: {', '.join(DIRECTIVE_KINDS)}")
    data, lines = load_body_lines(body, where, kind) if body.strip() else (None, {})
    option_where = option_lines(where, lines)
    try:
        return _parse(kind, data, where, option_where)
    except LessonError as e:
        raise at_option(e, where, option_where) from None


def option_lines(where: str, lines: dict[str, int]) -> dict[str, str]:
    """"path:line" of each option, from the fence's "path:line" and the options' body lines (the
    body starts on the line after the fence)."""
    path, _, line = where.rpartition(":")
    if not path or not line.isdigit():
        return {}
    return {name: f"{path}:{int(line) + n}" for name, n in lines.items()}


# Words a problem may start with before it names its subject: "the sentence is empty", "unknown
# model 'bert'".
_LEAD_WORDS = {"the", "a", "an", "unknown"}


def at_option(err: LessonError, fence: str, option_where: dict[str, str]) -> LessonError:
    """An error found at the figure's fence line, moved to the line of the option it is about:
    the problem's subject ("layer 9 is out of range", "unknown model 'bert'", "the two sentences
    are ...", a plural option by its singular), else an option it quotes ("give either 'pick'
    or ..."), else the option whose key it names ("... in pick.best"). Any other error (a missing
    option, the whole block) stays at the fence."""
    if err.where != fence:
        return err
    problem = err.problem.split(": ", 1)[1] if ": " in err.problem else err.problem  # after "kind: "
    words = [w.strip("'") for w in re.findall(r"'[^']*'|[a-z_]+", problem) if w not in _LEAD_WORDS]
    quoted = [w.strip("'") for w in re.findall(r"'[^']*'", problem)]
    # its first two words: "id 'model' is not a valid name" is about the id, not the model;
    # "unknown score kind 'x'" about the kind
    subject = words[:2]
    name = next((n for w in subject for n in option_where if n in (w, w + "s")), None)
    name = name or next((w for w in quoted if w in option_where), None)
    # "unknown score kind 'x' in pick.best": a key inside an option's mapping
    name = name or next((w for w in re.findall(r"\b([a-z_-]+)\.[a-z_-]+", re.sub(r"'[^']*'", "", problem)) if w in option_where), None)
    if name is None:
        return err
    return LessonError(option_where[name], err.problem, err.fix)


def _parse(kind: str, data, where: str, option_where: dict[str, str]) -> Directive:
    if data is None:
        _fail(where, f"{kind}: the block is empty", f"give at least: {', '.join(sorted(SPECS[kind][1])) or 'model'}")
    if not isinstance(data, dict):
        _fail(where, f"{kind}: the body must be a mapping of options, not {a_type(data)}", "write the options as `key: value` lines")
    allowed, required = SPECS[kind]
    unknown = sorted(set(map(str, data)) - allowed)
    if unknown:
        near = near_option(unknown[0], allowed - set(map(str, data)))
        if near:  # a misspelled option, as a misspelled kind (check_code_fence)
            _fail(where, f"{kind}: unknown option {show(unknown[0])}: did you mean {near}?", f"write `{near}:`; allowed options are: {', '.join(sorted(allowed))}")
        _fail(where, f"{kind}: unknown option {', '.join(show(u) for u in unknown[:3])}", f"allowed options are: {', '.join(sorted(allowed))}")
    for name, value in data.items():
        check_strings(value, where, kind, name)
    missing = sorted(required - set(data))
    if missing:
        _fail(where, f"{kind}: missing option {', '.join(repr(m) for m in missing)}", f"add `{missing[0]}: ...` to the block")
    ident = ident_option(data.get("id"), where, kind)
    common = dict(kind=kind, where=where, id=ident, options=data, option_where=option_where)
    if kind in BUILDERS:
        return BUILDERS[kind](data, common, where)

    if kind == "attention":
        model = model_option(data["model"], where, kind)
        pick = pick_option(data, model, where, kind)
        return Attention(
            **common,
            model=model,
            sentence=sentence_option(data["sentence"], where, kind),
            pick=pick,
            token=token_option(data.get("token"), where, kind, "token") if "token" in data else None,
            show_heads=bool_option(data.get("show_heads", False), where, kind, "show_heads"),
            caption=text_option(data.get("caption"), where, kind, "caption"),
            pattern_only=_pattern_only(data, where, kind, pick),
            heads=_heads_option(data.get("heads", "one"), model, where, kind),
        )
    if kind == "compare":
        model = model_option(data["model"], where, kind)
        sentences = data["sentences"]
        if not isinstance(sentences, list) or len(sentences) != 2:
            _fail(where, "compare: 'sentences' must be a list of exactly two sentences", 'write `sentences: ["first sentence", "second sentence"]`')
        pick = pick_option(data, model, where, kind)
        return Compare(
            **common,
            model=model,
            sentences=tuple(sentence_option(s, where, kind) for s in sentences),
            pick=pick,
            token=token_option(data.get("token"), where, kind, "token") if "token" in data else None,
            caption=text_option(data.get("caption"), where, kind, "caption"),
            pattern_only=_pattern_only(data, where, kind, pick),
        )
    if kind == "stepper":
        return _stepper(data, common, where)
    if kind == "softmax":
        scores = vector_option(data["scores"], where, kind, "scores")
        if not 2 <= len(scores) <= 8:
            _fail(where, f"softmax: 'scores' must hold 2 to 8 numbers, not {len(scores)}", "add or remove scores")
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
        if len(set(scores)) != len(scores):  # each ranking's ids would be on the page twice
            _fail(where, "scoreboard: a score is listed twice", "list each score once")
        return Scoreboard(**common, model=model_option(data["model"], where, kind), scores=tuple(scores),
                          pattern_only=_pattern_only(data, where, kind))
    if kind == "training":
        model = model_option(data.get("model", "tiny"), where, kind)
        if model != "tiny":
            _fail(where, f"training: only the tiny model has a training log in this course, not '{model}'", "write `model: tiny`")
        return Training(**common, model=model)
    if kind == "predictions":
        sentences = data["sentences"]
        if isinstance(sentences, str):
            sentences = [sentences]
        if not isinstance(sentences, list) or not sentences:
            _fail(where, "predictions: 'sentences' must be a list of sentences", 'write `sentences: ["a sentence"]`')
        guesses = int_option(data.get("guesses", TOP_K_PREDICTIONS), where, kind, "guesses")
        if not 1 <= guesses <= TOP_K_PREDICTIONS:
            _fail(where, f"predictions: 'guesses' must be from 1 to {TOP_K_PREDICTIONS} (the traces hold the top {TOP_K_PREDICTIONS}), not {guesses}",
                  f"write `guesses: 3`, or leave it out for all {TOP_K_PREDICTIONS}")
        return Predictions(
            **common,
            model=model_option(data["model"], where, kind),
            sentences=tuple(sentence_option(s, where, kind) for s in sentences),
            guesses=guesses,
        )
    raise AssertionError(kind)  # SPECS, BUILDERS and the branches above cover every kind


PATTERN_ONLY = "pattern-only"


def _pattern_only(data: dict, where: str, kind: str, pick: Pick | None = None) -> bool:
    """`pattern-only: true`: a figure that names a head for a job (a scoreboard's example grids,
    `pick: {best: kind}`) tells the reader, in a fixed sentence, that its grid is only a pattern,
    instead of the page testing the head with a causal number. On a figure that names no head for
    a job it would say nothing true, so it is refused."""
    value = bool_option(data.get(PATTERN_ONLY, False), where, kind, PATTERN_ONLY)
    if value and pick is not None and pick.rule != "best":
        _fail(where, f"{kind}: '{PATTERN_ONLY}' says the head a figure picked for a job is only a pattern, and this figure picks no head for a job",
              f"remove `{PATTERN_ONLY}: true`; it belongs on a scoreboard or on a figure with `pick: {{best: induction}}`")
    return value


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
        mats[name] = tuple(vector_option(r, where, kind, name) for r in rows)
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
        _fail(where, f"stepper: focus {show(focus)} is not one of the tokens", f"use one of: {', '.join(tokens)}")
    if len(hits) > 1:
        _fail(where, f"stepper: focus {show(focus)} is tokens {' and '.join(str(i + 1) for i in hits)}", f"give its position instead, like `focus: {hits[-1] + 1}`")
    return hits[0]


# ---------------------------------------------------------------- fences that are not figures

NEAR_MISS = 2  # an info string this many edits from a figure kind is a misspelled figure


def edit_distance(a: str, b: str) -> int:
    """Levenshtein distance (insertions, deletions, substitutions), casefolded."""
    a, b = a.casefold(), b.casefold()
    row = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        prev, row[0] = row[0], i
        for j, cb in enumerate(b, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (ca != cb))
    return row[-1]


def near_option(name: str, options: set[str]) -> str | None:
    """The one option `name` is a misspelling of (within NEAR_MISS edits, case and - for _ aside),
    or None where none is, or two are, that near."""
    key = name.lower().replace("-", "_")
    scored = sorted((edit_distance(key, o), o) for o in options)
    if not scored or scored[0][0] > min(NEAR_MISS, len(key) // 2) or (len(scored) > 1 and scored[1][0] == scored[0][0]):
        return None
    return scored[0][1]


def is_code_language(name: str) -> bool:
    """Whether a fence's info string names a language the highlighter knows (yaml, text, js ...):
    such a fence is code, whatever it holds. Pygments comes with mkdocs-material."""
    from pygments.lexers import find_lexer_class_by_name
    from pygments.util import ClassNotFound

    try:
        find_lexer_class_by_name(name)
        return True
    except ClassNotFound:
        return False


def figure_options_kind(body: str) -> str | None:
    """The figure kind whose options a fence body is (two options or more, all its required ones,
    none it does not take), or None. The body is read as _BodyLoader reads a figure's."""
    if not body.strip() or len(body) > MAX_BODY_CHARS:
        return None
    try:
        data = load_body(body, "", "")
    except Exception:  # not YAML a figure could hold: plain code
        return None
    if not isinstance(data, dict) or not all(isinstance(k, str) for k in data):
        return None
    keys = set(data)
    if len(keys) < 2:  # `model: tiny` alone is as likely a note about a model as a figure
        return None
    # the kind that requires the most of these options; among equals, the course's earlier kind
    # (attention before the kinds that borrowed its options), so that a new kind never changes the answer
    order = {k: n for n, k in enumerate(SPECS)}
    fits = [k for k, (allowed, required) in SPECS.items() if required and required <= keys <= allowed]
    return max(fits, key=lambda k: (len(SPECS[k][1]), -order[k]), default=None)


def check_code_fence(kind: str, body: str, where: str) -> None:
    """A fence that is not a figure, refused when it looks like one: its info string is a figure
    kind misspelled (within NEAR_MISS edits), or its body is a figure's options under no language
    the highlighter knows. Code says so with a language (```yaml, ```text)."""
    if kind in SPECS or (kind and is_code_language(kind)):
        return
    fix_code = "or, if it is code, give the fence a language such as ```yaml or ```text"
    if kind:
        near = sorted((edit_distance(kind, k), k) for k in DIRECTIVE_KINDS)[0]
        if near[0] <= NEAR_MISS:
            _fail(where, f"unknown figure kind '{kind}': did you mean {near[1]}?", f"write ```{near[1]}, {fix_code}")
    options_of = figure_options_kind(body)
    if options_of:
        what = f"unknown figure kind '{kind}'" if kind else "a fence with no figure kind"
        article = "an" if options_of[0] in "aeiou" else "a"
        _fail(where, f"{what} holds the options of {article} {options_of} figure", f"write ```{options_of}, {fix_code}")
