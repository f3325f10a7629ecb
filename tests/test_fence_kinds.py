"""Fences that are not figures: a misspelled figure kind, or a figure's options under no kind, is a
one-line error at the fence (the catalogue runs these end to end); code that says so with a
language is code, whatever it holds; a glossary mistake names glossary.yml alone."""

from __future__ import annotations

import pytest

from generator.lessons import directives as D
from generator.lessons import pages
from generator.lessons.errors import LessonError

from catalogue import GLOSSARY, GOOD, build, error_lines, good_project, project_from  # noqa: F401 (fixture)

WHERE = "content/lesson.md:3"
ATTENTION_BODY = 'model: tiny\nsentence: "Lily wanted to play with her"\nlayer: 3\nhead: 3'


def refused(kind: str, body: str = "x = 1") -> str:
    with pytest.raises(LessonError) as info:
        D.check_code_fence(kind, body, WHERE)
    return str(info.value)


@pytest.mark.parametrize("typo, meant", [("atention", "attention"), ("predicitons", "predictions"), ("Compare", "compare"),
                                         ("scorebord", "scoreboard"), ("tokes", "tokens"), ("patchng", "patching")])
def test_a_kind_two_edits_from_a_figure_is_refused_with_the_figure_it_meant(typo, meant):
    assert refused(typo).startswith(f"{WHERE}: unknown figure kind '{typo}': did you mean {meant}? Fix: write ```{meant}, ")


@pytest.mark.parametrize("language", ["yaml", "text", "js", "python", "less", "markdown", "json", "console"])
def test_a_language_the_highlighter_knows_is_code_even_near_a_kind_or_holding_options(language):
    D.check_code_fence(language, ATTENTION_BODY, WHERE)  # `less` is one edit from `lens`


@pytest.mark.parametrize("kind", ["", "heatmap", "mermaid-ish"])
def test_a_figure_s_options_under_no_known_kind_are_refused(kind):
    message = refused(kind, ATTENTION_BODY)
    assert "holds the options of an attention figure. Fix: write ```attention, or, if it is code" in message


@pytest.mark.parametrize("body", ["", "just some words", "a: 1\nb: 2", "model: tiny", "- model: tiny\n- sentence: x", "{{ x }}: [", "key: *alias"])
def test_other_unnamed_fences_stay_code(body):
    D.check_code_fence("", body, WHERE)
    D.check_code_fence("output", body, WHERE)


def test_far_kinds_are_not_near_misses():
    assert D.edit_distance("atention", "attention") == 1 and D.edit_distance("predicitons", "predictions") == 2
    D.check_code_fence("plotting", "x", WHERE)  # 3 or more edits from every kind


def test_every_fence_of_the_course_is_a_figure_or_named_code(tmp_path):
    """The committed lessons pass (no false alarm), and a `yaml` example of a figure is code."""
    from generator.lessons.source import iter_markdown

    from course_builds import REPO

    assert sum(len(pages.parse_file(p)) for p in iter_markdown(REPO / "content")) > 30
    lesson = tmp_path / "lesson.md"
    lesson.write_text(GOOD + "\nAn example:\n\n```yaml\n" + ATTENTION_BODY + "\n```\n\n```text\n```atention\n```\n", encoding="utf-8")
    assert len(pages.parse_file(lesson, "content/lesson.md")) == 4


def test_a_glossary_mistake_names_glossary_yml_and_no_page(good_project, tmp_path):
    root = tmp_path / "project"
    root.mkdir()
    project_from(good_project, root)
    (root / "content" / "glossary.yml").write_text(GLOSSARY.replace("A rule that", "A rule: that"), encoding="utf-8")
    rc, log = build(root)
    assert rc != 0
    want = ("content/glossary.yml:5: malformed YAML: mapping values are not allowed here. Fix: write one `term:` "
            "per entry with an indented `definition:` line")
    assert want in error_lines(log), log
    assert ".md" not in log.replace("content/glossary.yml", ""), f"a page is named for the glossary's mistake:\n{log}"
