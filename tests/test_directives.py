"""The directive parser: what it accepts, and the exact one-line error for each lesson mistake."""

from __future__ import annotations

import os
import re
import textwrap
from pathlib import Path

import pytest
from generator import registry
from generator.lessons import directives as D
from generator.lessons import pages, refs
from generator.lessons.errors import LessonError


WHERE = "content/lesson.md:7"


def parse(kind: str, body: str):
    return D.parse_directive(kind, textwrap.dedent(body), WHERE)


def error_of(kind: str, body: str) -> str:
    with pytest.raises(LessonError) as info:
        parse(kind, body)
    message = str(info.value)
    assert "\n" not in message, "errors are one line"
    assert re.match(r"content/lesson\.md:\d+: ", message), "errors name the file and line"
    assert ". Fix: " in message, "errors say how to fix them"
    return message


def test_attention_with_fixed_head_counts_from_one():
    a = parse("attention", """
        model: tiny
        sentence: "Lily wanted to play with her"
        layer: 3
        head: 2
        token: her
        id: lily
    """)
    assert (a.model, a.sentence, a.id) == ("tiny", "Lily wanted to play with her", "lily")
    assert (a.pick.rule, a.pick.layer, a.pick.head) == ("fixed", 3, 2)
    assert a.token == D.TokenRef(text="her")


def test_attention_pick_rule_and_positional_tokens():
    a = parse("attention", """
        model: gpt2
        sentence: "The animal didn't cross the street"
        pick: {rule: max-weight, from: "#6", to: animal}
    """)
    assert a.pick.rule == "max-weight"
    assert a.pick.source == D.TokenRef(index=6)
    assert a.pick.target == D.TokenRef(text="animal")
    assert "largest weight from #6 to 'animal'" in a.pick.describe()


def test_compare_stepper_softmax_scoreboard_training_predictions_parse():
    c = parse("compare", """
        model: tiny
        sentences: ["Lily wanted to play with her", "Ben wanted to play with her"]
        pick: previous-token
    """)
    assert c.sentences[1].startswith("Ben") and c.pick.rule == "previous-token"
    s = parse("stepper", """
        tokens: [Lily, ran, she]
        query: [[1, 0], [0, 1], [2, 0]]
        key: [[2, 0], [0, 1], [1, 1]]
        value: [[1, 0], [0, 1], [0.5, 0.5]]
    """)
    assert s.focus == 2 and s.key[2] == (1.0, 1.0)
    sm = parse("softmax", "scores: [1, 0, 0]")
    assert sm.labels == ("a", "b", "c")
    sb = parse("scoreboard", "model: tiny")
    assert sb.scores == registry.KINDS
    assert parse("training", "model: tiny").model == "tiny"
    p = parse("predictions", 'model: tiny\nsentences: "Lily wanted to play with her"')
    assert p.sentences == ("Lily wanted to play with her",)
    assert p.guesses == 5  # every guess the traces hold
    assert parse("predictions", 'model: tiny\nsentences: ["Lily wanted to play with her"]\nguesses: 3').guesses == 3


