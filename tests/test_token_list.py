"""A token name the sentence lacks, in a long sentence (issue 49): the message lists the tokens near
the closest match, not all of them (a 134-token sentence put 134 tokens on one line)."""

from __future__ import annotations

import re

import pytest

from generator.lessons.directives import parse_token_ref
from generator.lessons.errors import LessonError
from generator.render.token_names import MAX_LISTED, resolve_token


def tokens_of(words: list[str]) -> list[dict]:
    out = [{"text": "<|endoftext|>", "display": "<|endoftext|>"}]
    for i, w in enumerate(words):
        text = w if i == 0 else " " + w
        out.append({"text": text, "display": text.replace(" ", "·")})
    return out


LONG = tokens_of(("Lily wanted to play with the stick in the park " * 15).split()[:133])  # 134 tokens


def message(name: str, tokens: list[dict]) -> str:
    with pytest.raises(LessonError) as e:
        resolve_token(parse_token_ref(name, "content/a.md:3", "attention"), tokens, "content/a.md:3", "attention: 'token'")
    return str(e.value)


def listed(msg: str) -> list[int]:
    return [int(n) for n in re.findall(r"#(\d+) '", msg)]


def test_a_long_sentence_lists_the_tokens_near_the_closest_match():
    msg = message("stik", LONG[:20] + tokens_of(["frisbee"] * 114)[1:])  # ·stick is #7, once
    assert listed(msg) == list(range(3, 12)) and "'·stick'" in msg, msg
    assert "(tokens #3 to #11 of 134)" in msg and msg.count("…") == 2 and ". Fix: name one of these tokens" in msg


def test_a_position_past_the_end_lists_the_last_tokens():
    msg = message("#200", LONG)
    assert listed(msg)[-1] == 133 and len(listed(msg)) == 5 and "the sentence has 134 tokens" in msg, msg


def test_a_short_sentence_still_lists_every_token():
    short = tokens_of("Lily wanted to play with her".split())
    msg = message("stick", short)
    assert listed(msg) == list(range(len(short))) and "…" not in msg and len(short) <= MAX_LISTED
