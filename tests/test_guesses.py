"""`guess` blocks (render/guess.py, lessons/guess_kind.py): a "Guess first" question's choices,
graded against the traces. Planted mistakes are one line at their file and line; the form is a
golden file; exactly one choice is right, decided by the figure's numbers, even when the figure
comes after the guess; a guess whose figure has no numbers leaves no form; the reading-path check
reads a guess's references as its answer."""

from __future__ import annotations

import json
import re
import textwrap

import pytest

from generator.lessons import directives as D
from generator.lessons.errors import LessonError
from generator.markdown.build_errors import CourseBuildError
from test_reading_path import GUESS, NAV, ONE, TWO, course, line
from test_render import check_golden, md_convert

SOFTMAX = "```softmax\nscores: [2, 1, 0]\nlabels: [Lily, ran, she]\nid: sm\n```\n"


def page(guess_body: str, figure: str = SOFTMAX) -> str:
    """A question, its guess, then the figure the guess reads: the figure comes after."""
    return ("# Guess\n\n**Guess first.** Which label gets most?\n\n```guess\n" + textwrap.dedent(guess_body)
            + "```\n\n" + figure + "\n??? question \"Show the answer\"\n\n    Lily, with {{ sm.weight(Lily) }}.\n")


BY_WHEN = """\
choices:
  - say: Lily
    when: ["sm.weight(Lily) > sm.weight(ran)", "sm.weight(Lily) > sm.weight(she)"]
  - say: ran
    when: ["sm.weight(ran) > sm.weight(Lily)", "sm.weight(ran) > sm.weight(she)"]
  - say: she
    when: ["sm.weight(she) > sm.weight(Lily)", "sm.weight(she) > sm.weight(ran)"]
answer: "Lily gets {{ sm.weight(Lily) }}, ran {{ sm.weight(ran) }}."
"""


def form_data(html: str) -> dict:
    m = re.search(r'<form class="course-guess".*?<script type="application/json" class="course-data">(.*?)</script>', html, re.S)
    assert m, "no guess form on the page"
    return json.loads(m.group(1))


def test_golden_guess_form_graded_by_a_figure_after_it(tmp_path, monkeypatch, update_golden):
    monkeypatch.chdir(tmp_path)
    out = md_convert(tmp_path, page(BY_WHEN))
    form = re.search(r'<form class="course-guess".*?</form>', out, re.S).group(0)
    check_golden("guess", form, update_golden)
    data = form_data(out)
    assert data["choices"] == ["Lily", "ran", "she"] and data["right"] == 0
    assert data["answer"] == "Lily gets 0.665, ran 0.245."  # the softmax's own numbers, filled in
    assert re.search(r"<form [^>]*\bhidden\b", form)  # without JavaScript: the question and its collapsed answer, as before


def test_the_right_choice_follows_the_numbers(tmp_path, monkeypatch):
    """The same guess on other scores picks another choice: the answer is not typed in."""
    monkeypatch.chdir(tmp_path)
    out = md_convert(tmp_path, page(BY_WHEN, SOFTMAX.replace("[2, 1, 0]", "[0, 1, 3]")))
    assert form_data(out)["right"] == 2


