"""The catalogue's lesson mistakes through `python -m generator traces`: one line each, and the store untouched (tests/catalogue.py)."""

from __future__ import annotations

import re
import shutil

import pytest

from conftest import lily_trace, write_traces
from course_builds import run, traces_command
from pathlib import Path
from catalogue import error_lines, GOOD, TRACE_CASES, apply, assert_no_traceback, line_of, snapshot

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def traces_project(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("catalogue-traces")
    (root / "content").mkdir()
    (root / "content" / "lesson.md").write_text(GOOD, encoding="utf-8")
    write_traces(root / "traces", [lily_trace()])
    return root


@pytest.mark.parametrize("case", TRACE_CASES, ids=[c.id for c in TRACE_CASES])
def test_a_lesson_mistake_stops_make_traces_with_one_line_and_the_store_is_untouched(case, traces_project, tmp_path):
    root = tmp_path / "project"
    shutil.copytree(traces_project, root)
    apply(case, root)
    before = snapshot(root)
    proc = run(traces_command("--traces-dir", str(root / "traces"), "--content", str(root / "content")), cwd=root, timeout=240)
    assert proc.returncode == case.traces_exit, proc.stdout + proc.stderr
    assert_no_traceback(proc.stdout + proc.stderr)
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert all(line.startswith("error: ") for line in lines if line.startswith("content/")), "every mistake says error:, as check and site do"
    lines = error_lines("\n".join(lines))
    if case.expected is None:  # over the context: the token count depends on the tokenizer
        where = f"content/lesson.md:{line_of(case.lesson, case.at)}: "
        hits = [line for line in lines if line.startswith(where)]
        assert len(hits) == 1, proc.stderr
        assert re.match(
            re.escape(where) + r"tiny: 'Lily ran\. Lily ran\. Lily ran\. Lily ran\. '… is \d+ tokens, longer than tiny's context of 256 tokens\. Fix: ",
            hits[0]), hits[0]
        assert hits[0].endswith(". Fix: shorten the sentence to at most 256 tokens"), hits[0]
        assert snapshot(root)["traces"] == before["traces"], "a failed trace run changed the store"
        return
    else:
        assert case.line() in lines, proc.stderr
    assert snapshot(root)["traces"] == before["traces"], "a failed trace run changed the store"
