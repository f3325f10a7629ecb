"""`python -m generator check` (make check): every catalogue mistake found without building the
site, as the same one line, with a non-zero exit; the committed course passes; nothing is
written but its cache, which never hides a change (tests/catalogue.py has the cases)."""

from __future__ import annotations

import contextlib
import io
import logging
import os
import shutil
import sys
from pathlib import Path

import pytest
import yaml

from catalogue import CASES, GOOD, apply, error_lines, good_project, project_from, snapshot  # noqa: F401 (fixture)
from course_builds import REPO, run

pytestmark = pytest.mark.slow


def run_check(root: Path, *extra: str) -> tuple[int, str]:
    """`python -m generator check [extra]` in this process, in `root` (as catalogue.build runs site)."""
    from generator import cli

    logger = logging.getLogger("mkdocs")
    for h in [h for h in logger.handlers if getattr(h, "_course", False)]:
        logger.removeHandler(h)
    err = io.StringIO()
    cwd = os.getcwd()
    os.chdir(root)
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(err):
            rc = cli.main(["check", *extra])
    finally:
        os.chdir(cwd)
        for h in [h for h in logger.handlers if getattr(h, "_course", False)]:
            logger.removeHandler(h)
    return rc, err.getvalue()


@pytest.fixture(scope="module")
def checked_project(good_project, tmp_path_factory):
    root = tmp_path_factory.mktemp("check-good")
    project_from(good_project, root)
    rc, log = run_check(root, "--strict")
    assert rc == 0 and "check: 3 page(s), no mistakes" in log, log
    return root


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_check_finds_every_catalogue_mistake_as_the_build_says_it(case, checked_project, tmp_path):
    root = tmp_path / "project"
    root.mkdir()
    project_from(checked_project, root)
    apply(case, root)
    before = snapshot(root)
    rc, log = run_check(root, *(["--strict"] if case.command == "strict" else []))
    assert rc == 1, f"check passed:\n{log}"
    assert case.line() in error_lines(log), f"expected\n  {case.line()}\nin\n{log}"
    assert "Traceback" not in log and 'File "' not in log
    after = snapshot(root)
    after["top"] = [name for name in after["top"] if name != "build"]  # its caches alone (pages, notebooks)
    assert after == before, "check wrote into site/, traces/ or content/"
    assert not (root / "build").exists() or {p.name for p in (root / "build").iterdir()} <= {".check-cache.json", ".notebook-cache.json"}


def test_the_cache_never_hides_a_change_to_what_a_page_reads(checked_project, tmp_path):
    """A page that passed is skipped while nothing it reads changed; a trace removed, a glossary
    or a page edited is checked again."""
    root = tmp_path / "project"
    root.mkdir()
    project_from(checked_project, root)
    assert run_check(root)[0] == 0 and (root / "build" / ".check-cache.json").is_file()
    (root / "content" / "lesson.md").write_text(GOOD.replace("{{ lily.layer }}", "{{ lilly.layer }}"), encoding="utf-8")
    assert run_check(root)[0] == 1
    (root / "content" / "lesson.md").write_text(GOOD, encoding="utf-8")
    assert run_check(root)[0] == 0
    # the store changes under an unchanged page: its references have no number now
    shutil.rmtree(root / "traces" / "tiny")
    rc, log = run_check(root)
    assert rc == 1 and "content/lesson.md:17: reference {{ lily.layer }} has no number in this build" in log, log


def test_a_mistake_in_a_file_every_page_reads_is_one_line_counted_once(checked_project, tmp_path):
    """A glossary term defined twice breaks every page that reads the glossary: one line, one mistake."""
    root = tmp_path / "project"
    root.mkdir()
    project_from(checked_project, root)
    glossary = root / "content" / "glossary.yml"
    glossary.write_text(glossary.read_text(encoding="utf-8") + "token:\n  definition: Again.\n", encoding="utf-8")
    rc, log = run_check(root, "--no-cache")
    errors = [line for line in log.splitlines() if line.startswith("error: ")]
    assert rc == 1 and len(errors) == 1 and "is defined twice" in errors[0] and "check: 3 page(s), 1 mistake(s)" in log, log


def test_the_committed_course_passes_and_the_command_line_exits_non_zero_on_a_mistake(tmp_path, good_project):
    proc = run([sys.executable, "-m", "generator", "check", "--no-cache"], cwd=REPO, timeout=300)
    assert proc.returncode == 0, proc.stderr
    from generator.lessons.source import iter_markdown

    pages = len(iter_markdown(REPO / "content"))  # every lesson of the course, whatever their number
    assert f"check: {pages} page(s), no mistakes" in proc.stderr, proc.stderr
    root = tmp_path / "project"
    root.mkdir()
    project_from(good_project, root)
    (root / "content" / "lesson.md").write_text(GOOD.replace("```attention\n", "```atention\n"), encoding="utf-8")
    proc = run([sys.executable, "-m", "generator", "check", "content/lesson.md"], cwd=root, timeout=300)
    assert proc.returncode == 1
    assert "content/lesson.md:9: unknown figure kind 'atention': did you mean attention?" in proc.stderr, proc.stderr


def test_make_check_and_the_pre_commit_hook_run_the_check():
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    assert "\ncheck: " in makefile and "-m generator check" in makefile.split("\ncheck: ", 1)[1].split("\n\n", 1)[0]
    hooks = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    hook = next(h for h in hooks if h["id"] == "course-check")
    assert "generator check" in hook["entry"] and hook["language"] in ("system", "python")
    assert hook["pass_filenames"] is False and "content/" in hook["files"]
