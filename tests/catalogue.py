"""The bad-input catalogue's cases and what runs them (the test_catalogue_*.py files): lesson mistakes, each run END TO END through the real commands
(`python -m generator site`, which runs the asset step and MkDocs, and `python -m generator
traces`), each with its exact one-line error (`path:line: what is wrong. Fix: how`) and proof that
nothing was written: the previous good build in site/ is untouched (same files, bytes and
modification times), no build folder or download is left behind, and the trace store is untouched.

tests/test_directives.py checks the parser alone; here every case is a small project in a tmp
folder (content/, traces/ with synthetic traces, mkdocs.yml made from the repository's) that first
builds cleanly with --strict, then gets one mistake.

Every case's output is also scanned for Python traceback text ("Traceback", 'File "'): a
mistake, or a damaged file of the store, is one line, never a stack of frames. STORE_CASES damage
the trace store or the training log instead of the lesson (the message names the file).

The site cases run `generator.cli.main(["site", ...])` in this process (the very function
`python -m generator site` runs; a subprocess per case would cost ~3 s of imports each on 2
cores); three cases also run as real subprocesses to check the exit status and stderr.
"""

from __future__ import annotations

import contextlib
import json
import io
import logging
import os
import re
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import lily_trace, synthetic_trace, write_traces
from course_builds import REPO, run, traces_command, tree_digest, tree_stat


BEN = "Ben wanted to play with her"

# The tiny model's figure on Lily's sentence, as the catalogue's lesson and the serve tests' have it
LILY_FIGURE = """\
```attention
model: tiny
sentence: "Lily wanted to play with her"
layer: 3
head: 3
id: lily
```
"""

GOOD = """\
---
description: A lesson for the catalogue.
---

# Lesson

Attention is how tokens look back. Reading time: {{ page.minutes }} min.

""" + LILY_FIGURE + """
In layer {{ lily.layer }}, head {{ lily.head }}, ·her gives {{ lily.weight(her, Lily) }} to Lily.
The model has {{ model.tiny.nLayer }} layers.

=== "Story"

    A story.

=== "Numbers"

    ```compare
    model: tiny
    sentences: ["Lily wanted to play with her", "Ben wanted to play with her"]
    layer: 1
    head: 2
    id: pair
    ```

```softmax
scores: [2, 1, 0]
labels: [Lily, ran, she]
id: sm
```

The weight of Lily is {{ sm.weight(Lily) }}.

```stepper
tokens: [Lily, ran, she]
query: [[1, 0], [0, 1], [2, 0]]
key: [[2, 0], [0, 1], [1, 1]]
value: [[1, 0], [0, 1], [0.5, 0.5]]
id: st
```

The score of she for Lily is {{ st.score(she, Lily) }}.
"""

GLOSSARY = """\
token:
  definition: A piece of text the model reads as one unit.
  aliases: [tokens]
softmax:
  definition: A rule that turns scores into weights that add up to 1.
"""

MKDOCS_EXTRA_LESSON_EXT = """  - generator.markdown.lesson:
      glossary: content/glossary.yml
      content_dir: content
"""


def mkdocs_yml() -> str:
    """The repository's mkdocs.yml, for a tmp project: theme overrides by absolute path, no nav
    (MkDocs lists the pages itself), the glossary read from the project."""
    text = (REPO / "mkdocs.yml").read_text(encoding="utf-8")
    text = re.sub(r"(?m)^(\s*custom_dir:\s*)overrides\s*$", lambda m: f"{m.group(1)}{REPO / 'overrides'}", text)
    text = re.sub(r"(?m)^nav:\n(?:[ \t]+[^\n]*\n)*", "", text)
    text = re.sub(r"(?m)^  - generator\.markdown\.lesson\n", MKDOCS_EXTRA_LESSON_EXT, text)
    text = text.replace("      traces_dir: traces\n", "      traces_dir: traces\n      training_log: no-training-log.json\n")
    return text


def line_of(text: str, needle: str, nth: int = 1) -> int:
    """1-based line of the nth line containing `needle`."""
    hits = [i for i, line in enumerate(text.split("\n"), 1) if needle in line]
    assert len(hits) >= nth, f"{needle!r} not in the lesson"
    return hits[nth - 1]


@dataclass
class Case:
    id: str
    lesson: str | None  # the new content/lesson.md (None: unchanged)
    expected: str  # the exact error line, after "path:line: "; {line} is filled from `at`
    at: str | None = None  # a needle whose line the error names (in lesson.md unless `file` is set)
    nth: int = 1  # ... its nth occurrence
    file: str = "content/lesson.md"
    files: dict | None = None  # other files to write (path relative to the project -> text, or bytes)
    command: str = "site"  # site | strict | traces
    traces_exit: int = 2
    line_offset: int = 0  # the error names the line this far from `at`'s
    option: str | None = None  # ... or the line of this option of the figure whose fence `at` finds

    def line(self) -> str:
        text = self.files[self.file] if self.files and self.file in self.files else self.lesson
        if isinstance(text, bytes):
            text = text.decode("utf-8", "replace")
        n = line_of(text, self.at, self.nth) + self.line_offset if self.at is not None else None
        if n is not None and self.option:  # a mistake in one option names that option's line
            lines = text.split("\n")
            n = next(i for i in range(n + 1, len(lines) + 1) if lines[i - 1].lstrip().startswith(self.option + ":"))
        where = f"{self.file}:{n}" if n is not None else self.file
        if "{where}" in self.expected:  # a line that names the place inside it
            return self.expected.replace("{where}", where)
        return f"{where}: {self.expected}"


def bad(old: str, new: str, count: int = 1) -> str:
    assert GOOD.count(old) >= count, old
    return GOOD.replace(old, new, count)


