"""Chapter 1's directive kinds: how text becomes tokens, on the committed tokenizers.

    ```tokens
    sentences: ["Lily wanted to play with her", "The dog ran to the park"]
    models: [tiny, gpt2]        # default: both, side by side
    id: split
    ```

    ```merges
    model: tiny                 # default tiny
    word: " playing"            # one word, with its leading space as it stands mid-sentence
    id: play
    ```

Pure parsing: the tokens themselves come from generator/tokens.py and generator/bpe.py when the
figure is rendered (no trace, no torch).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..registry import MODELS
from .body import show
from .errors import fail as _fail
from .values import Directive, model_option, sentence_option, text_option

MAX_SENTENCES = 12  # a picker of a dozen sentences is plenty; each is tokenized twice per build
MAX_WORD_CHARS = 40


@dataclass(frozen=True)
class Tokens(Directive):
    sentences: tuple[str, ...] = ()
    models: tuple[str, ...] = ("tiny", "gpt2")
    caption: str | None = None


@dataclass(frozen=True)
class Merges(Directive):
    model: str = "tiny"
    word: str = ""  # as the tokenizer reads it: " playing" (a leading '·' is read as a space)


SPECS: dict[str, tuple[set[str], set[str]]] = {
    "tokens": ({"sentences", "models", "id", "caption"}, {"sentences"}),
    "merges": ({"model", "word", "id"}, {"word"}),
}


def parse_tokens(data: dict, common: dict, where: str) -> Tokens:
    kind = "tokens"
    sentences = data["sentences"]
    if isinstance(sentences, str):
        sentences = [sentences]
    if not isinstance(sentences, list) or not 1 <= len(sentences) <= MAX_SENTENCES:
        _fail(where, f"tokens: 'sentences' must be a list of 1 to {MAX_SENTENCES} sentences", 'write `sentences: ["a sentence", "another"]`')
    clean = tuple(sentence_option(s, where, kind) for s in sentences)
    if len(set(clean)) != len(clean):
        _fail(where, "tokens: a sentence is listed twice", "list each sentence once")
    models = data.get("models", ["tiny", "gpt2"])
    if isinstance(models, str):
        models = [models]
    if not isinstance(models, list) or not 1 <= len(models) <= len(MODELS):
        _fail(where, f"tokens: 'models' must be a list of 1 to {len(MODELS)} models", f"write `models: [{', '.join(MODELS)}]`")
    picked = tuple(model_option(m, where, kind) for m in models)
    if len(set(picked)) != len(picked):
        _fail(where, "tokens: a model is listed twice", "list each model once")
    return Tokens(**common, sentences=clean, models=picked, caption=text_option(data.get("caption"), where, kind, "caption"))


def parse_word(value: Any, where: str, kind: str) -> str:
    """One word as the tokenizer reads it: letters (or any characters but spaces), with at most
    one leading space, written as ' ' or '·'."""
    if not isinstance(value, str):
        _fail(where, f"{kind}: 'word' must be text, not {show(value)}", 'quote the word: `word: " playing"`')
    word = " " + value[1:] if value.startswith("·") else value
    bare = word[1:] if word.startswith(" ") else word
    if not bare or any(c.isspace() for c in bare) or len(word) > MAX_WORD_CHARS:
        _fail(where, f"{kind}: 'word' {show(value)} is not one word", f'write one word of at most {MAX_WORD_CHARS} characters, with its leading space if it has one: `word: " playing"`')
    return word


def parse_merges(data: dict, common: dict, where: str) -> Merges:
    model = model_option(data.get("model", "tiny"), where, "merges")
    return Merges(**common, model=model, word=parse_word(data["word"], where, "merges"))


BUILDERS = {"tokens": parse_tokens, "merges": parse_merges}