# Each case: (kind, body, the exact message after "path:line: ", the body line it names or 0).
CATALOGUE = [
    ("attention", "model: gpt3\nsentence: hi\nlayer: 1\nhead: 1",
     "attention: unknown model 'gpt3'. Fix: use one of: gpt2, tiny, tiny-rope", 1),
    ("attention", "model: tiny\nsentence: hi\nlayer: 5\nhead: 1",
     "attention: layer 5 is out of range for tiny, which has layers 1 to 4. Fix: use a layer from 1 to 4 (counting from 1)", 3),
    ("attention", "model: tiny\nsentence: hi\nlayer: 0\nhead: 1",
     "attention: layer 0 is out of range for tiny, which has layers 1 to 4. Fix: use a layer from 1 to 4 (counting from 1)", 3),
    ("attention", "model: gpt2\nsentence: hi\nlayer: 1\nhead: 13",
     "attention: head 13 is out of range for gpt2, which has heads 1 to 12. Fix: use a head from 1 to 12 (counting from 1)", 4),
    ("attention", "model: tiny\nsentence: hi\nlayer: two\nhead: 1",
     "attention: 'layer' must be a whole number, not 'two'. Fix: write `layer: 1` (counting from 1)", 3),
    ("attention", "model: tiny\nsentence: hi\nlayer: 1.5\nhead: 1",
     "attention: 'layer' must be a whole number, not 1.5. Fix: write `layer: 1` (counting from 1)", 3),
    ("attention", "model: tiny\nsentence: \"\"\nlayer: 1\nhead: 1",
     "attention: the sentence is empty. Fix: write the sentence to trace", 2),
    ("attention", "model: tiny\nsentence: 42\nlayer: 1\nhead: 1",
     "attention: a sentence must be text, not int 42. Fix: quote the sentence", 2),
    ("attention", "model: tiny\nsentence: " + "a" * 2001 + "\nlayer: 1\nhead: 1",
     "attention: the sentence has 2001 characters, more than the 2000 this course traces. Fix: shorten the sentence", 2),
    ("attention", "model: tiny\nsentence: [unclosed\nlayer: 1",
     "attention: malformed YAML at column 11: the '[' is never closed. Fix: end the line with ']': `sentence: [unclosed]`", 2),
    ("attention", "",
     "attention: the block is empty. Fix: give at least: model, sentence", 0),
    ("attention", "- model: tiny",
     "attention: the body must be a mapping of options, not a list. Fix: write the options as `key: value` lines", 0),
    ("attention", "42",
     "attention: the body must be a mapping of options, not a number. Fix: write the options as `key: value` lines", 0),
    ("attention", "model: tiny\nsentence: hi\nlayer: 1\nhead: 1\ncolour: red",
     "attention: unknown option 'colour'. Fix: allowed options are: caption, head, heads, id, layer, model, pattern-only, pick, sentence, show_heads, token", 5),
    ("attention", "sentence: hi\nlayer: 1\nhead: 1",
     "attention: missing option 'model'. Fix: add `model: ...` to the block", 0),
    ("attention", "model: tiny\nsentence: hi",
     "attention: no head chosen. Fix: add `layer:` and `head:` (counting from 1), or a `pick:` rule", 0),
    ("attention", "model: tiny\nsentence: hi\nlayer: 1",
     "attention: no head chosen. Fix: add `layer:` and `head:` (counting from 1), or a `pick:` rule", 0),
    ("attention", "model: tiny\nsentence: hi\nlayer: 1\nhead: 1\npick: self",
     "attention: give either 'pick' or 'layer' and 'head', not both. Fix: remove one of them", 5),
    ("attention", "model: tiny\nsentence: hi\npick: loudest",
     "attention: unknown pick rule 'loudest'. Fix: use one of: max-weight, previous-token, first-token, self", 3),
    ("attention", "model: tiny\nsentence: hi\npick: {rule: max-weight, from: her}",
     "attention: pick rule max-weight needs 'from' and 'to' tokens. Fix: write `pick: {rule: max-weight, from: her, to: Lily}`", 3),
    ("attention", "model: tiny\nsentence: hi\npick: {rule: self, from: her}",
     "attention: pick rule self takes no 'from' or 'to'. Fix: remove them, or use rule max-weight", 3),
    ("attention", "model: tiny\nsentence: hi\npick: {rule: self, colour: red}",
     "attention: unknown pick option 'colour'. Fix: a pick takes rule, and for max-weight, from and to", 3),
    ("attention", "model: tiny\nsentence: hi\npick: {from: a}",
     "attention: 'pick' must give a rule. Fix: write `pick: {rule: max-weight, from: her, to: Lily}` or one of: max-weight, previous-token, first-token, self", 3),
    ("attention", "model: tiny\nsentence: hi\nlayer: 1\nhead: 1\ntoken: -1",
     "attention: 'token' position -1 is out of range. Fix: count tokens from 0, which is <|endoftext|>", 5),
    ("attention", "model: tiny\nsentence: hi\nlayer: 1\nhead: 1\ntoken: \"\"",
     "attention: 'token' must name a token (its text, like her) or its position (like 6). Fix: write `token: her`", 5),
    ("attention", "model: tiny\nsentence: hi\nlayer: 1\nhead: 1\nshow_heads: maybe",
     "attention: 'show_heads' must be true or false, not 'maybe'. Fix: write `show_heads: true`", 5),
    ("attention", "model: tiny\nsentence: hi\nlayer: 1\nhead: 1\nid: Fig 1",
     "attention: id 'Fig 1' is not a valid name. Fix: use lowercase letters, digits, '-' or '_', starting with a letter (not 'model' or 'page')", 5),
    ("attention", "model: tiny\nsentence: hi\nlayer: 1\nhead: 1\nid: model",
     "attention: id 'model' is not a valid name. Fix: use lowercase letters, digits, '-' or '_', starting with a letter (not 'model' or 'page')", 5),
    ("compare", "model: tiny\nsentences: [only one]\nlayer: 1\nhead: 1",
     "compare: 'sentences' must be a list of exactly two sentences. Fix: write `sentences: [\"first sentence\", \"second sentence\"]`", 2),
    ("stepper", "tokens: [a]\nquery: [[1]]\nkey: [[1]]\nvalue: [[1]]",
     "stepper: 'tokens' must be a list of 2 to 6 words. Fix: write `tokens: [Lily, ran, she]`", 1),
    ("stepper", "tokens: [a, b]\nquery: [[1, 0]]\nkey: [[1, 0], [0, 1]]\nvalue: [[1], [2]]",
     "stepper: 'query' must have one vector per token (2). Fix: give 2 vectors, like `query: [[1, 0], ...]`", 2),
    ("stepper", "tokens: [a, b]\nquery: [[1, 0], [0, 1]]\nkey: [[1, 0], [0, 1, 2]]\nvalue: [[1], [2]]",
     "stepper: queries and keys must all have the same length. Fix: give every query and key the same number of entries", 0),
    ("stepper", "tokens: [a, b]\nquery: [[1, 0], [0, x]]\nkey: [[1, 0], [0, 1]]\nvalue: [[1], [2]]",
     "stepper: 'query' holds 'x', which is not a finite number. Fix: write `query` with numbers only", 2),
    ("stepper", "tokens: [a, b]\nquery: [[1, 0], [0, .inf]]\nkey: [[1, 0], [0, 1]]\nvalue: [[1], [2]]",
     "stepper: 'query' holds inf, which is not a finite number. Fix: write `query` with numbers only", 2),
    ("stepper", "tokens: [a, b]\nquery: [[1, 0], [0, 1]]\nkey: [[1, 0], [0, 1]]\nvalue: [[1], [2, 3]]",
     "stepper: the values must all have the same length. Fix: give every value the same number of entries", 0),
    ("stepper", "tokens: [a, b]\nquery: [[1], [0]]\nkey: [[1], [0]]\nvalue: [[1], [2]]\nfocus: c",
     "stepper: focus 'c' is not one of the tokens. Fix: use one of: a, b", 5),
    ("softmax", "scores: [1]",
     "softmax: 'scores' must hold 2 to 8 numbers, not 1. Fix: add or remove scores", 1),
    ("softmax", "scores: [1, 0]\nlabels: [a]",
     "softmax: 'labels' must be a list with one label per score. Fix: give 2 labels", 2),
    ("scoreboard", "model: tiny\nscores: [induction, loudness]",
     "scoreboard: unknown score 'loudness'. Fix: choose from: previous-token, duplicate-token, induction, sink", 2),
    ("attention", 'model: tiny\nsentence: "Lily <|endoftext|> her"\nlayer: 1\nhead: 1',
     "attention: the sentence holds <|endoftext|>, which the models read as their control token, not as text. Fix: leave it out: every trace already starts with <|endoftext|>", 2),
    ("scoreboard", "model: tiny\nscores: [induction, sink, induction]",
     "scoreboard: a score is listed twice. Fix: list each score once", 2),
    ("training", "model: gpt2",
     "training: only the tiny model has a training log in this course, not 'gpt2'. Fix: write `model: tiny`", 0),
    ("predictions", "model: tiny\nsentences: []",
     "predictions: 'sentences' must be a list of sentences. Fix: write `sentences: [\"a sentence\"]`", 2),
    ("predictions", "model: tiny\nsentences: [\"Lily wanted to play with her\"]\nguesses: 6",
     "predictions: 'guesses' must be from 1 to 5 (the traces hold the top 5), not 6. Fix: write `guesses: 3`, or leave it out for all 5", 3),
    ("predictions", "model: tiny\nsentences: [\"Lily wanted to play with her\"]\nguesses: three",
     "predictions: 'guesses' must be a whole number, not 'three'. Fix: write `guesses: 1` (counting from 1)", 3),
]


