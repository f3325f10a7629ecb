"""Every bounded reader, on any kind of file at the path it reads (a regular file of any size and
bytes, an empty one, a folder, a FIFO, a link to /dev/zero, to a regular file, dangling or in a
loop): either a correct read or one clear line naming the file. Never a hang (a FIFO is never
opened), never a MemoryError, never another exception."""

from __future__ import annotations

import json
import os
import signal
import tempfile
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from generator import tokens
from generator.lessons.errors import LessonError
from generator.lessons.source import read_source
from generator.model import checkpoint
from generator.store.files import DamagedFile, read_bytes, read_json

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo") or not Path("/dev/zero").exists(), reason="needs FIFOs and /dev/zero")

LIMIT = 64
KINDS = ("regular", "empty", "folder", "fifo", "dev-zero", "link-to-regular", "dangling", "loop")


@contextmanager
def no_hang(seconds: int = 10):
    def stop(*_):
        raise TimeoutError("the reader blocked")

    old = signal.signal(signal.SIGALRM, stop)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def make(path: Path, kind: str, data: bytes) -> bytes | None:
    """Put a file of `kind` at path; the bytes a correct read returns, or None when none exists."""
    if kind in ("regular", "link-to-regular", "empty"):
        body = b"" if kind == "empty" else data
        target = path if kind != "link-to-regular" else path.with_name(path.name + ".target")
        target.write_bytes(body)
        if kind == "link-to-regular":
            path.symlink_to(target)
        return body
    if kind == "folder":
        path.mkdir()
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev-zero":
        path.symlink_to("/dev/zero")
    elif kind == "dangling":
        path.symlink_to(path.with_name("nowhere"))
    elif kind == "loop":
        path.symlink_to(path)
    return None


def one_line(message: str, path: Path) -> None:
    assert "\n" not in message and str(path.name) in message, message


cases = st.tuples(st.sampled_from(KINDS), st.binary(max_size=2 * LIMIT))
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@SETTINGS
@given(case=cases)
def test_the_store_read_is_correct_or_one_line(case):
    kind, data = case
    with tempfile.TemporaryDirectory() as d, no_hang():
        path = Path(d) / "index.json"
        want = make(path, kind, data)
        try:
            got = read_bytes(path, LIMIT)
        except DamagedFile as exc:
            one_line(str(exc), path)
            assert want is None or len(want) > LIMIT, f"{kind} of {len(want)} bytes refused: {exc}"
        else:
            assert want is not None and got == want and len(got) <= LIMIT


@SETTINGS
@given(case=cases)
def test_a_json_read_is_the_value_or_one_line(case):
    kind, data = case
    with tempfile.TemporaryDirectory() as d, no_hang():
        path = Path(d) / "heads.json"
        want = make(path, kind, data)
        try:
            value = read_json(path, LIMIT)
        except DamagedFile as exc:
            one_line(str(exc), path)
        else:
            assert want is not None and value == json.loads(want.decode("utf-8"))


@SETTINGS
@given(case=cases)
def test_a_lesson_read_is_correct_or_one_line_at_its_line_1(case):
    kind, data = case
    with tempfile.TemporaryDirectory() as d, no_hang():
        path = Path(d) / "lesson.md"
        want = make(path, kind, data)
        try:
            got = read_source(path, "content/lesson.md", limit=LIMIT)
        except LessonError as exc:
            assert str(exc).startswith("content/lesson.md:1: ") and "\n" not in str(exc)
            assert want is None or len(want) > LIMIT
        else:
            assert got == want


@SETTINGS
@given(case=cases)
def test_a_tokenizer_file_is_usable_or_named(case):
    kind, data = case
    with tempfile.TemporaryDirectory() as d, no_hang():
        path = Path(d) / "tokenizer.json"
        want = make(path, kind, data)
        problem = tokens.file_problem(path)
        assert (problem is None) == (want is not None), (kind, problem)


TINY = checkpoint.CONFIG_FILES["tiny"].parent


@SETTINGS
@given(case=cases, odd=st.sampled_from(["config.json", "model.safetensors"]))
def test_a_checkpoint_file_of_any_kind_is_a_problem_named_in_one_line(case, odd):
    """The other file of the folder is the committed tiny one, so every case is a problem: one
    line naming the odd file, and the check never opens a FIFO or reads /dev/zero to its end."""
    kind, data = case
    with tempfile.TemporaryDirectory() as d, no_hang():
        folder = Path(d)
        for name in ("config.json", "model.safetensors"):
            if name == odd:
                make(folder / name, kind, data)
            else:
                os.symlink(TINY / name, folder / name)
        problem = checkpoint.checkpoint_problem("tiny", folder)
        assert problem is not None
        one_line(problem, folder / odd)
