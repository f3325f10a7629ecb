"""The catalogue's mistakes in a directive's options, end to end through `python -m generator site` (tests/catalogue.py has the cases and what runs them)."""

from __future__ import annotations

import re
import sys

import pytest

from course_builds import run
from catalogue import CASES, FAMILIES, GOOD, TRACE_CASES, apply, build, cases_of, error_lines, good_project, line_of, project_from, run_site_case, snapshot

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("case", cases_of("options"), ids=lambda c: c.id)
def test_options_mistake_stops_the_build_with_one_exact_line_and_writes_nothing(case, good_project, tmp_path):
    run_site_case(case, good_project, tmp_path)


def test_every_case_is_run_by_one_family():
    assert sum(len(cases_of(f)) for f in FAMILIES) == len(CASES) and all(cases_of(f) for f in FAMILIES)


def test_the_catalogue_has_at_least_thirty_end_to_end_cases():
    assert len(CASES) + len(TRACE_CASES) >= 30
    assert len({c.id for c in CASES + TRACE_CASES}) == len(CASES) + len(TRACE_CASES)


def test_every_expected_line_names_the_file_and_line_and_says_how_to_fix_it():
    for case in CASES + TRACE_CASES:
        if case.expected is None:
            continue
        line = case.line()
        assert "\n" not in line
        assert re.match(r"^(?:content/[\w.]+|mkdocs\.yml)(?::\d+)?: ", line) or re.search(r" at content/[\w.]+:\d+\. ", line), line
        assert ". Fix: " in line or "? Fix: " in line or "Run `make traces`" in line, line


# ---------------------------------------------------------------- through subprocesses


def test_the_command_line_exits_non_zero_with_the_line_on_stderr(good_project, tmp_path):
    """Three cases through `python -m generator site` itself (exit status, stderr)."""
    for case in (CASES[1], CASES[19], CASES[-1]):  # a directive, a reference, a missing trace
        root = tmp_path / case.id
        root.mkdir()
        project_from(good_project, root)
        apply(case, root)
        before = snapshot(root)
        args = [sys.executable, "-m", "generator", "site", "-f", "mkdocs.yml", "-d", str(root / "site")]
        proc = run(args + (["--strict"] if case.command == "strict" else []), cwd=root, timeout=120)
        assert proc.returncode != 0, proc.stderr
        assert case.line() in error_lines(proc.stderr), proc.stderr
        assert snapshot(root) == before


def test_stale_trace_names_model_sentence_line_and_the_make_target(good_project, tmp_path):
    """The lesson's sentence changed after `make traces`: a plain build still succeeds (the
    figure shows a pending box) and names exactly what is missing; --strict fails on it."""
    root = tmp_path / "project"
    root.mkdir()
    project_from(good_project, root)
    text = GOOD.replace('sentences: ["Lily wanted to play with her", "Ben wanted to play with her"]',
                        'sentences: ["Lily wanted to play with her", "Ben wanted to play with his dog"]')
    (root / "content" / "lesson.md").write_text(text, encoding="utf-8")
    want = (f"tiny: 1 figure pending (1 sentence not traced) at content/lesson.md:{line_of(text, '```compare')}. "
            "Run `make traces` (the tiny model runs here in seconds).")
    before = snapshot(root)
    rc, log = build(root, "--strict")
    assert rc != 0 and want in error_lines(log), log
    assert snapshot(root) == before
    rc, log = build(root)
    assert rc == 0, log
    assert want in error_lines(log), log
    assert [line for line in error_lines(log) if "pending" in line] == [want], "only the stale figure is named"
    page = (root / "site" / "lesson.html").read_text(encoding="utf-8")
    # The page speaks to readers; what the author should run is in the build log (want, above).
    assert "Ben wanted to play with his dog" in page and "make traces" not in page