@pytest.mark.parametrize("kind,body,expected,line", CATALOGUE, ids=[f"{i:02d}-{c[0]}" for i, c in enumerate(CATALOGUE)])
def test_bad_directive_gives_the_exact_one_line_error(kind, body, expected, line):
    """`line`: the body line of the option the mistake is in, whose line of the file the error
    names, or 0 for a mistake of the whole block (the fence's line)."""
    message = error_of(kind, body)
    where = f"content/lesson.md:{7 + line}"
    assert message == f"{where}: {expected}"


YAML_MISTAKES = [
    # (name, body, body line of the mistake, the message after "attention: malformed YAML ")
    ("missing-brace", 'model: tiny\nsentence: "Lily wanted to play with her"\npick: {rule: max-weight, from: her, to: Lily\nid: lily', 3,
     "at column 7: the '{' is never closed. Fix: end the line with '}': `pick: {rule: max-weight, from: her, to: Lily}`"),
    ("missing-brace-last-line", "model: tiny\nsentence: hi\npick: {rule: max-weight", 3,
     "at column 7: the '{' is never closed. Fix: end the line with '}': `pick: {rule: max-weight}`"),
    ("missing-bracket", 'model: tiny\nsentence: [hi\nlayer: 1\nhead: 1', 2,
     "at column 11: the '[' is never closed. Fix: end the line with ']': `sentence: [hi]`"),
    ("missing-comma", "model: tiny\nsentence: hi\npick: {rule: max-weight from: her}", 3,
     "at column 29: a ',' is missing between two items. Fix: separate the items of the `{ ... }` with commas"),
    ("unclosed-double-quote", 'model: tiny\nsentence: "Lily wanted to play\nlayer: 1\nhead: 1\nid: x', 2,
     'at column 11: the quote " is never closed. Fix: end the text with " on the same line'),
    ("unclosed-single-quote", "model: tiny\nsentence: 'Lily wanted to play\nlayer: 1\nhead: 1", 2,
     "at column 11: the quote ' is never closed. Fix: end the text with ' on the same line"),
    ("bad-escape", 'model: tiny\nsentence: "a \\q b"\nlayer: 1', 2,
     "at column 15: found unknown escape character 'q'. Fix: write `\\\\` for a backslash inside double quotes, or use single quotes"),
    ("tab-indent", "model: tiny\nsentence: hi\npick:\n\trule: max-weight\nlayer: 1", 4,
     "at column 1: a tab in the indentation. Fix: indent with spaces, not tabs"),
    ("colon-in-sentence", "model: tiny\nsentence: hi\ncaption: Note: this head looks back\nlayer: 1", 3,
     'at column 14: a \':\' inside text that is not quoted. Fix: put the text in double quotes: `caption: "Note: this head looks back"`'),
    ("stray-indent", "model: tiny\n  layer: 1\nhead: 1", 2,
     "at column 8: this line is indented, but the line above takes no nested options. Fix: start each option at the same column as the others"),
    ("no-space-after-colon", "model: tiny\nlayer:1\nhead: 1", 2,
     "at column 1: a line with no `key: value`. Fix: write `key: value`, with a space after the ':'"),
    ("text-after-quote", 'model: tiny\nsentence: "Lily" wanted\nlayer: 1', 2,
     "at column 18: unexpected text 'wanted'. Fix: if a value is quoted, quote all of it; start each option at the same column as the others"),
]


