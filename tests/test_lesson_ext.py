"""generator.markdown.lesson: glossary pop-ups, the glossary page, reading time and its one-line errors."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

import markdown
import pytest
from generator.markdown import lesson
from generator.lessons.errors import LessonError


REPO = Path(__file__).resolve().parents[1]

GLOSSARY = textwrap.dedent("""\
    token:
      definition: A piece of text the model reads.
      aliases: [tokens]
    attention:
      definition: How a token gathers information.
    attention head:
      definition: One attention unit.
      aliases: [attention heads, heads, head]
    softmax: Turns scores into weights.
    """)


def convert(text: str, tmp_path: Path, glossary: str = GLOSSARY, name: str = "page.md") -> str:
    content = tmp_path / "content"
    content.mkdir(exist_ok=True)
    (content / "glossary.yml").write_text(glossary, encoding="utf-8")
    (content / name).write_text(text, encoding="utf-8")
    md = markdown.Markdown(extensions=[
        lesson.LessonExtension(glossary=str(content / "glossary.yml"), content_dir=str(content)),
        "pymdownx.superfences", "tables",
    ])
    return md.convert(text)


def marked(html: str) -> list[tuple[str, str]]:
    """(slug, text) of every marked term, in order."""
    return re.findall(r'<a class="course-term" href="glossary\.md#([\w-]+)"><abbr title="[^"]*">([^<]*)</abbr></a>', html)


def test_first_appearance_in_each_section_is_marked(tmp_path):
    html = convert(textwrap.dedent("""\
        # Title

        A token and another token.

        ## One

        Each token looks back. Tokens again, and attention heads.

        ## Two

        Softmax, then softmax again, and one token.
        """), tmp_path)
    assert marked(html) == [
        ("token", "token"),  # intro section
        ("token", "token"), ("attention-head", "attention heads"),  # "One": longest spelling wins
        ("softmax", "Softmax"), ("token", "token"),  # "Two"
    ]
    assert 'title="A piece of text the model reads."' in html


def test_not_marked_inside_code_links_headings_or_figures(tmp_path):
    html = convert(textwrap.dedent("""\
        ## The token section

        `token` in code, [a token link](other.md), and `the token`.

        <figure class="course-fig"><p>A token in a figure.</p></figure>

        | a token | table |
        |---|---|
        | token | cell |

        ```
        token in a fence
        ```

        Finally a token in prose.
        """), tmp_path)
    assert marked(html) == [("token", "token")]
    assert "Finally a " + '<a class="course-term"' in html
    assert "<h2>The token section</h2>" in html or 'The token section</h2>' in html
    assert "<code>token</code>" in html


def test_several_terms_in_one_text_keep_the_text_between_them(tmp_path):
    html = convert("Softmax gives a token its attention weights.\n", tmp_path)
    text = re.sub(r"<[^>]+>", "", html)
    assert text == "Softmax gives a token its attention weights."
    assert [s for s, _ in marked(html)] == ["softmax", "token", "attention"]


def test_glossary_page_lists_every_term_sorted_with_anchors(tmp_path):
    html = convert("# Glossary\n\nEvery token, defined.\n\n[[glossary]]\n", tmp_path, name="glossary.md")
    headings = re.findall(r'<h2 id="([\w-]+)">([^<]+)</h2>', html)
    assert headings == [("attention", "Attention"), ("attention-head", "Attention head"), ("softmax", "Softmax"), ("token", "Token")]
    assert "Also written" not in html and "heads, head" not in html and "course-aliases" not in html  # no inflection list
    assert '<p>One attention unit.</p>' in html
    assert "Turns scores into weights." in html
    assert marked(html) == []  # no pop-ups on the glossary itself


def test_the_real_glossary_loads_and_has_the_course_terms():
    terms = {t.name for t in lesson.load_glossary(REPO / "content" / "glossary.yml")}
    for needed in ("attention", "token", "query", "key", "value", "dot product", "softmax", "causal mask",
                   "attention head", "transformer", "induction head", "attention sink", "causal attention", "GPT-2"):
        assert needed in terms


def test_reading_time_follows_the_words(tmp_path):
    page = "# T\n\nRead in {{ page.minutes }} min, {{ page.words }} words.\n\n"
    short = convert(page + "word " * 100, tmp_path)
    long = convert(page + "word " * 1000, tmp_path)
    n_short = int(re.search(r"(\d+) words", short).group(1))
    n_long = int(re.search(r"(\d+) words", long).group(1))
    assert n_long - n_short == 900
    m_short = int(re.search(r"Read in (\d+) min", short).group(1))
    m_long = int(re.search(r"Read in (\d+) min", long).group(1))
    assert m_short == 1 and m_long == 6  # (1 + 4 + 1000 words) / 200 per minute, rounded up


def test_reading_time_counts_figures_and_skips_markup():
    rt = lesson.reading_time(textwrap.dedent("""\
        One two [three](https://example.com/a-long-url) {{ lily.weight(her, Lily) }} $x_i^2$ <b>four</b>

        ```attention
        model: tiny
        sentence: "Lily wanted to play with her"
        ```

        $$
        \\mathbf{o}_i = \\sum_j a_{ij}
        $$
        """))
    assert (rt.words, rt.figures, rt.formulas) == (6, 1, 1)


def test_reading_time_counts_one_view_per_section():
    """A reader opens the first tab of a set (Story), not all four: the other tabs' words, figures
    and formulas are not counted, the text after the set is."""
    one = lambda word, n: " ".join([word] * n)  # noqa: E731
    rt = lesson.reading_time(textwrap.dedent(f"""\
        Intro {one("intro", 9)}

        === "Story"

            {one("story", 20)}

        === "Numbers"

            {one("numbers", 500)}

            ```attention
            model: tiny
            sentence: "Lily wanted to play with her"
            ```

        === "Formula"

            $$
            x = y
            $$

        After {one("after", 4)}

        ```softmax
        scores: [1, 0, 0]
        ```

        === "Story"

            {one("second", 7)}

            === "Inner"

                {one("inner", 3)}

            === "Inner two"

                {one("hidden", 100)}

            {one("back", 2)}

        === "Code"

            {one("code", 300)}
        """))
    assert (rt.words, rt.figures, rt.formulas) == (10 + 20 + 5 + 7 + 3 + 2, 1, 0)


def test_reading_time_of_the_attention_chapter_is_one_view():
    """The chapter's four tabs per section used to count in full (24 min and more)."""
    from generator.lessons.source import split_front_matter

    body, _ = split_front_matter((REPO / "content" / "attention.md").read_text(encoding="utf-8"), "content/attention.md")
    every_tab = lesson.reading_time(re.sub(r"(?m)^=== ", "", body).replace("\n    ", "\n"))
    assert lesson.reading_time(body).minutes < 0.75 * every_tab.minutes


def test_page_references_in_code_are_left_alone(tmp_path):
    html = convert("Time: {{ page.minutes }}, code: `{{ page.minutes }}`\n", tmp_path)
    assert "Time: 1," in html
    assert "<code>{{ page.minutes }}</code>" in html


def test_unknown_page_reference_is_one_line_with_file_and_line(tmp_path):
    with pytest.raises(LessonError) as e:
        convert("# T\n\nx\n\n{{ page.hours }}\n", tmp_path)
    assert str(e.value).startswith("content/page.md:5: unknown page reference {{ page.hours }}") or \
        re.match(r".*page\.md:5: unknown page reference \{\{ page\.hours \}\}\. Fix: use one of", str(e.value))
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("glossary, line, problem", [
    ("token:\n  definition: ok\n  aliases: [tokens\n", 4, "malformed YAML"),
    ("token:\n  definition: ok\nsoftmax:\n  aliases: [softmaxes]\n", 3, "term 'softmax' has no definition"),
    ("token:\n  definition: ok\nkey:\n", 3, "term 'key' has no definition"),
    ("token:\n  definition: ok\nvalue: v\ntoken:\n  definition: again\n", 4, "term 'token' is defined twice (first at line 1, as 'token')"),
    ("token:\n  definition: ok\nTOKEN: again\n", 3, "term 'TOKEN' is defined twice"),
    ("token:\n  definition: ok\n  aliases: [tokens]\nword:\n  definition: w\n  aliases: [tokens]\n", 6, "alias 'tokens' of 'word' is already used by 'token' (line 3)"),
    ("token:\n  definition: ok\n  see: other\n", 3, "term 'token': unknown field 'see'"),
    ("token:\n  definition: ok\n  introduced: chapter 5\n", 3, "term 'token': `introduced` must name a page and a section"),
    ("- token\n- key\n", 1, "the glossary must be a mapping"),
    ("token:\n  definition: ok\n5: five\n", 3, "term '5' has no letter"),
    ("token:\n  definition: ok\n  aliases: [1, 2]\n", 3, "term 'token': the alias '1' has no letter"),
    ("", 1, "the glossary is empty"),
])
def test_bad_glossary_is_one_line_naming_file_and_line(tmp_path, glossary, line, problem):
    with pytest.raises(LessonError) as e:
        convert("A token.\n", tmp_path, glossary=glossary)
    msg = str(e.value)
    assert "\n" not in msg
    assert re.match(rf"^.*content/glossary\.yml:{line}: ", msg), msg
    assert problem in msg and ". Fix: " in msg


def test_front_matter_is_removed_or_reported(tmp_path):
    html = convert("---\ndescription: fine\n---\n\nA token.\n", tmp_path)
    assert "description" not in html and marked(html) == [("token", "token")]
    with pytest.raises(LessonError) as e:
        convert("---\ndescription: [unclosed\n---\n\nA token.\n", tmp_path)
    assert re.match(r"^.*content/page\.md:\d+: front matter: malformed YAML", str(e.value)), str(e.value)
    with pytest.raises(LessonError) as e:
        convert("---\ndescription: never closed\n\nA token.\n", tmp_path)
    assert re.match(r"^.*content/page\.md:1: the front matter that starts here is never closed", str(e.value))


def test_a_broken_glossary_fails_mkdocs_build(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "index.md").write_text("# Home\n\nA token.\n", encoding="utf-8")
    (docs / "glossary.yml").write_text("token:\n  aliases: [tokens]\n", encoding="utf-8")
    (tmp_path / "mkdocs.yml").write_text(textwrap.dedent(f"""\
        site_name: t
        docs_dir: docs
        site_dir: {tmp_path / 'site'}
        markdown_extensions:
          - generator.markdown.lesson:
              glossary: {docs / 'glossary.yml'}
              content_dir: {docs}
        """), encoding="utf-8")
    run = subprocess.run([sys.executable, "-m", "mkdocs", "build", "-q", "-f", str(tmp_path / "mkdocs.yml")],
                         cwd=REPO, capture_output=True, text=True, timeout=120)
    assert run.returncode != 0
    assert "glossary.yml:1: term 'token' has no definition. Fix: add an indented `definition:" in run.stderr + run.stdout