def test_right_names_the_choice_a_reference_writes(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    body = 'choices: [she, Lily]\nright: sm.weight(she)\nanswer: "x"\n'
    with pytest.raises(CourseBuildError) as e:  # 0.090 is no choice
        md_convert(tmp_path, page(body))
    assert str(e.value).startswith("content/page.md:5: guess: with these traces no choice is right (sm.weight(she) = 0.090). Fix: make exactly one choice right")


@pytest.mark.parametrize("body, message", [
    ('choises: [a, b]\nright: sm.weight(Lily)\nanswer: "x"\n', "c.md:7: guess: unknown option 'choises': did you mean choices? Fix: write `choices:`"),
    ('choices:\n  - {say: a, wehn: "sm.weight(Lily) > 0.5"}\n  - {say: b, when: "sm.weight(Lily) <= 0.5"}\nanswer: "x"\n',
     "c.md:7: guess: choices: unknown option 'wehn': did you mean when? Fix: write `when:`"),
    ('choices: [a, b]\nanswer: "x"\n', "c.md:7: guess: choice 'a' has no `when`. Fix: give each choice `say:` and `when:`"),
    ('choices: [{say: a, when: "sm.weight(Lily) >> 1"}, {say: b, when: "sm.weight(Lily) < 1"}]\nanswer: "x"\n',
     "c.md:7: guess: choices: condition 'sm.weight(Lily) >> 1' cannot be read. Fix: write `reference op value`"),
    ('choices: [{say: a, when: "1 < 2"}, {say: b, when: "sm.weight(Lily) < 1"}]\nanswer: "x"\n',
     "c.md:7: guess: choices: condition '1 < 2' reads no reference, so the traces cannot decide it."),
    ('choices: [a]\nright: sm.weight(Lily)\nanswer: "x"\n', "c.md:7: guess: 'choices' must be a list of 2 to 6 choices."),
    ('choices: [a, a]\nright: sm.weight(Lily)\nanswer: "x"\n', "c.md:7: guess: a choice is listed twice."),
    ('choices: [a, b]\nright: sm.weight(Lily)\nanswer: "{{ sm.weight(Lily) "\n', "c.md:9: guess: a `{{` in 'answer' is never closed."),
    ('choices: [a, b]\nright: "not a ref"\nanswer: "x"\n', "c.md:8: guess: 'right' 'not a ref' is not a reference."),
])
def test_planted_mistakes_are_one_line(body, message):
    with pytest.raises(LessonError) as e:
        D.parse_directive("guess", body, "c.md:6")
    got = str(e.value)  # the fence is line 6: each mistake is on its option's own line
    assert got.startswith(message), got
    assert "\n" not in got and "Traceback" not in got


def test_two_right_choices_stop_the_build_at_the_guess(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    body = 'choices:\n  - {say: a, when: "sm.weight(Lily) > 0.5"}\n  - {say: b, when: "sm.weight(Lily) > 0.1"}\nanswer: "x"\n'
    with pytest.raises(CourseBuildError) as e:
        md_convert(tmp_path, page(body))
    assert str(e.value).startswith("content/page.md:5: guess: with these traces 'a' and 'b' are both right (sm.weight(Lily) = 0.665).")


def test_a_guess_whose_figure_has_no_numbers_leaves_no_form(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    figure = ('```attention\nmodel: gpt2\nsentence: "Lily wanted to play with her"\nlayer: 1\nhead: 1\nid: sm\n```\n')
    body = 'choices: [Lily, ·her]\nright: sm.argmax(her)\nanswer: "x"\n'
    out = md_convert(tmp_path, page(body, figure).replace("    Lily, with {{ sm.weight(Lily) }}.\n", "    Lily.\n"))
    assert "course-guess" not in out and "Show the answer" in out


def test_a_guess_answered_above_itself_is_one_line(tmp_path):
    text = GUESS.replace("{above}", "Lily gets {{ sm.weight(Lily) }}.").replace('answer: "She gets less than half."', 'answer: "Lily gets {{ sm.weight(Lily) }}."')
    text = text.replace("    Lily, with {{ sm.weight(Lily) }}.", "    Lily.")  # only the guess gives the number
    errors = course(tmp_path, {"one.md": ONE, "two.md": TWO, "guess.md": text}, nav=NAV + [{"Guess": "guess.md"}])
    assert errors == [
        f"{tmp_path / 'content' / 'guess.md'}:{line(text, '**Guess first.**')}: this \"Guess first\" is answered above it: its answer's "
        f"{{{{ sm.weight(Lily) }}}} is shown at line {line(text, 'Lily gets {{')}. Fix: ask the question before that number, or give the number after the answer"]