@pytest.mark.parametrize("name,body,line,expected", YAML_MISTAKES, ids=[c[0] for c in YAML_MISTAKES])
def test_yaml_mistake_names_the_files_own_line_and_a_fix_that_fits(name, body, line, expected):
    """PyYAML gives up lines after the mistake (a '{' never closed is seen at the next option, an
    unclosed quote at the end of the block): the error names the line the author must change, in
    the file's own numbering (the fence is line 7, so body line n is line 7 + n)."""
    assert error_of("attention", body) == f"content/lesson.md:{7 + line}: attention: malformed YAML {expected}"


def test_yaml_mistake_without_a_file_line_names_the_body_line():
    """A reference's own check reads a body with no file line: the body's line and column then."""
    with pytest.raises(LessonError) as info:
        D.load_body('a: 1\nb: "open\nc: 2', "content/lesson.md", "attention")
    assert str(info.value) == ('content/lesson.md: attention: malformed YAML (body line 2, column 4): the quote " is never closed. '
                               'Fix: end the text with " on the same line')


def test_unknown_directive_kind():
    with pytest.raises(LessonError, match=r"^content/lesson.md:7: unknown directive 'heatmap'\. Fix: use one of: attention, "):
        D.parse_directive("heatmap", "model: tiny", WHERE)


