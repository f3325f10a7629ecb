"""Every notebook runs, or the build says so: `make site` and `make check` run each lesson's
notebook as a learner's "Run all" does (its code cells in order, the exercises still None, then
the answers, each checked against the trace), in a fresh Python with numpy alone, from a folder
that holds its data/. A failure is a LessonError naming the lesson's line of the figure whose part
of the notebook failed.

A notebook that passed is not run again while its text and every data file it reads are the same
(:data:`CACHE`, by content hash), so a build pays only for the lessons that changed."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

from ..lessons.errors import LessonError
from .build import Notebook

CACHE = Path("build") / ".notebook-cache.json"  # digests of notebooks that ran, with their data
TIMEOUT_S = 300  # for all the notebooks of one build together; each takes a few seconds
# COURSE_RUN_NOTEBOOKS=0 writes the notebooks without running them: the test suite's builds read
# synthetic traces (made-up ids and queries), whose notebooks cannot agree with them.
SWITCH = "COURSE_RUN_NOTEBOOKS"
ANSWER_RE = r"(?m)^# --- (\S+)\n"  # how cells.answers_cell heads each answer

# Run in a fresh `python -I` (no PYTHONPATH, no user site: the notebook's own imports only). It
# reads [notebook text, ...] as JSON on stdin and writes one result per notebook as JSON on stdout:
# null, or [cell index, exercise name or null, "Error: message"]. The notebooks' own prints are
# kept from stdout.
RUNNER = r'''
import contextlib, io, json, re, sys, traceback

def run(text):
    nb = json.loads(text)
    scope = {"__name__": "__main__"}
    for n, cell in enumerate(nb["cells"]):
        if cell["cell_type"] != "code":
            continue
        source = "".join(cell["source"])
        answers = "answers" in cell.get("metadata", {}).get("tags", [])
        parts = re.split(ANSWER_RE, source) if answers else [source]
        named = [(None, parts[0])] + list(zip(parts[1::2], parts[2::2]))
        for name, code in named:
            try:
                with contextlib.redirect_stdout(io.StringIO()):
                    exec(compile(code, f"cell-{n:02d}", "exec"), scope)
            except BaseException as exc:
                last = str(exc).strip().splitlines()[-1:] or [""]
                return [n, name, f"{type(exc).__name__}: {last[0]}"[:300]]
    return None

texts = json.load(sys.stdin)
json.dump([run(t) for t in texts], sys.stdout)
'''.replace("ANSWER_RE", repr(ANSWER_RE))


class NotebookFailed(LessonError):
    """A lesson's notebook fails on Run all; str() is one line naming the figure's line."""

    page = ""  # the notebook's page, "attention.html"


def digest(nb: Notebook, folder: Path) -> str:
    h = hashlib.sha256(nb.text.encode("utf-8"))
    for name in nb.files:
        h.update(name.encode("utf-8") + b"\0" + hashlib.sha256((folder / "data" / name).read_bytes()).digest())
    return h.hexdigest()


def _read_cache(cache: Path | None) -> set[str]:
    try:
        data = json.loads(cache.read_text(encoding="utf-8")) if cache else []
    except (OSError, ValueError):
        return set()
    return {d for d in data if isinstance(d, str)} if isinstance(data, list) else set()


def _write_cache(cache: Path, passed: set[str]) -> None:
    """Atomically; a checkout where build/ cannot be written runs the notebooks every time."""
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        tmp = cache.with_name(f"{cache.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(sorted(passed)), encoding="utf-8")
        os.replace(tmp, cache)
    except OSError:
        pass


def failure_line(nb: Notebook, lesson: str, result: list) -> NotebookFailed:
    cell, exercise, error = result
    where = nb.answer_where.get(exercise) if exercise else (nb.where[cell] if cell < len(nb.where) else None)
    part = f"the answer to exercise {exercise!r}" if exercise else f"cell {cell}"
    return NotebookFailed(
        where or f"{lesson}:1",
        f"this figure's part of the lesson's notebook fails on Run all ({part}: {error})",
        "the figure's traces may be stale: run `make traces` (or `make check` to see which are missing); "
        "if it still fails, the notebook's code is at fault: report it with this line")


def run_notebooks(notebooks: list[Notebook], folder: Path, lessons: dict[str, str], cache: Path | None = CACHE) -> list[NotebookFailed]:
    """Run every notebook in `folder` (which holds them and their data/) that has not passed with
    these contents before. `lessons`: page -> the lesson's shown path, for a failure with no
    figure's line. Returns one NotebookFailed per notebook that fails (its .page set)."""
    if os.environ.get(SWITCH, "1") == "0":
        return []
    folder = Path(folder)
    passed = _read_cache(cache)
    todo = [(nb, digest(nb, folder)) for nb in notebooks]
    todo = [(nb, d) for nb, d in todo if d not in passed]
    if not todo:
        return []
    why = "timed out"
    folder.mkdir(parents=True, exist_ok=True)  # a notebook with no data files (its model's traces pending) wrote no folder
    try:
        out = subprocess.run([sys.executable, "-I", "-c", RUNNER], input=json.dumps([nb.text for nb, _ in todo]),
                             cwd=folder, capture_output=True, text=True, timeout=TIMEOUT_S)
        why = (out.stderr.strip().splitlines() or [f"exit status {out.returncode}"])[-1][:200]
        results = json.loads(out.stdout) if out.returncode == 0 else None
    except (subprocess.TimeoutExpired, ValueError):
        results = None
    if results is None:  # the runner itself failed: one line, naming the first lesson
        nb = todo[0][0]
        failed = NotebookFailed(f"{lessons.get(nb.page, nb.page)}:1", f"the lesson's notebook could not be run ({why})",
                                "run it yourself (build/site/notebooks/) to see where it stops")
        failed.page = nb.page
        return [failed]
    failures = []
    for (nb, d), result in zip(todo, results):
        if result is None:
            passed.add(d)
        else:
            failures.append(failure_line(nb, lessons.get(nb.page, nb.page), result))
            failures[-1].page = nb.page
    if cache is not None:
        _write_cache(cache, passed)
    return failures
