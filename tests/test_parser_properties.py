"""Property-based tests (Hypothesis) of the two lesson parsers, on generated YAML and text: for
any input, the directive parser (lessons.directives.parse_directive) returns a Directive or raises
a LessonError whose str() is one line `path:line: problem. Fix: remedy`, never another exception,
and never takes longer than a second (Hypothesis' deadline); the same for the reference parser
(lessons.refs.parse_ref) and for a whole page's references and layout (lessons.refs.iter_refs,
lessons.source.check_layout).

Inputs mix structured YAML (yaml.safe_dump of generated options, so most bodies get past YAML to
the validators), raw text over all of Unicode (control characters, lone surrogates and
Python-Markdown's STX/ETX placeholders included), and YAML-looking fragments (anchors, aliases,
tags, merge keys, brackets, quotes, `1e3`)."""

from __future__ import annotations

import re

import pytest
import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from generator.lessons.directives import SPECS, Directive, parse_directive
from generator.lessons.errors import LessonError
from generator.lessons.refs import Ref, iter_refs, parse_ref
from generator.lessons.source import check_layout

WHERE = "content/x.md:7"
ONE_LINE = re.compile(r"^content/x\.md(?::\d+)?: [^\n]+[.?] Fix: [^\n]+$")  # "did you mean x? Fix: …"
# derandomize: the same examples on every run, so CI is reproducible; a new failure is found by
# raising max_examples here, not by luck.
SETTINGS = settings(deadline=1000, max_examples=400, derandomize=True, suppress_health_check=[HealthCheck.too_slow])

OPTION_NAMES = sorted({k for allowed, _ in SPECS.values() for k in allowed} | {"rule", "from", "to", "best", "rank"})
WORDS = ["tiny", "gpt2", "Lily", "her", "·her", "#3", "#0", "max-weight", "self", "previous-token", "induction",
         "1e3", "-2.5E-1", ".inf", "nan", "1_000", "yes", "~", "\u0435", "\x02", "\x03", "\x00", "\ud800", "\u200b"]

any_char = st.characters(min_codepoint=0, max_codepoint=0x10FFFF, exclude_categories=())
raw_text = st.text(any_char, max_size=120)
scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-(10**12), 10**12), st.floats(),
    st.sampled_from(WORDS), st.text(st.characters(exclude_categories=("Cs",)), max_size=12),
)
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=6) | st.dictionaries(st.sampled_from(OPTION_NAMES), inner, max_size=4), max_leaves=24)


def dump(options: dict) -> str:
    try:
        return yaml.safe_dump(options, allow_unicode=True, default_flow_style=None)
    except yaml.YAMLError:
        return repr(options)  # a value YAML cannot write (a lone surrogate): some text all the same


structured = st.dictionaries(st.sampled_from(OPTION_NAMES), values, max_size=9).map(dump)
FRAGMENTS = ["model: ", "sentence: ", "layer: ", "head: ", "pick: ", "tokens: ", "query: ", "scores: ", "labels: ",
             "focus: ", "&a ", "*a ", "&b ", "*b ", "<<: ", "!!python/object:os.system ", "!!binary ", "!!set ",
             "? ", "- ", "[", "]", "{", "}", ", ", ": ", "\n", "\n  ", "'", '"', "#", "|", ">", "%YAML 1.1\n", "---\n", "...\n"]
fragments = st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.sampled_from(WORDS)), max_size=60).map("".join)
bodies = st.one_of(structured, fragments, raw_text)


def assert_one_line(exc: LessonError) -> None:
    text = str(exc)
    assert ONE_LINE.match(text), f"not one line `path:line: problem. Fix: remedy`: {text!r}"
    assert len(text) < 2000, f"{len(text)} characters"


@SETTINGS
@given(kind=st.sampled_from(sorted(SPECS)), body=bodies)
def test_the_directive_parser_returns_a_directive_or_one_line(kind, body):
    try:
        d = parse_directive(kind, body, WHERE)
    except LessonError as exc:
        # the fence's line, or the line of the option the mistake is in: a line of the body
        path, line = WHERE.rsplit(":", 1)
        at = re.match(re.escape(path) + r":(\d+): ", str(exc))
        assert at and int(line) <= int(at[1]) <= int(line) + max(1, body.count("\n") + 1), str(exc)
        assert_one_line(exc)
    else:
        assert isinstance(d, Directive) and d.kind == kind and d.where == WHERE


REF_PIECES = ["lily", "model", "page", "sm", ".", "weight", "layer", "tiny", "nLayer", "training", "(", ")", ",", " ",
              "her", "Lily", "#6", "1", "minutes", "@", "@12", "{", "}", "\u0435", "\x02", "\ud800"]
ref_bodies = st.one_of(raw_text, st.lists(st.sampled_from(REF_PIECES), max_size=20).map("".join))


@SETTINGS
@given(body=ref_bodies)
@example(body="0\n0")  # found by Hypothesis: a reference over two lines made a two-line message
@example(body="lily.weight(her,\nLily)")
def test_the_reference_parser_returns_a_reference_or_one_line(body):
    try:
        ref = parse_ref(body, WHERE)
    except LessonError as exc:
        assert_one_line(exc)
    else:
        assert isinstance(ref, Ref) and ref.where.startswith("content/x.md:")


PAGE_PIECES = ["{{ ", " }}", "lily.layer", "model.tiny.nLayer", "page.minutes", "sm.weight(1)", "\n", "\n\n", "`", "```",
               "```attention\n", "```stepper\n", "    ", "\t", "> ", "<!-- ", " -->", "<span title=\"", "\">", "=== \"Tab\"\n",
               "id: lily\n", "model: tiny\n", "text ", "\x02", "\x00", "\ud800"]
pages = st.one_of(raw_text, st.lists(st.sampled_from(PAGE_PIECES), max_size=40).map("".join))


@SETTINGS
@given(text=pages)
def test_a_page_s_references_and_layout_are_read_or_refused_with_one_line(text):
    try:
        check_layout(text.split("\n"), "content/x.md", 1, SPECS)
        refs = list(iter_refs(text, "content/x.md"))
    except LessonError as exc:
        assert_one_line(exc)
    else:
        assert all(isinstance(r, Ref) for r in refs)


@pytest.mark.parametrize("body", ["model: tiny\nsentence: &a [" + ", ".join(["lol"] * 9) + "]\n"
                                  + "".join(f"x{i}: &a{i} [" + ", ".join(["*a"] * 9) + "]\n" for i in range(9)),
                                  "scores: " + "[" * 5000 + "]" * 5000, "scores: [" + ", ".join(["1"] * 50000) + "]"])
def test_hostile_bodies_are_refused_quickly(body):
    """The shapes Hypothesis is unlikely to find: an alias bomb, deep nesting, a huge body."""
    with pytest.raises(LessonError) as info:
        parse_directive("softmax", body, WHERE)
    assert_one_line(info.value)