def test_source_mark_sets_the_line_and_is_removed():
    body, where = refs.split_source_mark("# @source content/a.md:41\nmodel: tiny", "fallback:1")
    assert (body, where) == ("model: tiny", "content/a.md:41")
    assert refs.split_source_mark("model: tiny", "fallback:1") == ("model: tiny", "fallback:1")


def test_fences_found_at_any_indent_with_line_numbers(tmp_path: Path):
    page = tmp_path / "content" / "p.md"
    page.parent.mkdir()
    page.write_text(textwrap.dedent("""\
        # Title

        === "Story"

            ```attention
            model: tiny
            sentence: "Lily wanted to play with her"
            layer: 1
            head: 2
            ```

        ```python
        print("not a directive")
        ```

        ~~~compare
        model: tiny
        sentences: ["Lily wanted to play with her", "Ben wanted to play with her"]
        pick: self
        ~~~
    """), encoding="utf-8")
    found = pages.parse_file(page, "content/p.md")
    assert [(x.kind, x.where) for x in found] == [("attention", "content/p.md:5"), ("compare", "content/p.md:16")]
    requested = pages.collect(tmp_path / "content")
    assert [(r.model, r.text, r.source) for r in requested] == [
        ("tiny", "Lily wanted to play with her", "content/p.md:5"),
        ("tiny", "Ben wanted to play with her", "content/p.md:16"),
    ]


def test_duplicate_ids_on_one_page(tmp_path: Path):
    page = tmp_path / "p.md"
    block = "```softmax\nscores: [1, 0]\nid: sm\n```\n"
    page.write_text("intro\n\n" + block + "\n" + block, encoding="utf-8")
    with pytest.raises(LessonError) as info:
        pages.parse_file(page, "p.md")
    assert str(info.value) == "p.md:8: softmax: id 'sm' is used twice on this page (first at p.md:3). Fix: give each figure its own id"


def test_a_bad_block_deep_in_a_file_names_its_own_line(tmp_path: Path):
    page = tmp_path / "p.md"
    page.write_text("a\n\n=== \"b\"\n\n    ```attention\n    model: tiny\n    sentence: hi\n    layer: 9\n    head: 1\n    ```\n", encoding="utf-8")
    with pytest.raises(LessonError, match=r"^p\.md:8: attention: layer 9 is out of range"):
        pages.parse_file(page, "p.md")  # the line of `layer: 9`, in a tab


