"""generator.markdown.reading_path on planted pages, read in the nav's order: a glossary term
(or alias, or a term in a heading) used before the section that introduces it, a "Guess first"
answered above itself, and build words in reader text, each one line naming the file and line;
and the course itself passes all three. (tests/catalogue.py has the same mistakes through
`make check` and `make site`.)"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
import yaml

from generator.markdown import lesson, reading_path

REPO = Path(__file__).resolve().parents[1]

GLOSSARY = textwrap.dedent("""\
    token:
      definition: A piece of text the model reads.
      aliases: [tokens]
      introduced: one.md
    logit:
      definition: The score of a possible next token.
      aliases: [logits]
      introduced: two.md#scores
    logit lens:
      definition: Reading the guess early.
      introduced: two.md#early-guesses
    """)

NAV = [{"Home": "one.md"}, {"Chapter 5 · Scores": "two.md"}, {"Glossary": "glossary.md"}]

ONE = """\
# One

A token is a piece of text.

## More

Tokens come one at a time.
"""

TWO = """\
# Two

This page scores tokens.

## Scores

The score of a token before softmax is its logit.

## Early guesses

The logit lens reads the guess after each layer.
"""


def course(tmp_path: Path, pages: dict[str, str], glossary: str = GLOSSARY, nav=NAV) -> list[str]:
    docs = tmp_path / "content"
    docs.mkdir(exist_ok=True)
    (docs / "glossary.yml").write_text(glossary, encoding="utf-8")
    (docs / "glossary.md").write_text("# Glossary\n\nEvery logit and token.\n\n[[glossary]]\n", encoding="utf-8")
    for name, text in pages.items():
        (docs / name).write_text(text, encoding="utf-8")
    return [str(e) for e in reading_path.check_course(docs, nav, docs / "glossary.yml")]


def line(text: str, needle: str) -> int:
    return next(i for i, l in enumerate(text.split("\n"), 1) if needle in l)


def test_terms_in_order_pass(tmp_path):
    assert course(tmp_path, {"one.md": ONE, "two.md": TWO}) == []


def test_a_term_on_an_earlier_page_is_one_line_naming_the_chapter(tmp_path):
    one = ONE + "\nThe logit comes later.\n"
    errors = course(tmp_path, {"one.md": one, "two.md": TWO})
    assert errors == [
        f"{tmp_path / 'content' / 'one.md'}:{line(one, 'The logit comes')}: 'logit' is used here before chapter 5 introduces it "
        f"(two.md#scores). Fix: say it in other words here, or introduce it here in plain words and move its "
        f"`introduced:` ({tmp_path / 'content' / 'glossary.yml'}:8) to this section"]


def test_an_alias_counts_as_the_term(tmp_path):
    one = ONE + "\nIt has logits.\n"
    errors = course(tmp_path, {"one.md": one, "two.md": TWO})
    assert len(errors) == 1 and f"one.md:{line(one, 'It has logits')}: 'logits' is used here before chapter 5" in errors[0]


def test_a_term_in_a_heading_counts(tmp_path):
    two = TWO.replace("## Scores", "## Logits first\n\nSome words.\n\n## Scores")
    errors = course(tmp_path, {"one.md": ONE, "two.md": two})
    assert len(errors) == 1 and f"two.md:{line(two, '## Logits first')}: 'Logits' is used here above the section of this page that introduces it (#scores)" in errors[0]


def test_a_term_broken_across_two_lines_counts(tmp_path):
    two = TWO.replace("This page scores tokens.", "This page scores tokens.\n\n## Before\n\nA logit\nlens is coming.")
    errors = course(tmp_path, {"one.md": ONE, "two.md": two})
    assert [e.split(": ", 1)[1].split(". Fix")[0] for e in errors] == ["'logit lens' is used here above the section of this page that introduces it (#early-guesses)"]


def test_the_order_is_the_navs(tmp_path):
    """The same pages, the nav reversed: every use of a term of the later page is now early."""
    errors = course(tmp_path, {"one.md": ONE, "two.md": TWO}, nav=[{"Two": "two.md"}, {"One": "one.md"}])
    assert [e.split(": ", 1)[0].rsplit("/", 1)[1] for e in errors] == [f"two.md:{line(TWO, 'This page scores tokens')}"]
    assert "'tokens' is used here before the page \"One\" introduces it (one.md)" in errors[0]


def test_code_links_comments_fences_and_math_are_not_reader_uses(tmp_path):
    one = ONE + textwrap.dedent("""
        A `logit` in code, a [logit lens paper](https://example.org/logit), <!-- a logit -->
        and $\\mathrm{logit}$ and {{ model.tiny.nLayer }}.

        ```python
        logit = 1
        ```
        """)
    assert course(tmp_path, {"one.md": one, "two.md": TWO}) == []


def test_a_page_opening_may_name_what_the_page_introduces_and_a_syllabus_row_what_its_page_does(tmp_path):
    one = ONE + "\n| Chapter | What it covers |\n|---|---|\n| [Two](two.md) | logits and the logit lens |\n"
    two = TWO.replace("This page scores tokens.", "You will learn to read a logit and the logit lens.")
    assert course(tmp_path, {"one.md": one, "two.md": two}) == []
    # ... but a row about one page does not cover a later page's terms
    three = "# Three\n\n## Scores\n\nA logit, again.\n"
    row = ONE + "\n| Chapter | What it covers |\n|---|---|\n| [One](one.md) | logits |\n"
    errors = course(tmp_path, {"one.md": row, "two.md": TWO, "three.md": three}, nav=NAV + [{"Three": "three.md"}])
    assert len(errors) == 1 and "'logits' is used here before chapter 5" in errors[0]


@pytest.mark.parametrize("introduced, problem", [
    ("nowhere.md#x", "'logit' is introduced in nowhere.md, which is not a page of the course"),
    ("two.md#no-such", "'logit' is introduced in two.md#no-such, and two.md has no such section"),
    ("two.md#early-guesses", None),  # that section does say "logit lens", but never "logit" alone
    ("one.md#more", "'logit' is introduced in one.md#more, and that section never uses it"),
])
def test_the_introducing_section_must_exist_and_use_the_term(tmp_path, introduced, problem):
    errors = course(tmp_path, {"one.md": ONE, "two.md": TWO}, glossary=GLOSSARY.replace("introduced: two.md#scores", f"introduced: {introduced}"))
    if problem is None:
        assert len(errors) == 1 and "'logit' is introduced in two.md#early-guesses, and that section never uses it" in errors[0]
        return
    assert len(errors) == 1 and errors[0].startswith(f"{tmp_path / 'content' / 'glossary.yml'}:8: {problem}") and ". Fix: " in errors[0]


GUESS = """\
# Guess

```softmax
scores: [2, 1, 0]
labels: [Lily, ran, she]
id: sm
```

{above}

**Guess first.** Which label gets most?

```guess
choices:
  - {say: Lily, when: "sm.weight(she) < 0.5"}
  - {say: another, when: "sm.weight(she) >= 0.5"}
answer: "She gets less than half."
```

??? question "Show the answer"

    Lily, with {{ sm.weight(Lily) }}.

After the answer, {{ sm.weight(Lily) }} again.
"""


def test_a_question_without_choices_is_one_line(tmp_path):
    page = GUESS.replace("{above}", "").replace("```guess\nchoices:", "```text\nchoices:")
    errors = course(tmp_path, {"one.md": ONE, "two.md": TWO, "guess.md": page}, nav=NAV + [{"Guess": "guess.md"}])
    assert errors == [
        f"{tmp_path / 'content' / 'guess.md'}:{line(page, '**Guess first.**')}: this \"Guess first\" offers no choices: the reader can think "
        "a guess but never give it. Fix: add a `guess` block under it, before its answer, whose choices the traces grade "
        "(authoring.md, \"Let the reader give the guess\")"]


def test_a_question_answered_above_itself_is_one_line(tmp_path):
    page = GUESS.replace("{above}", "Lily gets {{ sm.weight(Lily) }}.").replace("with {{ sm.weight(Lily) }}", "with {{sm.weight( Lily )}}")
    errors = course(tmp_path, {"one.md": ONE, "two.md": TWO, "guess.md": page}, nav=NAV + [{"Guess": "guess.md"}])
    assert errors == [
        f"{tmp_path / 'content' / 'guess.md'}:{line(page, '**Guess first.**')}: this \"Guess first\" is answered above it: its answer's "
        f"{{{{ sm.weight(Lily) }}}} is shown at line {line(page, 'Lily gets')}. Fix: ask the question before that number, or give the number after the answer"]


@pytest.mark.parametrize("above", [
    "The figure sets the question up.",  # the figure above the question is its premise, not its answer
    "Ran gets {{ sm.weight(ran) }}.",  # another number of the same figure
])
def test_a_question_after_its_figure_but_before_its_numbers_passes(tmp_path, above):
    page = GUESS.replace("{above}", above)
    assert course(tmp_path, {"one.md": ONE, "two.md": TWO, "guess.md": page}, nav=NAV + [{"Guess": "guess.md"}]) == []


@pytest.mark.parametrize("text, word", [
    ("Run `make traces` to see it.", "make traces"),
    ("As the README says.", "README"),
    ("The chapter's source is gpt2.md.", "gpt2.md"),
    ("Files in `traces/` hold it.", "traces/"),
    ("Set COURSE_GPT2_PATH first.", "COURSE_GPT2_PATH"),
    ("Run python -m generator site.", "python -m"),
    ("<p>Built by make site.</p>", "make site"),
])
def test_build_words_in_reader_text_are_one_line(tmp_path, text, word):
    page = f"# Page\n\nSome words.\n\n{text}\n"
    errors = course(tmp_path, {"one.md": ONE, "two.md": TWO, "page.md": page}, nav=NAV + [{"Page": "page.md"}])
    assert len(errors) == 1, errors
    assert errors[0].startswith(f"{tmp_path / 'content' / 'page.md'}:5: reader text names ") and f"('{word}')" in errors[0]


def test_plain_words_and_link_targets_are_not_build_words(tmp_path):
    page = "# Page\n\nMake a guess, then [read chapter 2](two.md#scores) or [the notes](https://example.org/a.md).\n"
    assert course(tmp_path, {"one.md": ONE, "two.md": TWO, "page.md": page}, nav=NAV + [{"Page": "page.md"}]) == []


# ---------------------------------------------------------------- the course itself


def test_every_term_of_the_course_glossary_says_where_it_is_introduced():
    terms = lesson.load_glossary(REPO / "content" / "glossary.yml")
    assert [t.name for t in terms if not t.introduced] == []


def test_the_course_passes_in_its_nav_order():
    nav = yaml.load((REPO / "mkdocs.yml").read_text(encoding="utf-8"), Loader=_IgnoreTags)["nav"]
    assert reading_path.check_course(REPO / "content", nav, REPO / "content" / "glossary.yml") == []


def test_the_course_glossary_has_the_terms_a_newcomer_meets():
    names = {t.name.casefold() for t in lesson.load_glossary(REPO / "content" / "glossary.yml")}
    spellings = names | {a.casefold() for t in lesson.load_glossary(REPO / "content" / "glossary.yml") for a in t.aliases}
    for term in ("logit", "ablation", "activation patching", "direct logit attribution", "logit lens", "kl divergence",
                 "nat", "bit", "bits per character", "mlp", "composition", "noising", "denoising",
                 "unembedding", "circuit", "layer", "vector", "parameter"):
        assert term in spellings, term


class _IgnoreTags(yaml.SafeLoader):
    """mkdocs.yml's !ENV and !!python/name tags, read as plain values (only the nav is needed)."""


_IgnoreTags.add_multi_constructor("", lambda loader, suffix, node: None)
_IgnoreTags.add_multi_constructor("tag:yaml.org,2002:python/", lambda loader, suffix, node: None)


def test_the_notebooks_own_words_name_no_build_step_or_file():
    """The opening of every notebook and the note of a part whose traces are pending (the GPT-2
    notebook in a copy built without its weights) cited the README and the chapter's .md file."""
    from generator.notebooks import cells

    texts = [c.source for section in (cells.opening("Attention in GPT-2"), cells.pending("Queries and keys", "gpt2"))
             for c in section.cells if c.kind == "markdown"]
    found = [(what, m.group(0)) for text in texts for what, pattern in reading_path.BUILD_WORDS for m in pattern.finditer(text)]
    assert texts and found == []


def test_an_empty_page_and_a_page_of_only_a_figure_pass(tmp_path):
    pages = {"one.md": ONE, "two.md": TWO, "empty.md": "", "fig.md": "```softmax\nscores: [1, 0]\nlabels: [a, b]\n```\n"}
    assert course(tmp_path, pages, nav=NAV + [{"Empty": "empty.md"}, {"Figure": "fig.md"}]) == []


def test_the_zensical_build_stops_on_the_same_lines(tmp_path, monkeypatch, capsys):
    """`make site ENGINE=zensical` checks the learner's path before Zensical runs, as MkDocs' build does."""
    pytest.importorskip("zensical")
    from generator.site import zensical_build

    course(tmp_path, {"one.md": ONE + "\nThe logit comes later.\n", "two.md": TWO, "index.md": "# Home\n\nRun `make site`.\n"})
    nav = "nav:\n  - Home: index.md\n  - One: one.md\n  - Chapter 5 · Scores: two.md\n  - Glossary: glossary.md\n"
    # the repository's extensions (mkdocs.yml is checked for them first), with this folder's nav
    from conftest import test_mkdocs_yml

    base = test_mkdocs_yml().replace("markdown_extensions:\n", "markdown_extensions:\n  - generator.markdown.lesson:\n      glossary: content/glossary.yml\n", 1)
    (tmp_path / "mkdocs.yml").write_text(f"{base}\n{nav}", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert zensical_build.build_zensical(str(tmp_path / "mkdocs.yml"), site_dir="zsite") == 1
    lines = capsys.readouterr().err.splitlines()
    assert [l.split(": ", 2)[1] for l in lines] == ["content/index.md:3", "content/one.md:9"], lines
    assert "reader text names a make command ('make site')" in lines[0] and "'logit' is used here before chapter 5" in lines[1]
    assert not (tmp_path / "zsite").exists()


# The terms a screenshot review found named before they were explained in the first screen of two
# pages (at 1280 px): the page, and the terms as the glossary spells them or their aliases.
OPENING_TERMS = {"causal.md": ["MLP", "logit lens", "residual stream"],
                 "why-heads-look.md": ["MLP", "logit lens", "residual stream"]}


@pytest.mark.parametrize("page", sorted(OPENING_TERMS))
def test_a_pages_opening_explains_or_links_each_term_it_names(page):
    """In a page's opening (before its first section), the paragraph or list item that first names
    one of these terms links to the page that introduced it (content/glossary.yml `introduced:`);
    a term this page introduces further down is named in brackets, after what it means."""
    import re

    root = Path(__file__).resolve().parent.parent / "content"
    glossary = yaml.safe_load((root / "glossary.yml").read_text(encoding="utf-8"))
    text = (root / page).read_text(encoding="utf-8").split("\n---\n", 1)[-1]
    opening = text.split("\n## ", 1)[0]
    blocks = re.split(r"\n\s*\n|\n(?=\s*- )", opening)  # paragraphs and list items
    for term in OPENING_TERMS[page]:
        entry = next(e for name, e in glossary.items() if term in [name, *e.get("aliases", [])])
        spellings = [n for n, e in glossary.items() if e is entry] + entry.get("aliases", [])
        found = [b for b in blocks if any(re.search(rf"(?<![\w-]){re.escape(s)}(?![\w-])", " ".join(b.split())) for s in spellings)]
        if not found:
            continue
        block = " ".join(found[0].split())
        home = entry["introduced"].split("#")[0]
        if home == page:
            assert re.search(rf"\((?:the |a )?{re.escape(term)}\)", block), f"{page}: '{term}' is named before it is explained: {block[:120]}"
        else:
            assert f"]({home}" in block, f"{page}: '{term}' (introduced in {home}) is named without a link there: {block[:120]}"