def alias_bomb(depth: int = 9) -> str:
    """The review's YAML alias bomb: 9 levels of 9 aliases each (9**9 'lol's once expanded)."""
    lines = ["a0: &a0 [" + ", ".join(['"lol"'] * 9) + "]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, depth)]
    return "\n".join(lines) + "\n"


BOMB = bad('model: tiny\nsentence: "Lily wanted to play with her"\n', "model: tiny\n" + alias_bomb() + "sentence: *a8\n")
UNCLOSED = bad("id: st\n```\n", "id: st\n")  # the reference after it was blamed, with no line
QUOTED = bad("```softmax\nscores: [2, 1, 0]\nlabels: [Lily, ran, she]\nid: sm\n```\n", "> ```softmax\n> scores: [2, 1, 0]\n> labels: [Lily, ran, she]\n> id: sm\n> ```\n").replace("The weight of Lily is {{ sm.weight(Lily) }}.", "")
FRONT_MATTER_LINE = "description: A lesson for the catalogue."
SENTENCE = 'sentence: "Lily wanted to play with her"\n'

FENCE_STEPPER = "```stepper"

# A GPT-2 figure, never traced here: its sentence's tokens come from the committed tokenizer, so
# its options and the references to it are checked without a trace; the references stand in a
# passage marked `{: .needs-traces }` (replaced by a note while the traces are missing).
IT = "The animal didn't cross the street because it was too tired"
IT_TOKENS = ("#0 '<|endoftext|>', #1 'The', #2 '·animal', #3 '·didn', #4 \"'t\", #5 '·cross', #6 '·the', "
             "#7 '·street', #8 '·because', #9 '·it', #10 '·was', #11 '·too', #12 '·tired'")
GPT2_FIG = f'```attention\nmodel: gpt2\nsentence: "{IT}"\nlayer: 1\nhead: 1\nid: g\n```\n'
GPT2_BOARD = "```scoreboard\nmodel: gpt2\nscores: [induction]\nid: board\n```\n"


def with_gpt2(prose: str, fig: str = GPT2_FIG) -> str:
    """GOOD with a GPT-2 figure and `prose` after it."""
    return GOOD + "\n" + fig + "\n" + prose + "\n"


UNMARKED = with_gpt2("In this head ·it gives {{ g.weight(it, animal) }} to ·animal.")
CASES = [
    # ---- directives (the asset step parses every page before MkDocs starts)
    Case("unknown-model", bad("model: tiny\nsentence: \"Lily", "model: gpt3\nsentence: \"Lily"),
         "attention: unknown model 'gpt3'. Fix: use one of: gpt2, tiny, tiny-rope", at="```attention", option="model"),
    Case("layer-out-of-range", bad("layer: 3\n", "layer: 5\n"),
         "attention: layer 5 is out of range for tiny, which has layers 1 to 4. Fix: use a layer from 1 to 4 (counting from 1)", at="```attention", option="layer"),
    Case("head-out-of-range-in-a-tab", bad("head: 2\n", "head: 7\n"),
         "compare: head 7 is out of range for tiny, which has heads 1 to 4. Fix: use a head from 1 to 4 (counting from 1)", at="```compare", option="head"),
    Case("layer-counted-from-zero", bad("layer: 1\n", "layer: 0\n"),
         "compare: layer 0 is out of range for tiny, which has layers 1 to 4. Fix: use a layer from 1 to 4 (counting from 1)", at="```compare", option="layer"),
    Case("malformed-yaml", bad("id: lily\n", "id: [lily\n"),
         "attention: malformed YAML at column 5: the '[' is never closed. Fix: end the line with ']': `id: [lily]`",
         at="```attention", option="id"),
    Case("unknown-option", bad("id: lily\n", "id: lily\ncolour: red\n"),
         "attention: unknown option 'colour'. Fix: allowed options are: caption, head, heads, id, layer, model, pattern-only, pick, sentence, show_heads, token", at="```attention", option="colour"),
    Case("missing-sentence", bad('sentence: "Lily wanted to play with her"\n', ""),
         "attention: missing option 'sentence'. Fix: add `sentence: ...` to the block", at="```attention"),
    Case("no-head-chosen", bad("layer: 3\nhead: 3\n", ""),
         "attention: no head chosen. Fix: add `layer:` and `head:` (counting from 1), or a `pick:` rule", at="```attention"),
    Case("duplicate-id", bad("id: sm\n", "id: lily\n"),
         "softmax: id 'lily' is used twice on this page (first at content/lesson.md:9). Fix: give each figure its own id", at="```softmax"),
    Case("empty-sentence", bad('sentence: "Lily wanted to play with her"\n', 'sentence: ""\n'),
         "attention: the sentence is empty. Fix: write the sentence to trace", at="```attention", option="sentence"),
    Case("sentence-is-a-number", bad('sentence: "Lily wanted to play with her"\n', "sentence: 42\n"),
         "attention: a sentence must be text, not int 42. Fix: quote the sentence", at="```attention", option="sentence"),
    Case("compare-one-sentence", bad('sentences: ["Lily wanted to play with her", "Ben wanted to play with her"]', 'sentences: ["Lily wanted to play with her"]'),
         "compare: 'sentences' must be a list of exactly two sentences. Fix: write `sentences: [\"first sentence\", \"second sentence\"]`", at="```compare", option="sentences"),
    Case("pick-rule-unknown", bad("layer: 3\nhead: 3\n", "pick: loudest\n"),
         "attention: unknown pick rule 'loudest'. Fix: use one of: max-weight, previous-token, first-token, self", at="```attention", option="pick"),
    Case("softmax-one-score", bad("scores: [2, 1, 0]\nlabels: [Lily, ran, she]\n", "scores: [2]\n"),
         "softmax: 'scores' must hold 2 to 8 numbers, not 1. Fix: add or remove scores", at="```softmax", option="scores"),
    # ---- stepper vectors
    Case("stepper-missing-vector", bad("query: [[1, 0], [0, 1], [2, 0]]", "query: [[1, 0], [0, 1]]"),
         "stepper: 'query' must have one vector per token (3). Fix: give 3 vectors, like `query: [[1, 0], ...]`", at=FENCE_STEPPER, option="query"),
    Case("stepper-key-length", bad("key: [[2, 0], [0, 1], [1, 1]]", "key: [[2, 0], [0, 1, 5], [1, 1]]"),
         "stepper: queries and keys must all have the same length. Fix: give every query and key the same number of entries", at=FENCE_STEPPER),
    Case("stepper-not-a-number", bad("value: [[1, 0], [0, 1], [0.5, 0.5]]", "value: [[1, 0], [0, one], [0.5, 0.5]]"),
         "stepper: 'value' holds 'one', which is not a finite number. Fix: write `value` with numbers only", at=FENCE_STEPPER, option="value"),
    Case("stepper-infinite", bad("query: [[1, 0], [0, 1], [2, 0]]", "query: [[1, 0], [0, .inf], [2, 0]]"),
         "stepper: 'query' holds inf, which is not a finite number. Fix: write `query` with numbers only", at=FENCE_STEPPER, option="query"),
    Case("stepper-huge", bad("query: [[1, 0], [0, 1], [2, 0]]", "query: [[1, 0], [0, 1e308], [2, 0]]"),
         "stepper: 'query' holds 1e+308, larger in size than 1,000,000. Fix: write `query` with numbers between -1,000,000 and 1,000,000", at=FENCE_STEPPER, option="query"),
    Case("stepper-focus", bad("id: st\n", "focus: Ben\nid: st\n"),
         "stepper: focus 'Ben' is not one of the tokens. Fix: use one of: Lily, ran, she", at=FENCE_STEPPER, option="focus"),
    # ---- prose references (checked while MkDocs renders the page)
    Case("ref-unknown-figure", bad("{{ lily.layer }}", "{{ lilly.layer }}"),
         "reference {{ lilly.layer }}: no figure with id 'lilly' on this page (ids here: lily, pair, sm, st). Fix: give the figure `id: lilly` or use one of the ids above",
         at="lilly.layer"),
    Case("ref-unknown-token", bad("{{ lily.weight(her, Lily) }}", "{{ lily.weight(her, Bob) }}"),
         "reference {{ lily.weight(her, Bob) }}: to: no token 'Bob' in the sentence; its tokens are #0 'Lily', #1 '·wanted', #2 '·to', #3 '·play', #4 '·with', #5 '·her'. Fix: name one of these tokens, or give its position like #6",
         at="lily.weight(her, Bob)"),
    Case("ref-looks-ahead", bad("{{ lily.weight(her, Lily) }}", "{{ lily.weight(Lily, her) }}"),
         "reference {{ lily.weight(Lily, her) }}: #5 comes after #0, and a token cannot look ahead. Fix: name an earlier token second",
         at="lily.weight(Lily, her)"),
    Case("ref-position-out-of-range", bad("{{ lily.head }}", "{{ lily.token(#9) }}"),
         "reference {{ lily.token(#9) }}: position '9' is not a number from 0 to 5. Fix: write a whole number from 0 to 5",
         at="lily.token(#9)"),
    Case("ref-sentence-out-of-range", bad("The model has", "Its twin is {{ pair.weight(her, Lily, 3) }}. The model has"),
         "reference {{ pair.weight(her, Lily, 3) }}: sentence '3' is not a number from 1 to 2. Fix: write a whole number from 1 to 2",
         at="pair.weight(her, Lily, 3)"),
    Case("ref-unknown-name", bad("{{ lily.head }}", "{{ lily.colour }}"),
         "reference {{ lily.colour }}: an attention figure has no 'colour'. Fix: use one of: allheads, argmax, compare, head, head0, headsfirst, layer, layer0, moved, othernorms, rule, scaled, score, selfmean, sentence, token, tokens, top, valuenorm, weight",
         at="lily.colour"),
    Case("ref-unreadable", bad("{{ lily.head }}", "{{ lily head }}"),
         "reference {{ lily head }} cannot be read. Fix: write `{{ figure-id.weight(her, Lily) }}` or `{{ model.tiny.nLayer }}`; braces meant as code stay as written in a code span or a fenced code block (not an indented one)",
         at="lily head"),
    Case("ref-unknown-model", bad("{{ model.tiny.nLayer }}", "{{ model.gpt3.nLayer }}"),
         "reference {{ model.gpt3.nLayer }}: unknown model 'gpt3'. Fix: use one of: gpt2, tiny, tiny-rope", at="model.gpt3"),
    Case("ref-unknown-model-field", bad("{{ model.tiny.nLayer }}", "{{ model.tiny.depth }}"),
         "reference {{ model.tiny.depth }}: unknown model field 'depth'. Fix: use one of: nLayer, nHead, width, headDim, nCtx, nParams, vocabSize, revision, hfName, nHeads, sqrtHeadDim, nKvHead, kvShare, kvNumbers, kvNumbersUnshared, kvBytes, kvBytes16, kvContextBytes, kvContextBytes16, kvContextBytesUnshared, or training.<field>",
         at="model.tiny.depth"),
    Case("ref-softmax-label", bad("{{ sm.weight(Lily) }}", "{{ sm.weight(Ben) }}"),
         "reference {{ sm.weight(Ben) }}: no single score labelled 'Ben' (labels: Lily, ran, she). Fix: give a label or a position from 1",
         at="sm.weight(Ben)"),
    Case("ref-stepper-token", bad("{{ st.score(she, Lily) }}", "{{ st.score(he, Lily) }}"),
         "reference {{ st.score(he, Lily) }}: no single token 'he' in this stepper (tokens: Lily, ran, she). Fix: name one of these tokens, or give its position like #2",
         at="st.score(he, Lily)"),
    Case("ref-unknown-page-field", bad("{{ page.minutes }}", "{{ page.hours }}"),
         "unknown page reference {{ page.hours }}. Fix: use one of: {{ page.minutes }}, {{ page.words }}", at="page.hours"),
    # ---- front matter and glossary (lesson_ext)
    Case("front-matter-malformed", bad("description: A lesson for the catalogue.", "description: [unclosed"),
         "front matter: malformed YAML: expected ',' or ']', but got '<stream end>'. Fix: write `key: value` lines and quote values that contain ':' or '#'",
         at="---", nth=2),  # YAML notices the missing ']' where the front matter ends
    Case("front-matter-not-closed", GOOD.replace("---\n", "", 2).replace("description: A", "---\ndescription: A", 1),
         "the front matter that starts here is never closed. Fix: end it with a line `---`, or remove the first line if it is not front matter",
         at="---"),
    Case("glossary-malformed", None,
         "malformed YAML: mapping values are not allowed here. Fix: write one `term:` per entry with an indented `definition:` line",
         file="content/glossary.yml", at="definition: A rule", files={"content/glossary.yml": GLOSSARY.replace("A rule that", "A rule: that")}),
    Case("glossary-no-definition", None,
         "term 'softmax' has no definition. Fix: add an indented `definition: one or two plain sentences`",
         file="content/glossary.yml", at="softmax:", files={"content/glossary.yml": GLOSSARY.replace("  definition: A rule that turns scores into weights that add up to 1.\n", "  aliases: [softmaxes]\n")}),
    Case("glossary-term-twice", None,
         "term 'token' is defined twice (first at line 1, as 'token'). Fix: keep one entry and delete the other",
         file="content/glossary.yml", at="token:", nth=2, files={"content/glossary.yml": GLOSSARY + "token:\n  definition: Again.\n"}),
    Case("glossary-alias-taken", None,
         "alias 'tokens' of 'softmax' is already used by 'token' (line 3). Fix: give each spelling to one term only",
         file="content/glossary.yml", at="aliases: [tokens, soft]",
         files={"content/glossary.yml": GLOSSARY + "  aliases: [tokens, soft]\n"}),
    # ---- the learner's path (markdown.reading_path): the same line from `make check` and `make site`
    Case("glossary-term-before-its-introduction", GOOD.replace("# Lesson\n", "# Lesson\n\n## First\n") + "\n## Later\n\nA token is a piece of text.\n",
         "'tokens' is used here above the section of this page that introduces it (#later). Fix: say it in other words here, "
         "or introduce it here in plain words and move its `introduced:` (content/glossary.yml:4) to this section",
         at="Attention is how tokens", files={"content/glossary.yml": GLOSSARY.replace("  aliases: [tokens]\n", "  aliases: [tokens]\n  introduced: lesson.md#later\n")}),
    Case("glossary-term-on-an-earlier-page", None,
         "'token' is used here before the page \"lesson.md\" introduces it (lesson.md). Fix: say it in other words here, "
         "or introduce it here in plain words and move its `introduced:` (content/glossary.yml:4) to this section",
         file="content/index.md", at="one token",
         files={"content/index.md": "# Home\n\nA course about attention, one token at a time.\n",
                "content/glossary.yml": GLOSSARY.replace("  aliases: [tokens]\n", "  aliases: [tokens]\n  introduced: lesson.md\n")}),
    Case("glossary-introduced-in-no-such-section", None,
         "'token' is introduced in lesson.md#nowhere, and lesson.md has no such section. Fix: write `lesson.md` alone: the page has no `##` heading",
         file="content/glossary.yml", at="introduced:",
         files={"content/glossary.yml": GLOSSARY.replace("  aliases: [tokens]\n", "  aliases: [tokens]\n  introduced: lesson.md#nowhere\n")}),
    Case("guess-first-answered-above", GOOD.replace("The weight of Lily is {{ sm.weight(Lily) }}.\n",
         "The weight of Lily is {{ sm.weight(Lily) }}.\n\n**Guess first.** How much does Lily get?\n\n```guess\nchoices:\n"
         "  - {say: more than half, when: \"sm.weight(Lily) > 0.5\"}\n  - {say: half or less, when: \"sm.weight(Lily) <= 0.5\"}\n"
         "answer: \"Lily gets {{ sm.weight(Lily) }}.\"\n```\n\n??? question \"Show the answer\"\n\n    {{ sm.weight(Lily) }}.\n"),
         "this \"Guess first\" is answered above it: its answer's {{ sm.weight(Lily) }} is shown at line {answer}. "
         "Fix: ask the question before that number, or give the number after the answer".replace("{answer}", str(line_of(GOOD, "The weight of Lily is"))),
         at="**Guess first.**"),
    Case("build-word-in-prose", bad("The model has {{ model.tiny.nLayer }} layers.", "The model has {{ model.tiny.nLayer }} layers; `make traces` made them."),
         "reader text names a make command ('make traces'), which a reader never needs. Fix: say what the reader sees or does instead; "
         "build steps and files belong in the authors' docs", at="make traces"),
    Case("nav-lists-a-missing-page", None,
         "the nav lists missing.md, which is not in content. Fix: write the page, or remove its line from the nav",
         file="mkdocs.yml", at="missing.md",
         files={"mkdocs.yml": mkdocs_yml() + "nav:\n  - Lesson: lesson.md\n  - Missing: missing.md\n"}),
    # ---- traces: missing and stale, under --strict
    # ---- what a hostile review broke
    Case("yaml-alias-bomb", BOMB,
         "attention: the block uses a YAML anchor or alias (&name, *name). Fix: write each value out in full; a figure's options take no anchors or aliases",
         at="```attention", option="a0"),
    Case("yaml-one-anchor", bad("id: lily\n", "id: &x lily\n"),
         "attention: the block uses a YAML anchor or alias (&name, *name). Fix: write each value out in full; a figure's options take no anchors or aliases",
         at="```attention", option="id"),
    Case("front-matter-script", bad(FRONT_MATTER_LINE, "description: '\"><script>alert(1)</script>'"),
         "front matter: '\"><script>alert(1)</script>' holds '<', which the theme writes into the page's HTML as it is. Fix: write plain text without < > or \" (front matter is data, not HTML)",
         at="description:"),
    Case("front-matter-title-quote", bad(FRONT_MATTER_LINE, FRONT_MATTER_LINE + '\ntitle: \'Lily" onload="alert(1)\''),
         "front matter: 'Lily\" onload=\"alert(1)' holds '\"', which the theme writes into the page's HTML as it is. Fix: write plain text without < > or \" (front matter is data, not HTML)",
         at="title:"),
    Case("front-matter-title-entity", bad(FRONT_MATTER_LINE, FRONT_MATTER_LINE + "\ntitle: 'Q &amp; A'"),
         "front matter: 'Q &amp; A' holds '&amp;', which the page's HTML would read as a character reference. Fix: write the character itself (& followed by a space is plain text)",
         at="title:"),
    Case("front-matter-alias", bad(FRONT_MATTER_LINE, FRONT_MATTER_LINE + "\nx: &a [1]\ny: [*a, *a]"),
         "front matter: YAML anchors and aliases (&name, *name) are not allowed. Fix: write each value out in full", at="x: &a"),
    # keys the theme reads as more than text: a wrong type passed YAML and broke the build inside the theme
    Case("front-matter-hide-number", bad(FRONT_MATTER_LINE, FRONT_MATTER_LINE + "\nhide: 42"),
         "front matter: 'hide' must be a list of parts of the page, not 42. Fix: write `hide: [toc]` (navigation, toc, footer, path, tags, feedback)",
         at="hide:"),
    Case("front-matter-search-number", bad(FRONT_MATTER_LINE, FRONT_MATTER_LINE + "\nsearch: 42"),
         "front matter: 'search' must be a mapping of exclude (true or false) and boost (a number above 0, at most 100), not 42. Fix: write `search: {exclude: true}` or `search: {boost: 2}`",
         at="search:"),
    # NaN passed as a number and made the search index invalid JSON
    Case("front-matter-search-boost-nan", bad(FRONT_MATTER_LINE, FRONT_MATTER_LINE + "\nsearch: {boost: .nan}"),
         "front matter: 'search' must be a mapping of exclude (true or false) and boost (a number above 0, at most 100), not {'boost': nan}. Fix: write `search: {exclude: true}` or `search: {boost: 2}`",
         at="search:"),
    # a mapping as the title was written into <title> as Python's repr
    Case("front-matter-title-mapping", bad(FRONT_MATTER_LINE, FRONT_MATTER_LINE + "\ntitle: {a: 1}"),
         "front matter: 'title' must be text, not {'a': 1}. Fix: write `title: …` with plain text", at="title: {"),
    Case("front-matter-template-missing", bad(FRONT_MATTER_LINE, FRONT_MATTER_LINE + "\ntemplate: nonexistent.html"),
         "front matter: 'template' 'nonexistent.html' is not a template of the theme or of overrides/. Fix: leave it out (main.html is the default) or name a file there",
         at="template:"),
    Case("front-matter-impossible-date", bad(FRONT_MATTER_LINE, FRONT_MATTER_LINE + "\ndate: 2020-13-45"),
         "front matter: month must be in 1..12. Fix: write a real date as YYYY-MM-DD, or quote the value", at="date:"),
    Case("fence-indented-by-a-tab", bad("```attention\n", "\t```attention\n"),
         "the ```attention fence is indented, so Markdown reads it as code. Fix: start the fence at the left margin (indent it by 4 spaces only inside a content tab, an admonition or a list item)",
         at="```attention"),
    Case("fence-indented-by-4-spaces", bad("```stepper\n", "    ```stepper\n"),
         "the ```stepper fence is indented, so Markdown reads it as code. Fix: start the fence at the left margin (indent it by 4 spaces only inside a content tab, an admonition or a list item)",
         at=FENCE_STEPPER),
    Case("fence-never-closed", UNCLOSED,
         "the ```stepper fence opened here is never closed. Fix: end it with a line ```", at=FENCE_STEPPER),
    # a figure kind misspelled, or a figure's options under no kind, is not silently code
    Case("fence-kind-misspelled", bad("```attention\n", "```atention\n"),
         "unknown figure kind 'atention': did you mean attention? Fix: write ```attention, or, if it is code, give the fence a language such as ```yaml or ```text",
         at="```atention"),
    Case("fence-kind-misspelled-with-a-reference-to-it", bad("```softmax\n", "```sotfmax\n"),
         "unknown figure kind 'sotfmax': did you mean softmax? Fix: write ```softmax, or, if it is code, give the fence a language such as ```yaml or ```text",
         at="```sotfmax"),
    Case("fence-kind-capitalised", bad("```stepper\n", "```Stepper\n"),
         "unknown figure kind 'Stepper': did you mean stepper? Fix: write ```stepper, or, if it is code, give the fence a language such as ```yaml or ```text",
         at="```Stepper"),
    Case("fence-without-a-kind-holds-options", bad("```softmax\n", "```\n"),
         "a fence with no figure kind holds the options of a softmax figure. Fix: write ```softmax, or, if it is code, give the fence a language such as ```yaml or ```text",
         at="scores: [2, 1, 0]", nth=1, line_offset=-1),
    Case("fence-unknown-kind-holds-options", bad("```attention\n", "```heatmap\n"),
         "unknown figure kind 'heatmap' holds the options of an attention figure. Fix: write ```attention, or, if it is code, give the fence a language such as ```yaml or ```text",
         at="```heatmap"),
    # a fence left open in the middle of the page: at its own line, not as YAML or a reference
    Case("fence-never-closed-before-prose", bad("id: lily\n```\n", "id: lily\n"),
         "the ```attention fence opened here is never closed. Fix: end it with a line ```", at="```attention"),
    Case("fence-never-closed-before-the-next-figure", bad("id: sm\n```\n\nThe weight of Lily is {{ sm.weight(Lily) }}.\n\n", "id: sm\n"),
         "the ```softmax fence opened here is never closed. Fix: end it with a line ```", at="```softmax"),
    Case("fence-code-never-closed-before-a-figure", bad("```softmax\n", "```text\nsome code\n\n```softmax\n"),
         "the ```text fence opened here is never closed. Fix: end it with a line ```", at="```text"),
    Case("fence-in-a-blockquote", QUOTED,
         "the ```softmax fence is inside a blockquote, where the course does not read figures. Fix: move the figure out of the blockquote (a `!!! note` admonition with the fence indented by 4 spaces works)",
         at="> ```softmax"),
    Case("ref-in-an-html-comment", bad("The model has", "<!-- layer {{ lily.layer }} -->\nThe model has"),
         "the reference {{ lily.layer }} is inside an HTML comment, where it cannot be filled in. Fix: write it in the page's text, outside HTML tags and comments (or delete it if it is commented out)",
         at="<!-- layer"),
    Case("ref-in-a-comment-over-lines", bad("The model has", "<!-- a note\nnoted {{ lily.layer }}\n-->\nThe model has"),
         "the reference {{ lily.layer }} is inside an HTML comment, where it cannot be filled in. Fix: write it in the page's text, outside HTML tags and comments (or delete it if it is commented out)",
         at="noted {{ lily.layer }}"),
    Case("ref-in-an-html-attribute", bad("The model has", '<span title="layer {{ lily.layer }}">L</span>\nThe model has'),
         "the reference {{ lily.layer }} is inside an HTML tag (an attribute), where it cannot be filled in. Fix: write it in the page's text, outside HTML tags and comments (or delete it if it is commented out)",
         at="<span title"),
    Case("ref-in-a-raw-html-block", bad("The model has", "<div>\nLayer {{ lily.layer }}\n</div>\n\nThe model has"),
         "the reference {{ lily.layer }} was left as text: it is inside raw HTML or an indented code block, which Markdown does not read for references. Fix: write it in the page's text, use a fenced code block for code, or add the `markdown` attribute to the HTML element around it",
         at="Layer {{ lily.layer }}"),
    Case("ref-left-open", bad("The model has", "Layer {{ lily.layer and more text.\nThe model has"),
         "a `{{` is never closed on its line. Fix: close the reference with `}}` on the same line, or write the braces in a code span",
         at="Layer {{ lily.layer and"),
    Case("ref-in-a-link-address", bad("The model has", "See [the head]({{ lily.layer }}.html).\nThe model has"),
         "a reference inside a link or image address. Fix: put the reference in the link's text, not in its address",
         at="See [the head]"),
    Case("ref-in-an-image-address", bad("The model has", "![grid](grid-{{ lily.weight(her, Lily) }}.png)\nThe model has"),
         "a reference inside a link or image address. Fix: put the reference in the link's text, not in its address",
         at="![grid]"),
    Case("ref-in-a-link-definition", bad("The model has", "[grid]: https://example.org/{{ lily.layer }}\n\nThe model has"),
         "a reference inside a link or image address. Fix: put the reference in the link's text, not in its address",
         at="[grid]: https"),
    Case("stepper-focus-repeated", bad("tokens: [Lily, ran, she]", "tokens: [she, ran, she]").replace("id: st\n", "focus: she\nid: st\n").replace("{{ st.score(she, Lily) }}", "{{ st.score(ran, #1) }}"),
         "stepper: focus 'she' is tokens 1 and 3. Fix: give its position instead, like `focus: 3`", at=FENCE_STEPPER, option="focus"),
    Case("duplicate-key", bad("layer: 3\nhead: 3\n", "layer: 3\nhead: 3\nlayer: 2\n"),
         "attention: the block gives the option 'layer' twice (body lines 3 and 5). Fix: keep one of them", at="```attention"),
    Case("duplicate-key-in-pick", bad("layer: 3\nhead: 3\n", "pick: {rule: self, rule: previous-token}\n"),
         "attention: the block gives the option 'rule' twice (body lines 3 and 3). Fix: keep one of them", at="```attention"),
    Case("softmax-label-twice", bad("labels: [Lily, ran, she]", "labels: [Lily, Lily, she]"),
         "reference {{ sm.weight(Lily) }}: 2 scores are labelled 'Lily' (labels: Lily, Lily, she). Fix: give its position instead, like #2",
         at="sm.weight(Lily)"),
    Case("lesson-not-utf8", None, "the file is not UTF-8 text (byte 0xE9 at column 4). Fix: save the file as UTF-8",
         at="caf", files={"content/lesson.md": GOOD.replace("# Lesson", "# Lesson\n\ncaf\u00e9").encode("utf-8").replace(b"caf\xc3\xa9", b"caf\xe9")}),
    Case("glossary-not-utf8", None, "the file is not UTF-8 text (byte 0xE9 at column 18). Fix: save the file as UTF-8",
         file="content/glossary.yml", at="definition: A r",
         files={"content/glossary.yml": GLOSSARY.replace("A rule that", "A r\u00e9gle that").encode("utf-8").replace(b"r\xc3\xa9gle", b"r\xe9gle")}),
    Case("stx-etx-in-a-sentence", bad(SENTENCE, 'sentence: "Lily \x02wanted\x03 to play with her"\n'),
         "the line holds the control character U+0002 at column 17. Fix: remove it; a lesson is plain, printable text", at="sentence: \"Lily \x02"),
    Case("stx-escaped-in-a-sentence", bad(SENTENCE, 'sentence: "Lily \\x02wanted\\x03 to play with her"\n'),
         "attention: 'sentence' holds the control character U+0002 at character 6. Fix: remove it; a figure's text is plain, printable text", at="```attention", option="sentence"),
    Case("lone-surrogate-in-a-sentence", bad(SENTENCE, 'sentence: "Lily \\ud800 wanted to play with her"\n'),
         "attention: 'sentence' holds the lone surrogate U+D800 (half of a UTF-16 pair, not a character) at character 6. Fix: remove it; a figure's text is plain, printable text",
         at="```attention", option="sentence"),
    Case("nul-in-prose", bad("Attention is how", "Attention\x00 is how"),
         "the line holds the control character U+0000 at column 10. Fix: remove it; a lesson is plain, printable text", at="Attention\x00"),
    Case("control-character-in-a-label", bad("labels: [Lily, ran, she]", 'labels: [Lily, "r\\x03an", she]'),
         "softmax: 'labels' holds the control character U+0003 at character 2. Fix: remove it; a figure's text is plain, printable text", at="```softmax", option="labels"),
    Case("homoglyph-in-a-reference", bad("{{ st.score(she, Lily) }}", "{{ st.score(sh\u0435, Lily) }}"),
         "reference {{ st.score(sh\u0435, Lily) }}: no single token 'sh\u0435' in this stepper (tokens: Lily, ran, she); 'sh\u0435' only looks like #3 'she': it has U+0435 CYRILLIC SMALL LETTER IE where #3 has U+0065 LATIN SMALL LETTER E. Fix: name one of these tokens, or give its position like #2",
         at="st.score(sh\u0435"),
    Case("gpt2-ref-names-a-token-the-sentence-lacks", with_gpt2("·it gives {{ g.weight(it, dog) }} to ·dog.\n{: .needs-traces }"),
         f"reference {{{{ g.weight(it, dog) }}}}: to: no token 'dog' in the sentence; its tokens are {IT_TOKENS}. Fix: name one of these tokens, or give its position like #6",
         at="g.weight(it, dog)"),
    Case("gpt2-ref-looks-ahead", with_gpt2("·it gives {{ g.weight(it, tired) }} to ·tired.\n{: .needs-traces }"),
         "reference {{ g.weight(it, tired) }}: #12 comes after #9, and a token cannot look ahead. Fix: name an earlier token second",
         at="g.weight(it, tired)"),
    Case("gpt2-ref-position-past-the-end", with_gpt2("The last token is {{ g.token(13) }}.\n{: .needs-traces }"),
         "reference {{ g.token(13) }}: position '13' is not a number from 0 to 12. Fix: write a whole number from 0 to 12",
         at="g.token(13)"),
    Case("gpt2-token-option-not-in-the-sentence", with_gpt2("Its top: {{ g.top(it, 2) }}.\n{: .needs-traces }", GPT2_FIG.replace("id: g\n", "token: wide\nid: g\n")),
         f"attention: 'token': no token 'wide' in the sentence; its tokens are {IT_TOKENS}. Fix: name one of these tokens, or give its position like #6",
         at="```attention", nth=2, option="token"),
    Case("gpt2-score-split-key-after-its-token", with_gpt2("", GPT2_FIG.replace("```attention", "```score-split").replace("head: 1\n", "head: 1\ntoken: animal\nkey: it\n")),
         "score-split: key #9 comes after token #2, and a token cannot look ahead. Fix: choose a key at or before the token",
         at="```score-split", option="key"),
    Case("gpt2-pick-token-not-in-the-sentence", with_gpt2("", GPT2_FIG.replace("layer: 1\nhead: 1\n", "pick: {rule: max-weight, from: it, to: dog}\n")),
         f"attention: pick.to: no token 'dog' in the sentence; its tokens are {IT_TOKENS}. Fix: name one of these tokens, or give its position like #6",
         at="```attention", nth=2, option="pick"),
    Case("gpt2-sentence-past-the-context", with_gpt2("", GPT2_FIG.replace(IT, "a." * 600)),
         "attention: the sentence 'a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.'… is 1201 tokens, longer than gpt2's context of 1024 tokens. Fix: shorten the sentence to at most 1024 tokens",
         at="```attention", nth=2, option="sentence"),
    Case("gpt2-scoreboard-ref-past-the-last-layer", with_gpt2("Its score: {{ board.score(induction, 13, 1) }}.\n{: .needs-traces }", GPT2_BOARD),
         "reference {{ board.score(induction, 13, 1) }}: layer '13' is not a number from 1 to 12. Fix: write a whole number from 1 to 12",
         at="board.score"),
    Case("pending-number-outside-a-marked-passage", UNMARKED,
         "reference {{ g.weight(it, animal) }} has no number in this build: the attention figure 'g' "
         f"(content/lesson.md:{line_of(UNMARKED, '```attention', 2)}) has no traces of model gpt2 here. "
         "Fix: write `{: .needs-traces }` on the line right under the paragraph, list item or table that holds it, so readers get a short note until the traces exist; "
         "it needs the model download: run `make traces` where the hub is reachable, or set COURSE_GPT2_PATH to a local copy",
         at="g.weight(it, animal)"),
    Case("mark-after-a-blank-line", with_gpt2("·it gives {{ g.weight(it, animal) }} to ·animal.\n\n{: .needs-traces }"),
         "the mark `{: .needs-traces }` follows a blank line, so it marks nothing. Fix: put it right under the last line of the paragraph, list item or table, with no blank line between",
         at="{: .needs-traces }"),
    Case("mark-on-a-line-with-text", with_gpt2("·it gives {{ g.weight(it, animal) }} to ·animal. {: .needs-traces }"),
         "the mark `{: .needs-traces }` shares its line with text. Fix: put it on a line of its own, right under the passage it marks",
         at="{: .needs-traces }"),
    Case("mark-under-a-passage-without-figures", with_gpt2("GPT-2 has twelve layers.\n{: .needs-traces }"),
         "the mark `{: .needs-traces }` stands under a passage with no reference to a figure or a model, so no trace can be missing from it. Fix: drop the mark, or keep it right under a passage next to one that reads a figure's numbers",
         at="{: .needs-traces }"),
    # A changed sentence whose references no longer fit fails before any trace exists (its tokens
    # come from the committed tokenizer); one that still fits is a pending figure, which --strict
    # refuses (build_log.py's one line per model).
    Case("sentence-changed-under-its-references", bad('sentence: "Lily wanted to play with her"\n', 'sentence: "Lily wanted to play with him"\n'),
         "reference {{ lily.weight(her, Lily) }}: from: no token 'her' in the sentence; its tokens are #0 '<|endoftext|>', #1 'Lily', #2 '·wanted', #3 '·to', #4 '·play', #5 '·with', #6 '·him'. Fix: name one of these tokens, or give its position like #6",
         at="lily.weight(her, Lily)"),
    Case("missing-trace-strict", bad('"Ben wanted to play with her"]', '"Ben wanted to play with him"]'),
         "tiny: 1 figure pending (1 sentence not traced) at {where}. Run `make traces` (the tiny model runs here in seconds).",
         at="```compare", command="strict"),
]
# Cases for `python -m generator traces` (content + tiny model): exit status 2, store untouched.
TRACE_CASES = [
    Case("traces-unknown-model", bad("model: tiny\nsentence: \"Lily", "model: gpt3\nsentence: \"Lily"),
         "attention: unknown model 'gpt3'. Fix: use one of: gpt2, tiny, tiny-rope", at="```attention", command="traces", option="model"),
    Case("traces-over-the-context", bad('sentence: "Lily wanted to play with her"', 'sentence: "' + "Lily ran. " * 120 + '"'),
         None, at="```attention", command="traces"),  # expected filled in below (token count)
    Case("traces-yaml-alias-bomb", BOMB,
         "attention: the block uses a YAML anchor or alias (&name, *name). Fix: write each value out in full; a figure's options take no anchors or aliases",
         at="```attention", command="traces", option="a0"),
    Case("traces-fence-in-a-blockquote", QUOTED.replace("> ```softmax\n> scores: [2, 1, 0]\n> labels: [Lily, ran, she]\n> id: sm", "> ```attention\n> model: tiny\n> sentence: Ben ran\n> layer: 1\n> head: 1"),
         "the ```attention fence is inside a blockquote, where the course does not read figures. Fix: move the figure out of the blockquote (a `!!! note` admonition with the fence indented by 4 spaces works)",
         at="> ```attention", command="traces"),
    Case("traces-lone-surrogate", bad(SENTENCE, 'sentence: "Lily \\udc80 wanted to play with her"\n'),
         "attention: 'sentence' holds the lone surrogate U+DC80 (half of a UTF-16 pair, not a character) at character 6. Fix: remove it; a figure's text is plain, printable text",
         at="```attention", command="traces", option="sentence"),
    Case("traces-stx-etx", bad(SENTENCE, 'sentence: "Lily \x02wanted\x03 to play with her"\n'),
         "the line holds the control character U+0002 at column 17. Fix: remove it; a lesson is plain, printable text", at="sentence: \"Lily \x02", command="traces"),
    Case("traces-not-utf8", None, "the file is not UTF-8 text (byte 0xE9 at column 4). Fix: save the file as UTF-8", command="traces",
         at="caf", files={"content/lesson.md": GOOD.replace("# Lesson", "# Lesson\n\ncaf\u00e9").encode("utf-8").replace(b"caf\xc3\xa9", b"caf\xe9")}),
    Case("traces-bad-stepper", bad("key: [[2, 0], [0, 1], [1, 1]]", "key: [[2, 0], [0, 1, 5], [1, 1]]"),
         "stepper: queries and keys must all have the same length. Fix: give every query and key the same number of entries", at=FENCE_STEPPER, command="traces"),
]


# ---------------------------------------------------------------- running the real build


LILY_LESSON = "# Lily\n\n" + LILY_FIGURE + "\n·her gives {{ lily.weight(her, Lily) }} to Lily.\n"  # the one-figure lesson the serve tests edit while serving


def small_course(root: Path, lessons: dict[str, str], yml: str | None = None) -> Path:
    """A small course in `root`: a home page, the glossary, `lessons` (file name: text) and
    mkdocs.yml (the repository's unless `yml`); its traces are the caller's."""
    content = root / "content"
    content.mkdir(parents=True)
    (content / "index.md").write_text("# Home\n\nA course about attention.\n", encoding="utf-8")
    (content / "glossary.md").write_text("# Glossary\n\n[[glossary]]\n", encoding="utf-8")
    (content / "glossary.yml").write_text(GLOSSARY, encoding="utf-8")
    for name, text in lessons.items():
        (content / name).write_text(text, encoding="utf-8")
    (root / "mkdocs.yml").write_text(mkdocs_yml() if yml is None else yml, encoding="utf-8")
    return root


def served_course(root: Path, lessons: dict[str, str], yml: str | None = None) -> Path:
    """small_course with the committed traces, as `make serve` reads them."""
    small_course(root, lessons, yml)
    shutil.copytree(REPO / "traces", root / "traces")
    return root


def get_url(url: str) -> tuple[int, str]:
    """A served page's HTTP status and text (an error page's too)."""
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(url, timeout=60) as r:
            return r.status, r.read().decode("utf-8")
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode("utf-8")


def base_project(root: Path) -> None:
    small_course(root, {"lesson.md": GOOD})
    write_traces(root / "traces", [lily_trace(), synthetic_trace(BEN)])


def build(root: Path, *extra: str) -> tuple[int, str]:
    """`python -m generator site -f mkdocs.yml -d site [extra]` in this process, in `root`."""
    from generator import cli

    logger = logging.getLogger("mkdocs")
    for h in [h for h in logger.handlers if getattr(h, "_course", False)]:
        logger.removeHandler(h)  # publish._setup_logging binds sys.stderr; rebind it to our capture
    err = io.StringIO()
    cwd = os.getcwd()
    os.chdir(root)
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(err):
            rc = cli.main(["site", "-f", "mkdocs.yml", "-d", str(root / "site"), *extra])
    finally:
        os.chdir(cwd)
        for h in [h for h in logger.handlers if getattr(h, "_course", False)]:
            logger.removeHandler(h)
    return rc, err.getvalue()


@pytest.fixture(scope="module")
def good_project(tmp_path_factory) -> Path:
    """A project that builds cleanly with --strict (so each case's failure is its mistake alone)."""
    root = tmp_path_factory.mktemp("catalogue-good")
    base_project(root)
    rc, log = build(root, "--strict")
    assert rc == 0, log
    assert (root / "site" / "lesson.html").is_file() and (root / "downloads" / "course-offline.zip").is_file()
    return root


def project_from(good: Path, root: Path) -> None:
    """A copy of the good project, with its built site (hard links: fast, and a build that wrote
    into a file in place would show up as a changed file)."""
    for name in ("content", "traces"):
        shutil.copytree(good / name, root / name)
    shutil.copy(good / "mkdocs.yml", root / "mkdocs.yml")
    shutil.copytree(good / "site", root / "site", copy_function=os.link)


def snapshot(root: Path) -> dict:
    generated = root / "content" / "assets" / "generated"
    return {
        "site": (tree_digest(root / "site"), tree_stat(root / "site")),
        "traces": (tree_digest(root / "traces"), tree_stat(root / "traces")),
        "generated": (tree_digest(generated), tree_stat(generated)),
        "top": sorted(p.name for p in root.iterdir()),
    }


def apply(case: Case, root: Path) -> None:
    if case.lesson is not None:
        (root / "content" / "lesson.md").write_text(case.lesson, encoding="utf-8")
    for rel, text in (case.files or {}).items():
        if isinstance(text, bytes):
            (root / rel).write_bytes(text)
        else:
            (root / rel).write_text(text, encoding="utf-8")


def assert_no_traceback(log: str) -> None:
    for sign in ("Traceback", 'File "'):
        assert sign not in log, f"Python frames in the output:\n{log}"


def error_lines(log: str) -> list[str]:
    """The log's lines without MkDocs' level prefix or our `error: ` prefix."""
    return [re.sub(r"^(?:ERROR|WARNING)\s+-\s+|^error: ", "", line) for line in log.splitlines()]


FAMILIES = ("options", "references", "files", "passages")


def family(case: "Case") -> str:
    """Which test file runs a site case: its directive's options, its prose references, the
    file around them (front matter, glossary, YAML, fences, encodings), or passages and traces
    that are missing. Split so that xdist spreads the catalogue over its workers."""
    cid = case.id
    if cid.startswith("ref-") or cid.startswith("homoglyph"):
        return "references"
    if cid.startswith(("front-matter", "glossary", "yaml", "fence", "lesson-not", "stx", "lone", "nul", "control", "duplicate-key")):
        return "files"
    if cid.startswith(("gpt2", "pending", "mark-", "sentence-changed", "missing-trace")):
        return "passages"
    return "options"


def cases_of(name: str) -> list:
    return [c for c in CASES if family(c) == name]


def run_site_case(case, good_project, tmp_path) -> None:
    """One case end to end: its one exact line, no frames, nothing written."""
    root = tmp_path / "project"
    root.mkdir()
    project_from(good_project, root)
    apply(case, root)
    before = snapshot(root)
    rc, log = build(root, *(["--strict"] if case.command == "strict" else []))
    assert rc != 0, f"the build passed:\n{log}"
    expected = case.line()
    assert expected in error_lines(log), f"expected the line\n  {expected}\nin the build log:\n{log}"
    assert not any(line.startswith("Error reading page") for line in error_lines(log)), "the mistake is one line, naming its file itself"
    assert_no_traceback(log)
    assert snapshot(root) == before, "the failed build changed site/, traces/ or content/assets/generated/ (or left a folder behind)"