@pytest.mark.parametrize("body,target,name,args", [
    ("lily.weight(her, Lily)", "lily", "weight", ("her", "Lily")),
    (" lily.layer ", "lily", "layer", ()),
    ("model.tiny.nLayer", "model", "tiny.nLayer", ()),
    ("toy.score(she, Lily) @12", "toy", "score", ("she", "Lily")),
])
def test_references_parse(body, target, name, args):
    ref = refs.parse_ref(body, "content/a.md:3")
    assert (ref.target, ref.name, ref.args) == (target, name, args)


def test_reference_line_mark_overrides_the_line():
    assert refs.parse_ref("toy.sqrtd @12", "content/a.md:3").where == "content/a.md:12"


@pytest.mark.parametrize("body,problem", [
    ("lily weight", "reference {{ lily weight }} cannot be read"),
    ("lily.weight(her,,Lily)", "reference {{ lily.weight(her,,Lily) }} has an empty argument"),
    ("", "reference {{  }} cannot be read"),
    ("Lily.weight(a, b)", "reference {{ Lily.weight(a, b) }} cannot be read"),
])
def test_bad_references(body, problem):
    with pytest.raises(LessonError) as info:
        refs.parse_ref(body, "content/a.md:3")
    assert str(info.value).startswith(f"content/a.md:3: {problem}. Fix: ")


def test_references_in_code_count_but_not_inside_directive_bodies():
    text = ("Use `x[{{ a.layer0 }}]` in code, not `{{ other.x }}`.\n\n```js\nx = trace.layers[{{ b.layer0 }}];\n"
            "y = '{{ template }}'\n```\n\nBut {{ c.one }} counts.\n\n```attention\nsentence: '{{ not.aref }}'\nid: a\n```\n\n"
            "```softmax\nscores: [1, 0]\nid: b\n```\n")
    found = sorted((r.target, r.name, r.where) for r in refs.iter_refs(text, "p.md"))
    assert found == [("a", "layer0", "p.md:1"), ("b", "layer0", "p.md:4"), ("c", "one", "p.md:8")]


def test_references_in_code_become_placeholders():
    code_refs: list = []
    page = ["```js", "trace.layers[{{ lily.layer0 }}] // {{ jinja }} {{ other.x }}", "```", "see `{{ lily.head0 }}`",
            "", "```attention", "model: tiny", "sentence: hi", "pick: self", "id: lily", "```"]
    lines = refs.annotate_source(page, "p.md", 10, code_refs)
    assert lines[1] == "trace.layers[__course_ref_0__] // {{ jinja }} {{ other.x }}"
    assert lines[3] == "see `__course_ref_1__`"
    assert [(p, r.name, r.where) for p, r in code_refs] == [
        ("__course_ref_0__", "layer0", "p.md:11"), ("__course_ref_1__", "head0", "p.md:13")]


def test_a_reference_in_a_caption_or_the_front_matter_is_refused_at_its_line(tmp_path: Path):
    """Neither is filled in (a caption and front matter are data), so readers would see the braces."""
    with pytest.raises(LessonError, match=r"^content/lesson\.md:12: attention: the caption holds \{\{ … \}\}, and a reference is not filled in there"):
        parse("attention", 'model: tiny\nsentence: hi\nlayer: 1\nhead: 1\ncaption: "Layer {{ a.layer }}"\n')
    page = tmp_path / "p.md"
    page.write_text('---\ntitle: "Page {{ a.layer }}"\n---\n\n# P\n', encoding="utf-8")
    with pytest.raises(LessonError, match=r"^p\.md:2: front matter: a reference \{\{ … \}\} is not filled in here"):
        pages.parse_file(page, "p.md")


