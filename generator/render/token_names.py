"""Naming tokens: a lesson's `her`, `·her`, `' her'` or `#6`, resolved against a trace."""

from __future__ import annotations

import unicodedata

from ..lessons.directives import TokenRef, edit_distance
from ..lessons.errors import LessonError
from ..lessons.refs import lookalike_note


MAX_LISTED = 16  # a longer sentence's tokens are shown only near the one the author meant
NEAR = 4  # ... this many either side of it


def token_list(tokens: list[dict], near: int | None = None) -> str:
    """The tokens as a message lists them: all of a short sentence; of a long one, those within
    NEAR of position `near` (the closest match; the end where None), and how many there are."""
    n = len(tokens)
    if n <= MAX_LISTED:
        return ", ".join(f"#{i} {t['display']!r}" for i, t in enumerate(tokens))
    centre = n - 1 if near is None else min(max(near, 0), n - 1)
    lo, hi = max(0, centre - NEAR), min(n, centre + NEAR + 1)
    shown = ", ".join(f"#{i} {tokens[i]['display']!r}" for i in range(lo, hi))
    return f"{'…, ' if lo else ''}{shown}{', …' if hi < n else ''} (tokens #{lo} to #{hi - 1} of {n})"


def closest_token(name: str, tokens: list[dict]) -> int:
    """The position of the token whose text is nearest `name` (fewest edits, case aside)."""
    bare = name.lstrip(" ·").lower()
    return min(range(len(tokens)), key=lambda i: (edit_distance(bare, tokens[i]["text"].strip().lower()), i))


def token_hits(ref: TokenRef, tokens: list[dict]) -> list[int]:
    """The positions a token name matches (see resolve_token): [] where the sentence lacks it."""
    if ref.index is not None:
        return [ref.index] if 0 <= ref.index < len(tokens) else []
    name = ref.text or ""
    spaced = name.startswith((" ", "·"))
    bare = name[1:] if spaced else name
    return [i for i, t in enumerate(tokens) if (t["text"] == " " + bare if spaced else t["text"] in (bare, " " + bare))]


def decomposed_note(name: str, tokens: list[dict]) -> str:
    """For a name the sentence holds only in another Unicode form (é as e + U+0301 in one, one
    character in the other): '; ' and what differs, else ''. The two forms look the same and are
    tokenized apart, so neither matches the other."""
    text = "".join(t["text"] for t in tokens)
    bare = name.lstrip(" ·")
    if not bare or bare in text:
        return ""
    for form in ("NFC", "NFD"):
        if unicodedata.normalize(form, bare) in text and unicodedata.normalize(form, bare) != bare:
            other = "composed (NFC)" if form == "NFC" else "decomposed (NFD)"
            mine = "decomposed (NFD)" if form == "NFC" else "composed (NFC)"
            return (f"; the sentence writes {bare!r} {other} and this name {mine}: the same letters to a reader, other "
                    f"characters to the tokenizer, and its tokens split them")
    return ""


def resolve_token(ref: TokenRef, tokens: list[dict], where: str, what: str) -> int:
    """Position of a token named by text ('her', '·her', ' her') or by '#6'. Positions count
    from 0, <|endoftext|>, as the pages do.

    A name without a leading space or '·' matches the token with or without one ('her' matches
    'her' and ' her'); with one, only the spaced token. More than one match is an error."""
    n = len(tokens)
    if ref.index is not None:
        if not 0 <= ref.index < n:
            raise LessonError(where, f"{what}: token #{ref.index} is out of range; the sentence has {n} tokens: {token_list(tokens, max(0, min(ref.index, n - 1)))}", f"use a position from #0 to #{n - 1}")
        return ref.index
    name = ref.text or ""
    hits = token_hits(ref, tokens)
    if len(hits) == 1:
        return hits[0]
    if not hits:
        note = lookalike_note(name, [(f"#{i}", t["display"]) for i, t in enumerate(tokens)]) or decomposed_note(name, tokens)
        listed = token_list(tokens, closest_token(name, tokens) if tokens else None)
        raise LessonError(where, f"{what}: no token {name!r} in the sentence; its tokens are {listed}{note}", "name one of these tokens, or give its position like #6")
    shown = ", ".join(f"#{i}" for i in hits)
    raise LessonError(where, f"{what}: token {name!r} is ambiguous: it matches {shown}; the tokens are {token_list(tokens, hits[0])}", f"give the position instead, like #{hits[-1]}")
