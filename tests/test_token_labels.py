"""Repeated tokens carry their position wherever they could be confused: ·red₃ and
·red₇. render/format.py (tok, page_tokens) and course.js (tokDisplay, tokSpoken) write the same
text; course.js's two functions are run in Node on the JSON a page carries."""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess

import pytest

from conftest import REPO
from generator import schema
from generator.render import format as fmt
from generator.render.script import course_js



def tokens(*texts: str) -> list[dict]:
    return [{"id": i, "text": t, "display": schema.display_token(t), "spoken": schema.spoken_token(t)} for i, t in enumerate(texts)]


SENTENCE = tokens("<|endoftext|>", "Tom", " had", " a", " red", " ball", ".", " Tom", " gave", " the", " red", " ball", " to", " Sam", ".")


def js_function(source: str, name: str) -> str:
    """The text of `function name(...) {...}` in course.js, braces matched."""
    start = source.index(f"function {name}(")
    depth, i = 0, source.index("{", start)
    while True:
        depth += {"{": 1, "}": -1}.get(source[i], 0)
        if depth == 0:
            return source[start : i + 1]
        i += 1


def js_labels(page_tokens: list[dict]) -> list[list[str]]:
    if shutil.which("node") is None:
        pytest.skip("node is not installed")
    source = course_js()  # the joined script, as the site ships it
    program = "\n".join(js_function(source, n) for n in ("tokDisplay", "tokSpoken")) + (
        "\nconst toks = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
        "\nprocess.stdout.write(JSON.stringify(toks.map(t => [tokDisplay(t), tokSpoken(t)])));"
    )
    out = subprocess.run(["node", "-e", program], input=json.dumps(page_tokens), capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def py_labels(toks: list[dict]) -> list[list[str]]:
    spans = [str(fmt.tok(t)) for t in fmt.label_tokens(toks)]
    return [[html.unescape(re.sub(r"<[^>]+>", "", s)), html.unescape(re.search(r'aria-label="([^"]*)"', s).group(1))] for s in spans]


def test_repeated_tokens_carry_their_position_in_python():
    shown = [label for label, _ in py_labels(SENTENCE)]
    assert shown[4] == "·red₄" and shown[10] == "·red₁₀" and shown[5] == "·ball₅"
    assert shown[1] == "Tom" and shown[7] == "·Tom", "Tom and ·Tom look different already"
    assert shown[3] == "·a" and shown[13] == "·Sam", "a token that occurs once keeps its plain label"
    assert shown[6] == ".₆" and shown[14] == ".₁₄"
    spoken = [s for _, s in py_labels(SENTENCE)]
    assert spoken[4] == "space red, position 4" and spoken[3] == "space a" and spoken[0] == "end of text"


def test_an_end_of_text_says_its_own_position_and_a_guessed_one_none():
    """A second <|endoftext|> in a sentence (the playground reads what the reader types) is said
    with its position, as its subscript shows it; one guessed next has no position at all."""
    eot = {"id": 0, "text": "<|endoftext|>", "display": "<|endoftext|>", "spoken": "<|endoftext|>"}
    toks = [eot, {"id": 5, "text": "Hi", "display": "Hi", "spoken": "Hi"}, eot]
    labels = py_labels(toks)
    assert labels[0] == ["‹eot›₀", "end of text, position 0"] and labels[2] == ["‹eot›₂", "end of text, position 2"]
    assert html.unescape(re.search(r'aria-label="([^"]*)"', str(fmt.tok({"id": 0, "text": "<|endoftext|>", "display": "<|endoftext|>", "prob": 0.5})))[1]) == "end of text"
    assert js_labels(fmt.page_tokens(toks)) == labels


def test_end_of_text_reads_eot_in_every_label_and_its_full_name_on_hover():
    """<|endoftext|> is too long for a grid's tick label at 375 px (cut to "‹|endofte…"): every
    label, Python's and course.js's, shows it as ‹eot›, said "end of text", full name on hover."""
    labels = py_labels(SENTENCE)
    assert labels[0] == ["‹eot›", "end of text"] and labels[1] == ["Tom", "Tom"]
    assert js_labels(fmt.page_tokens(SENTENCE))[0] == labels[0]
    assert 'title="&lt;|endoftext|&gt;"' in str(fmt.tok(SENTENCE[0])) and "title=" not in str(fmt.tok(SENTENCE[1]))
    assert "s.title = t.text" in js_function(course_js(), "tokSpan")


def test_python_and_course_js_write_the_same_labels():
    page = fmt.page_tokens(SENTENCE)
    assert [t.get("pos") for t in page] == [None, None, None, None, 4, 5, 6, None, None, None, 10, 11, None, None, 14]
    assert js_labels(page) == py_labels(SENTENCE)


def test_course_js_without_display_fields_agrees_too():
    """course.js derives the label from `text` when `display` is absent (CONTRACT.md)."""
    page = [{k: v for k, v in t.items() if k not in ("display", "spoken")} for t in fmt.page_tokens(SENTENCE)]
    assert js_labels(page) == py_labels(SENTENCE)


def test_grids_and_prose_use_the_positions(tmp_path):
    from generator.render.context import Panel

    panel = Panel({"tokens": SENTENCE}, None)
    assert [t.get("pos") for t in panel.tokens][4:6] == [4, 5] and fmt.token_label(panel.tokens[10]) == "·red₁₀"


def test_a_name_in_the_other_unicode_form_says_so():
    """'Zoé' typed as one character names nothing in a sentence that spells it e + U+0301 (its
    tokens split the accent off): the one line says that the two forms differ, both ways."""
    from generator.lessons.directives import TokenRef
    from generator.lessons.errors import LessonError
    from generator.render.token_names import resolve_token

    nfd = [{"text": t, "display": t} for t in ("<|endoftext|>", "Zo", "e", "\u0301", " ran")]
    with pytest.raises(LessonError) as e:
        resolve_token(TokenRef(text="Zo\u00e9"), nfd, "content/p.md:3", "token")
    assert "writes 'Zoé' decomposed (NFD) and this name composed (NFC)" in str(e.value) and "\n" not in str(e.value)
    nfc = [{"text": t, "display": t} for t in ("<|endoftext|>", "Zo\u00e9", " ran")]
    with pytest.raises(LessonError) as e:
        resolve_token(TokenRef(text="Zoe\u0301 ran"), nfc, "content/p.md:3", "token")
    assert "composed (NFC) and this name decomposed (NFD)" in str(e.value)