@pytest.mark.parametrize("body,wrong,meant", [
    ("model: tiny\nsentence: hi\nlayr: 1\nhead: 1", "layr", "layer"),
    ("model: tiny\nsentense: hi\nlayer: 1\nhead: 1", "sentense", "sentence"),
    ("model: tiny\nsentence: hi\nlayer: 1\nhead: 1\nshow-heads: true", "show-heads", "show_heads"),
    ("model: tiny\nsentence: hi\nlayer: 1\nhead: 1\nCaption: A head", "Caption", "caption"),
])
def test_a_misspelled_option_gets_did_you_mean_at_its_own_line(body, wrong, meant):
    line = next(i for i, text in enumerate(body.split("\n"), 1) if text.startswith(wrong + ":"))
    with pytest.raises(LessonError) as info:  # (error_of wants ". Fix:"; a question ends in "? Fix:")
        parse("attention", body)
    assert str(info.value) == (
        f"content/lesson.md:{7 + line}: attention: unknown option '{wrong}': did you mean {meant}? Fix: write `{meant}:`; "
        "allowed options are: caption, head, heads, id, layer, model, pattern-only, pick, sentence, show_heads, token")


def test_an_option_near_no_other_gets_the_list_alone():
    """'colour' is no misspelling of any option; 'x' is one letter, near too many to guess."""
    for name in ("colour", "x"):
        message = error_of("attention", f"model: tiny\nsentence: hi\nlayer: 1\nhead: 1\n{name}: 1")
        assert "did you mean" not in message and message.endswith("Fix: allowed options are: caption, head, heads, id, layer, model, pattern-only, pick, sentence, show_heads, token")


