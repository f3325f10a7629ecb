"""Byte-pair encoding as chapter 1 shows it, from the committed tokenizers (no torch).

Both models' tokenizers are byte-level BPE: a word is first cut into single bytes, each byte written
as one printable character (a space is "Ġ"), and then the merge list is applied: of all
neighbouring pairs in the word, the pair that comes earliest in the list is joined, again and
again, until no pair of the word is in the list. :func:`merge_steps` replays exactly that with the
real list (``tiny_model/tokenizer.json``'s ``model.merges``, ``gpt2/merges.txt``) and checks that
it ends on the tokenizer's own tokens, so a figure can never show a merge the model does not have.

:func:`split` gives a sentence's tokens with the characters each covers (for "which tokens make
this word").
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass

from . import schema, tokens

# The two functions below are written as a learner reads them: chapter 1's notebook ships their
# source as it is (generator/notebooks/), so the page's replay and the notebook's are one code.


def byte_table() -> dict[int, str]:
    """GPT-2's byte-level alphabet (Radford et al.'s bytes_to_unicode): every byte becomes one
    printable character. Printable Latin-1 bytes stand for themselves; every other byte gets a
    character from U+0100 on (a space, byte 32, becomes "Ġ")."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    table, extra = {}, 0
    for b in range(256):
        if b in printable:
            table[b] = chr(b)
        else:
            table[b] = chr(256 + extra)
            extra += 1
    return table


def join_pair(pieces: list[str], pair: tuple[str, str]) -> list[str]:
    """One merge: every occurrence of `pair` in `pieces` joined into one piece, left to right."""
    joined, j = [], 0
    while j < len(pieces):
        if tuple(pieces[j:j + 2]) == pair:
            joined.append(pieces[j] + pieces[j + 1])
            j += 2
        else:
            joined.append(pieces[j])
            j += 1
    return joined


byte_chars = functools.lru_cache(maxsize=None)(byte_table)


@functools.lru_cache(maxsize=None)
def char_bytes() -> dict[str, int]:
    return {c: b for b, c in byte_chars().items()}


def piece_text(piece: str) -> str:
    """A BPE piece ("Ġpl") as the text it stands for (" pl"); bytes that are not whole UTF-8
    characters show as U+FFFD."""
    return bytes(char_bytes()[c] for c in piece).decode("utf-8", errors="replace")


@functools.lru_cache(maxsize=None)
def merge_list(model: str) -> tuple[tuple[str, str], ...]:
    """The model's merges, in the order the tokenizer applies them (first = highest priority)."""
    files = tokens.TOKENIZER_FILES.get(model)
    if files is None:
        raise tokens.NoTokenizer(f"no committed tokenizer for model {model!r}")
    if files[0].name == "tokenizer.json":  # the models trained here: one file, the merges inside it
        merges = json.loads(files[0].read_text(encoding="utf-8"))["model"]["merges"]
        pairs = [tuple(m) if isinstance(m, list) else tuple(m.split(" ")) for m in merges]
    else:
        lines = files[1].read_text(encoding="utf-8").splitlines()
        pairs = [tuple(line.split(" ")) for line in lines if line and not line.startswith("#version")]
    if not all(len(p) == 2 for p in pairs):
        raise tokens.NoTokenizer(f"{model}: the merge list holds an entry that is not a pair")
    return tuple(pairs)  # type: ignore[return-value]


@functools.lru_cache(maxsize=None)
def merge_ranks(model: str) -> dict[tuple[str, str], int]:
    return {pair: i for i, pair in enumerate(merge_list(model))}


@dataclass(frozen=True)
class Step:
    """One merge: the pair joined, its place in the merge list (1 = first), and the pieces after."""

    left: str
    right: str
    rank: int  # 1-based position in the merge list
    pieces: tuple[str, ...]  # after this merge, as text (" pl", "ay")


class NotOneWord(ValueError):
    pass


def merge_steps(model: str, word: str) -> tuple[tuple[str, ...], list[Step]]:
    """The starting pieces of `word` (one per byte, as text) and every merge BPE makes on it.

    `word` must be one pre-token: letters with at most one leading space (" playing"), as the
    tokenizer's pre-tokenizer would cut it. The end result is checked against the tokenizer."""
    if not word or word != word.rstrip() or " " in word[1:] or word.strip() == "":
        raise NotOneWord(f"{word!r} is not one word (one leading space at most, no other spaces)")
    pre = tokens.tokenizer(model).pre_tokenizer.pre_tokenize_str(word)
    if len(pre) != 1:
        raise NotOneWord(f"the tokenizer cuts {word!r} into {len(pre)} pieces before BPE: {', '.join(repr(p[0]) for p in pre)}")
    ranks = merge_ranks(model)
    pieces = [byte_chars()[b] for b in word.encode("utf-8")]
    start = tuple(piece_text(p) for p in pieces)
    steps: list[Step] = []
    while len(pieces) > 1:
        pairs = [(ranks.get((a, b)), i) for i, (a, b) in enumerate(zip(pieces, pieces[1:]))]
        ranked = [(r, i) for r, i in pairs if r is not None]
        if not ranked:
            break
        rank, _ = min(ranked)
        pair = merge_list(model)[rank]
        pieces = join_pair(pieces, pair)
        steps.append(Step(piece_text(pair[0]), piece_text(pair[1]), rank + 1, tuple(piece_text(p) for p in pieces)))
    expected = tokens.tokenizer(model).encode(word, add_special_tokens=False).tokens
    if pieces != list(expected):
        raise AssertionError(f"{model}: replaying the merges on {word!r} gives {pieces}, the tokenizer {expected}")
    return start, steps


@dataclass(frozen=True)
class Piece:
    id: int
    text: str
    display: str
    spoken: str
    start: int  # character offsets in the sentence
    end: int


def split(model: str, text: str) -> list[Piece]:
    """`text`'s tokens (without <|endoftext|>) and the characters each covers."""
    enc = tokens.tokenizer(model).encode(text, add_special_tokens=False)
    out = []
    for i, (a, b) in zip(enc.ids, enc.offsets):
        t = tokens.token_text(model, i)
        out.append(Piece(int(i), t, schema.display_token(t), schema.spoken_token(t), int(a), int(b)))
    return out


def word_pieces(pieces: list[Piece], text: str, word: str) -> list[Piece] | None:
    """The tokens that cover the first whole-word occurrence of `word` in `text`, or None."""
    at = _find_word(text, word)
    if at is None:
        return None
    end = at + len(word)
    return [p for p in pieces if p.start < end and p.end > at]


def _find_word(text: str, word: str) -> int | None:
    start = 0
    while (at := text.find(word, start)) >= 0:
        before = text[at - 1] if at else " "
        after = text[at + len(word)] if at + len(word) < len(text) else " "
        if not before.isalnum() and not after.isalnum():
            return at
        start = at + 1
    return None
