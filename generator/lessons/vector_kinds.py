"""Chapter 2's directive kinds: the tiny model's vectors, frozen by `make traces` into
traces/tiny/vectors.json (generator/model/vectors.py writes it, generator/store/vectors_file.py reads it).

    ```embedding
    model: tiny
    sentence: "Lily wanted to play with her"
    id: emb
    ```

    ```layernorm
    model: tiny
    sentence: "Lily wanted to play with her"
    token: her                  # default: the last token
    id: ln
    ```

    ```neighbours
    model: tiny
    words: [her, Lily, ball]    # a word names the token " her" (mid-sentence), or "her" if only that exists
    pairs: [[her, she], [her, ball]]   # dot products to show
    id: near
    ```

    ```map
    model: tiny
    mark: [her, she, Lily, Ben, ball]
    id: map
    ```

Only the tiny model: GPT-2's weights are not here, and no figure may invent its numbers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..registry import VECTOR_MODELS
from .body import show
from .errors import fail as _fail
from .values import Directive, TokenRef, model_option, sentence_option, text_option, token_option

MAX_WORDS = 12


@dataclass(frozen=True)
class Embedding(Directive):
    model: str = "tiny"
    sentence: str = ""
    caption: str | None = None


@dataclass(frozen=True)
class LayerNorm(Directive):
    model: str = "tiny"
    sentence: str = ""
    token: TokenRef | None = None  # default: the last


@dataclass(frozen=True)
class Neighbours(Directive):
    model: str = "tiny"
    words: tuple[str, ...] = ()
    pairs: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Map(Directive):
    model: str = "tiny"
    mark: tuple[str, ...] = ()
    caption: str | None = None


SPECS: dict[str, tuple[set[str], set[str]]] = {
    "embedding": ({"model", "sentence", "id", "caption"}, {"model", "sentence"}),
    "layernorm": ({"model", "sentence", "token", "id"}, {"model", "sentence"}),
    "neighbours": ({"model", "words", "pairs", "id"}, {"model", "words"}),
    "map": ({"model", "mark", "id", "caption"}, {"model", "mark"}),
}


def tiny_only(value: Any, where: str, kind: str) -> str:
    model = model_option(value, where, kind)
    if model not in VECTOR_MODELS:
        _fail(where, f"{kind}: only the tiny model's vectors are frozen in this course, not {model}'s (its weights are not here)", "write `model: tiny`")
    return model


def word_option(value: Any, where: str, kind: str, name: str) -> str:
    """A word as a lesson names a vocabulary entry: 'her', '·her' or ' her' (no inner spaces)."""
    if not isinstance(value, str) or not value.strip() or any(c.isspace() for c in value.strip()):
        _fail(where, f"{kind}: '{name}' holds {show(value)}, which is not one word", f"write words without spaces, like `{name}: [her, Lily]`")
    return value


def words_option(value: Any, where: str, kind: str, name: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not 1 <= len(value) <= MAX_WORDS:
        _fail(where, f"{kind}: '{name}' must be a list of 1 to {MAX_WORDS} words", f"write `{name}: [her, Lily]`")
    words = tuple(word_option(w, where, kind, name) for w in value)
    if len(set(words)) != len(words):
        _fail(where, f"{kind}: '{name}' lists a word twice", "list each word once")
    return words


def parse_embedding(data: dict, common: dict, where: str) -> Embedding:
    return Embedding(**common, model=tiny_only(data["model"], where, "embedding"), sentence=sentence_option(data["sentence"], where, "embedding"),
                     caption=text_option(data.get("caption"), where, "embedding", "caption"))


def parse_layernorm(data: dict, common: dict, where: str) -> LayerNorm:
    token = token_option(data["token"], where, "layernorm", "token") if "token" in data else None
    return LayerNorm(**common, model=tiny_only(data["model"], where, "layernorm"), sentence=sentence_option(data["sentence"], where, "layernorm"), token=token)


def parse_neighbours(data: dict, common: dict, where: str) -> Neighbours:
    kind = "neighbours"
    pairs = data.get("pairs", [])
    if not isinstance(pairs, list) or len(pairs) > MAX_WORDS or not all(isinstance(p, list) and len(p) == 2 for p in pairs):
        _fail(where, "neighbours: 'pairs' must be a list of two-word lists", "write `pairs: [[her, she], [her, ball]]`")
    return Neighbours(**common, model=tiny_only(data["model"], where, kind), words=words_option(data["words"], where, kind, "words"),
                      pairs=tuple((word_option(a, where, kind, "pairs"), word_option(b, where, kind, "pairs")) for a, b in pairs))


def parse_map(data: dict, common: dict, where: str) -> Map:
    return Map(**common, model=tiny_only(data["model"], where, "map"), mark=words_option(data["mark"], where, "map", "mark"),
               caption=text_option(data.get("caption"), where, "map", "caption"))


BUILDERS = {"embedding": parse_embedding, "layernorm": parse_layernorm, "neighbours": parse_neighbours, "map": parse_map}


def needs(directives) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """What vectors.json must hold for these directives: (sentence, where) and (word, where), each
    once, first use first."""
    sentences: dict[str, str] = {}
    words: dict[str, str] = {}
    for d in directives:
        if isinstance(d, (Embedding, LayerNorm)):
            sentences.setdefault(d.sentence, d.where)
        elif isinstance(d, Neighbours):
            for w in d.words + tuple(x for p in d.pairs for x in p):
                words.setdefault(w, d.where)
        elif isinstance(d, Map):
            for w in d.mark:
                words.setdefault(w, d.where)
    return list(sentences.items()), list(words.items())