def test_a_file_read_again_is_parsed_again_only_when_its_text_changed(tmp_path, monkeypatch):
    """parse_file keeps its last answer per file (one `make traces` asks five times): the same text
    gives the same figures without parsing; a changed text, even one of the same size and
    timestamps, is parsed again; a file with a mistake raises every time it is read."""
    page = tmp_path / "lesson.md"
    fence = '```attention\nmodel: tiny\nsentence: "Lily wanted to play with her"\nlayer: {}\nhead: 2\n```\n'
    page.write_text("# L\n\n" + fence.format(3), encoding="utf-8")
    monkeypatch.setattr(pages, "_PARSED", {})  # whatever this worker parsed before
    parsed = []
    real = pages._parse_text
    monkeypatch.setattr(pages, "_parse_text", lambda text, shown: parsed.append(shown) or real(text, shown))
    first = pages.parse_file(page, "content/lesson.md")
    again = pages.parse_file(page, "content/lesson.md")
    assert again == first and len(parsed) == 1
    assert [(d.pick.layer, d.where) for d in first] == [(3, "content/lesson.md:3")]
    stat = page.stat()
    page.write_text("# L\n\n" + fence.format(4), encoding="utf-8")  # same size
    os.utime(page, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # and the same timestamps
    assert [d.pick.layer for d in pages.parse_file(page, "content/lesson.md")] == [4] and len(parsed) == 2
    page.write_text("# L\n\n" + fence.format(9), encoding="utf-8")  # the tiny model has 4 layers
    for _ in range(2):
        with pytest.raises(LessonError, match=r"content/lesson\.md:\d+: "):
            pages.parse_file(page, "content/lesson.md")
    assert len(parsed) == 4


def test_a_position_is_written_with_ascii_digits():
    """`#６` (a full-width digit) was read as position 6; it is a token's text, looked up as such."""
    from generator.lessons.values import parse_token_ref

    assert parse_token_ref("#6", "p.md:1", "x").index == 6
    ref = parse_token_ref("#\uff16", "p.md:1", "x")
    assert ref.index is None and ref.text == "#\uff16"


# Values that are wrong for most options, in each of YAML's shapes: text, numbers, lists, mappings.
BAD_VALUES = ("bogus", "{best: bogus}", "999", "-1", "[1, 2]", "[]", "true", "0", "'#99'", "{}", "group", "''",
              "3.5", "[bogus, x]", "{layer: 9, head: 1}", "null", "[[1]]", "{a: [1]}", "1e999", ".nan", "[{a: 1}]",
              "one", "[0.5, 0.5]", "key")


def course_fences() -> list[tuple[str, str, str]]:
    """(kind, body, "path:line") of the first figure of each kind and model in the course's lessons
    and the lesson template: every kind the parser knows."""
    from generator.lessons.source import iter_fences

    repo = Path(__file__).resolve().parents[1]
    found: dict[tuple[str, str], tuple[str, str, str]] = {}
    for path in sorted((repo / "content").glob("*.md")) + [repo / "generator" / "assets" / "lesson-template.md"]:
        for f in iter_fences(path.read_text(encoding="utf-8")):
            if f.kind in D.SPECS:
                model = re.search(r"(?m)^model: *(\S+)", f.body)
                found.setdefault((f.kind, model[1] if model else ""), (f.kind, f.body, f"{path.relative_to(repo).as_posix()}:{f.line}"))
    assert {kind for kind, _ in found} == set(D.SPECS), "a kind the lessons never use: add a figure of it to the template"
    return list(found.values())


def planted(body: str, option: str, value: str) -> str:
    """The body with `option: value` in place of that option (its block lines too), or added at the
    end."""
    lines = body.split("\n")
    at = next((i for i, line in enumerate(lines) if line.startswith(option + ":")), None)
    if at is None:
        kept = [line for line in lines if line.strip()]
        return "\n".join(kept + [f"{option}: {value}"])
    end = at + 1
    while end < len(lines) and lines[end][:1] in (" ", "-"):
        end += 1
    return "\n".join(lines[:at] + [f"{option}: {value}"] + lines[end:])


def test_a_bad_value_in_any_option_is_one_line_at_an_option_s_line():
    """Every option of every kind, given each of BAD_VALUES in a figure the course itself uses: the
    figure parses, or the mistake is one LessonError naming the line of an option (the planted one,
    or the one it clashes with), never the fence line, and never another exception."""
    misplaced = []
    for kind, body, where in course_fences():
        path, fence = where.rsplit(":", 1)
        D.parse_directive(kind, body, where)  # as the course writes it
        for option in sorted(D.SPECS[kind][0]):
            for value in BAD_VALUES:
                text = planted(body, option, value)
                option_lines = {f"{path}:{int(fence) + i}" for i, line in enumerate(text.split("\n"), 1) if re.match(r"[\w-]+:", line)}
                try:
                    D.parse_directive(kind, text, where)
                except LessonError as e:
                    assert "\n" not in str(e) and ". Fix: " in str(e), str(e)
                    if e.where not in option_lines:
                        misplaced.append(f"{kind} {option}: {value} -> {e}")
    assert not misplaced, "\n".join(misplaced[:20])


@pytest.mark.parametrize("page, line, heading", [
    ("# Lesson\n\n## Fig 1\n\nText.\n", 3, "Fig 1"),
    ("# Lesson\n\nFig 2\n-----\n\nText.\n", 3, "Fig 2"),
    ("# Lesson\n\n### [Fig](x.md) *12*\n", 3, "[Fig](x.md) *12*"),
    ("# Lesson\n\n## Anything {#fig-3}\n", 3, "Anything {#fig-3}"),
])
def test_a_heading_that_would_take_a_figure_s_id_is_one_line(page, line, heading):
    """A page's figures are fig-1, fig-2, ...: a heading with that id took the figure's place for
    the scripts (getElementById) and the table of contents."""
    from generator.lessons.source import check_layout

    with pytest.raises(LessonError) as e:
        check_layout(page.split("\n"), "content/lesson.md")
    assert str(e.value).startswith(f"content/lesson.md:{line}: the heading {heading[:60]!r} would take the id fig-"), str(e.value)
    assert "\n" not in str(e.value) and ". Fix: " in str(e.value)


@pytest.mark.parametrize("page", [
    "# Lesson\n\n## Figure 1\n", "# Lesson\n\n## Fig 1 {#first-figure}\n", "```\n## Fig 1\n```\n", "- Fig 1\n---\n",
])
def test_headings_with_other_ids_pass(page):
    from generator.lessons.source import check_layout

    check_layout(page.split("\n"), "content/lesson.md")
