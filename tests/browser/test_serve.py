"""`make serve` (python -m generator serve) on a throwaway copy of the course, in Chromium: a saved new
sentence becomes a real heatmap without any other command, and a trace another process writes
into traces/ shows without touching the lesson. How fast is `make bench`'s business
(generator/bench/preview.py), not this file's."""

from __future__ import annotations

import subprocess
import sys

import pytest

from generator.bench.preview import copy_course, figure_shows, serving, write_lesson
from generator.store import TraceStore

pytestmark = [pytest.mark.browser, pytest.mark.slow]

NEW = "The little fox found a shiny key under the old bridge"
OTHER = "Ben put the yellow cup on the kitchen table"


@pytest.fixture
def course(tmp_path):
    root = copy_course(tmp_path / "course")
    for s in (NEW, OTHER):  # the test means something only while these are untraced
        assert not TraceStore(root / "traces").has("tiny", s)
    return root


@pytest.fixture
def open_served(browser):
    from .conftest import page_opener

    opened = []

    def open_(server):
        cm = page_opener(browser, {f"127.0.0.1:{server.port}"})
        opened.append(cm)
        return cm.__enter__()

    yield open_
    for cm in opened:
        cm.__exit__(None, None, None)


def test_a_saved_new_sentence_becomes_a_real_heatmap(course, open_served):
    lesson = course / "content" / "new-lesson.md"
    write_lesson(lesson, "Lily wanted to play with her")  # traced: the page starts with a real figure
    with serving(course) as server:
        w = open_served(server)()
        page = w.goto(f"{server.url}/new-lesson.html")
        page.wait_for_function(figure_shows("her"))
        write_lesson(lesson, NEW)  # the author saves; nothing else is run
        page.wait_for_function(figure_shows("bridge"), timeout=120000)
        log = server.log()
        assert TraceStore(course / "traces").has("tiny", NEW)
        assert f"traced {NEW!r} (content/new-lesson.md:3)" in log
        # the heatmap is the new trace's: its x axis is the sentence's tokens
        ticks = page.evaluate("document.querySelector('#fig-1 .js-plotly-plot')._fullLayout.xaxis.ticktext")
        assert any("bridge" in t for t in ticks) and not any("Lily" in t for t in ticks)
        # GPT-2 cannot be loaded here: said once, without a traceback, and its figures stay pending
        assert log.count("its figures stay pending boxes") <= 1 and "Traceback" not in log
        # the page's download link names downloads/, which only `make site` makes: a note says where
        href = page.get_attribute("a[download][href*='downloads/']", "href")
        got = w.context.request.get(f"{server.url}/{href.lstrip('./')}")
        assert got.status == 404 and "make site" in got.text() and "build/site/downloads/" in got.text()
        assert w.errors == []


def test_a_trace_written_by_another_process_shows_without_touching_the_lesson(course, open_served):
    lesson = course / "content" / "other.md"
    write_lesson(lesson, OTHER)
    with serving(course, ("--no-trace",)) as server:
        w = open_served(server)()
        page = w.goto(f"{server.url}/other.html", wait_painted=False)
        assert page.locator("#fig-1[data-pending]").count() == 1
        done = subprocess.run(
            [sys.executable, "-m", "generator", "traces", "--models", "tiny", "--content", str(course / "content"),
             "--traces-dir", str(course / "traces"), "--sentence", OTHER],
            capture_output=True, text=True, timeout=300,
        )
        assert done.returncode == 0, done.stderr[-2000:]
        page.wait_for_function(figure_shows("table"), timeout=120000)
        assert "torch" not in server.log()  # --no-trace: the server itself never traced
