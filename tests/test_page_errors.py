"""A page's mistakes all at once (issue 49): `make check`, `make site` and make serve's overlay say
every mistake of a page (up to lessons.errors.MAX_SHOWN), one line each with its file, line and
Fix, in line order, each once; a figure's own mistake is not said again by its references."""

from __future__ import annotations

from pathlib import Path

import pytest

from catalogue import GOOD, build, error_lines, good_project, line_of, project_from  # noqa: F401 (fixture)
from test_check import run_check

pytestmark = pytest.mark.slow

LAYER = "attention: layer 5 is out of range for tiny, which has layers 1 to 4. Fix: use a layer from 1 to 4 (counting from 1)"
SCORES = "softmax: 'scores' must hold 2 to 8 numbers, not 1. Fix: add or remove scores"


def three_mistakes() -> str:
    """A wrong layer in one figure, too few scores in another (both found by the parser alone),
    and a stepper's reference to a token it does not have (found as the page is rendered)."""
    text = GOOD.replace("layer: 3\n", "layer: 5\n", 1).replace("scores: [2, 1, 0]\nlabels: [Lily, ran, she]", "scores: [2]\nlabels: [Lily]")
    return text.replace("{{ st.score(she, Lily) }}", "{{ st.score(frisbee, Lily) }}")


def lesson_lines(log: str) -> list[str]:
    return [line for line in error_lines(log) if line.startswith("content/lesson.md:")]


@pytest.fixture()
def project(good_project, tmp_path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    project_from(good_project, root)
    return root


def test_check_says_every_mistake_of_a_page_one_line_each_in_line_order(project):
    text = three_mistakes()
    (project / "content" / "lesson.md").write_text(text, encoding="utf-8")
    rc, log = run_check(project)
    found = lesson_lines(log)
    assert rc == 1, log
    assert found[:2] == [f"content/lesson.md:{line_of(text, 'layer: 5')}: {LAYER}",
                         f"content/lesson.md:{line_of(text, 'scores: [2]')}: {SCORES}"], log
    assert len(found) == 3 and found[2].startswith(f"content/lesson.md:{line_of(text, 'st.score(frisbee')}: ") and "frisbee" in found[2], log
    assert all(". Fix: " in line for line in found) and "3 mistake(s)" in log and "Traceback" not in log


def test_site_says_every_mistake_found_as_the_page_is_rendered(project):
    """The parser's pass before MkDocs finds none of these: each is a reference to a token its
    figure does not have, found against the traces, and the build names all three."""
    text = GOOD.replace("{{ lily.weight(her, Lily) }}", "{{ lily.weight(stick, Lily) }}")
    text = text.replace("{{ sm.weight(Lily) }}", "{{ sm.weight(frisbee) }}").replace("{{ st.score(she, Lily) }}", "{{ st.score(she, ball) }}")
    (project / "content" / "lesson.md").write_text(text, encoding="utf-8")
    rc, log = build(project)
    found = lesson_lines(log)
    assert rc == 1, log
    assert [line.split(":")[1] for line in found] == [str(line_of(text, n)) for n in ("stick, Lily", "sm.weight(frisbee", "ball) }}")], log
    assert all(". Fix: " in line for line in found) and "stick" in found[0] and "frisbee" in found[1] and "ball" in found[2], log


def test_a_figures_mistake_is_not_said_again_by_its_references(project):
    text = GOOD.replace("layer: 3\n", "layer: 5\n", 1)  # lily: four references to it on the page
    (project / "content" / "lesson.md").write_text(text, encoding="utf-8")
    rc, log = run_check(project)
    assert rc == 1 and lesson_lines(log) == [f"content/lesson.md:{line_of(text, 'layer: 5')}: {LAYER}"], log


def test_many_mistakes_are_cut_at_ten_lines_with_a_count_of_the_rest(project):
    figure = "```softmax\nscores: [1]\n```\n\n"
    text = GOOD + "\n" + figure * 14
    (project / "content" / "lesson.md").write_text(text, encoding="utf-8")
    rc, log = run_check(project)
    found = lesson_lines(log)
    assert rc == 1 and len(found) == 10, log
    assert all(line.endswith(SCORES) for line in found[:9]), log
    assert found[9] == "content/lesson.md: and 5 more mistakes on this page. Fix: correct the ones above; the next build shows the rest", log


def test_site_prints_each_mistake_as_its_own_error_line(project):
    """The parser's pass before MkDocs and MkDocs' own error log: every line of a page's mistakes
    carries the prefix, so that an editor's problem matcher reads each one."""
    (project / "content" / "lesson.md").write_text(three_mistakes(), encoding="utf-8")
    rc, log = build(project)
    mine = [line for line in log.splitlines() if "content/lesson.md:" in line]
    assert rc == 1 and len(mine) == 2 and all(line.startswith("error: content/lesson.md:") for line in mine), log
    text = GOOD.replace("{{ sm.weight(Lily) }}", "{{ sm.weight(frisbee) }}").replace("{{ st.score(she, Lily) }}", "{{ st.score(she, ball) }}")
    (project / "content" / "lesson.md").write_text(text, encoding="utf-8")
    rc, log = build(project)
    mine = [line for line in log.splitlines() if "content/lesson.md:" in line]
    assert rc == 1 and len(mine) == 2 and all(line.startswith("ERROR   -  content/lesson.md:") for line in mine), log


def test_the_serve_overlay_shows_each_mistake_on_its_own_line():
    from generator.lessons.errors import LessonError
    from generator.markdown.build_errors import CourseBuildErrors
    from generator.site.build_overlay import BuildOverlay

    overlay = BuildOverlay()
    errors = [LessonError("content/a.md:3", "first <b>", "one"), LessonError("content/a.md:9", "second", "two")]
    line = overlay.failed(CourseBuildErrors(errors))
    html = overlay.inject(b"<html><body></body></html>").decode()
    assert line == "content/a.md:3: first <b>. Fix: one\ncontent/a.md:9: second. Fix: two"
    assert html.count('<li class="course-build-error-line"') == 2 and "first &lt;b&gt;. Fix: one</li>" in html and "content/a.md:9: second. Fix: two</li>" in html
    overlay.failed(CourseBuildErrors(errors[:1]))  # one mistake: its line, place and Fix as before
    html = overlay.inject(b"<body></body>").decode()
    assert '<p class="course-build-error-line"' in html and 'course-build-error-where" style="color:#ffd479">content/a.md:3</code>' in html


def test_make_traces_prints_each_mistake_of_a_page_with_its_prefix(tmp_path):
    import io

    from generator.model.trace_run import collect_items

    content = tmp_path / "content"
    content.mkdir()
    (content / "lesson.md").write_text(three_mistakes(), encoding="utf-8")
    err = io.StringIO()
    assert collect_items(content, [], ["tiny"], err=err) is None
    lines = err.getvalue().splitlines()
    assert len(lines) == 2 and all(line.startswith("error: content/lesson.md:") for line in lines), lines
    assert lines[0].endswith(LAYER) and lines[1].endswith(SCORES)
