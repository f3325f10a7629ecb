"""Every file the build reads is checked as a regular file of bounded size before it is read: a
lesson, the glossary or a trace that is a FIFO (which would hang the build) or a symlink to
/dev/zero (which never ends) is one line naming the file, never a hang or a MemoryError."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conftest import LILY, lily_trace, write_traces
from generator.lessons import pages
from generator.lessons.errors import LessonError
from generator.lessons.source import read_source
from generator.markdown.lesson import load_glossary
from generator.store import DamagedFile, TraceStore

DEV_ZERO = Path("/dev/zero")
needs_dev_zero = pytest.mark.skipif(not DEV_ZERO.exists(), reason="no /dev/zero here")


def fifo(path: Path) -> Path:
    os.mkfifo(path)  # nothing ever writes: opening it to read would block
    return path


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_lesson_that_is_a_fifo_is_refused_without_opening_it(tmp_path):
    with pytest.raises(LessonError) as err:
        pages.parse_file(fifo(tmp_path / "lesson.md"), "content/lesson.md")
    assert str(err.value).startswith("content/lesson.md:1: is not a regular file") and "\n" not in str(err.value)


@needs_dev_zero
@pytest.mark.parametrize("name", ["lesson.md", "glossary.yml"])
def test_a_lesson_or_glossary_linked_to_dev_zero_is_refused(tmp_path, name):
    link = tmp_path / name
    link.symlink_to(DEV_ZERO)
    with pytest.raises(LessonError, match="is not a regular file"):
        pages.parse_file(link, f"content/{name}") if name.endswith(".md") else load_glossary(link)


def test_a_source_over_the_limit_is_refused(tmp_path):
    big = tmp_path / "big.md"
    big.write_bytes(b"x" * 101)
    with pytest.raises(LessonError, match="is 101 bytes, over the limit of 100"):
        read_source(big, "content/big.md", limit=100)
    assert read_source(big, "content/big.md", limit=101) == b"x" * 101


@needs_dev_zero
def test_a_trace_linked_to_dev_zero_is_damaged_not_missing(tmp_path):
    [path] = write_traces(tmp_path, [lily_trace()])
    path.unlink()
    path.symlink_to(DEV_ZERO)
    with pytest.raises(DamagedFile) as err:
        TraceStore(tmp_path).load("tiny", LILY)
    assert "is not a regular file" in str(err.value) and str(path.name) in str(err.value)


def test_the_store_and_the_asset_step_share_one_bounded_read(tmp_path):
    """render.asset_files.read_bytes is the store's read (one bounded read, not two copies): the same
    problem in the same words, only the error's kind and its fix differ; a missing file is 'is missing'."""
    from generator.render.asset_files import AssetError, read_bytes as asset_read
    from generator.store.files import read_bytes as store_read

    missing, folder = tmp_path / "gone.json", tmp_path / "dir"
    folder.mkdir()
    for path in (missing, folder):
        with pytest.raises(DamagedFile) as store_err:
            store_read(path, 100)
        with pytest.raises(AssetError) as asset_err:
            asset_read(path)
        assert store_err.value.problem == str(asset_err.value).split(": ", 1)[1].split(". Fix:")[0]
    assert store_err.value.problem.startswith("is not a regular file")
    with pytest.raises(DamagedFile, match=r"gone.json: is missing\. Fix"):
        store_read(missing, 100)
