"""Crash safety: `python -m generator traces` killed (SIGKILL) part-way leaves a store that still
loads, and a rerun completes it; `make site` killed at any stage leaves nothing behind once the
next build has run."""

from __future__ import annotations

import json
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from course_builds import REPO, env, run, traces_command, tree_digest

from generator.site import publish
from generator.store import TraceStore

pytestmark = pytest.mark.slow

SENTENCES = [
    "Lily wanted to play with her ball.",
    "Ben saw a big red dog in the park.",
    "The cat sat on the mat and looked at the sun.",
    "Tom and Sue ran to the river to see the fish.",
    "Mom gave Lily a warm hug before bed.",
]


def trace_files(model_dir: Path) -> list[Path]:
    return [p for p in model_dir.glob("*.json") if p.name not in ("index.json", "heads.json")]


def temp_files(model_dir: Path) -> list[Path]:
    return [p for p in model_dir.iterdir() if p.name.endswith(".tmp")]


def test_a_killed_trace_run_leaves_a_loadable_store_and_a_rerun_completes_it(tmp_path):
    traces, content = tmp_path / "traces", tmp_path / "content"
    content.mkdir()
    # the small scoring set (a documented option): the same steps, less volume; the causal files'
    # full size is covered by test_committed_traces' forced retrace
    args = ["--traces-dir", str(traces), "--content", str(content), "--scoring-set", "small"]
    for s in SENTENCES:
        args += ["--sentence", s]
    proc = subprocess.Popen(traces_command(*args), cwd=REPO, env=env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 240
        while not trace_files(traces / "tiny"):
            assert proc.poll() is None, f"the run ended before writing a trace:\n{proc.stdout.read().decode()}"
            assert time.monotonic() < deadline, "no trace file appeared in 240 s"
            time.sleep(0.01)
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
        proc.stdout.close()
    assert proc.returncode == -signal.SIGKILL, "the run finished before it could be killed: add sentences"

    # The store loads: every indexed entry is a complete, parseable trace (temp files are ignored).
    store = TraceStore(traces)
    entries = store.entries("tiny")
    for e in entries:
        doc = store.load("tiny", e["text"], e.get("ids"))
        assert doc["text"] == e["text"] and len(doc["tokens"]) == e["nTokens"]
    for p in trace_files(traces / "tiny"):
        json.loads(p.read_text(encoding="utf-8"))  # no half-written trace under a real name
    killed_with = len(entries)
    # A write cut off by the kill leaves its temp file (.<name>.<random>.tmp); a rerun must not
    # touch it (another run could be writing it), and `--prune` removes it.
    left_by_kill = set(temp_files(traces / "tiny"))

    # A rerun completes the store, writes no temp files, and every sentence loads.
    done = run(traces_command(*args))
    assert done.returncode == 0, done.stderr
    store = TraceStore(traces)
    for s in SENTENCES:
        assert store.load("tiny", s)["text"] == s
    assert len(store.entries("tiny")) >= max(killed_with, len(SENTENCES))
    assert set(temp_files(traces / "tiny")) <= left_by_kill, "the rerun left temp files of its own"
    index = json.loads((traces / "tiny" / "index.json").read_text(encoding="utf-8"))
    assert all((traces / "tiny" / e["file"]).is_file() for e in index["traces"])

    # --prune clears what the killed run left
    pruned = run(traces_command(*args, "--prune"))
    assert pruned.returncode == 0, pruned.stderr
    assert not temp_files(traces / "tiny"), "--prune left stray temp files"


def test_two_trace_runs_at_once_end_as_one_run_would(tmp_path):
    """Two `make traces` started together over the same store (with overlapping sentence sets):
    the second waits for the first's lock and says so, both exit 0, and the store is complete
    and byte for byte what one run of all the sentences writes."""
    content = tmp_path / "content"
    content.mkdir()

    def args(traces: Path, sentences: list[str]) -> list[str]:
        out = ["--traces-dir", str(traces), "--content", str(content), "--scoring-set", "small"]  # as above
        for s in sentences:
            out += ["--sentence", s]
        return out

    shared = tmp_path / "shared"
    first, second = SENTENCES[:3], SENTENCES[2:]
    procs = [subprocess.Popen(traces_command(*args(shared, part)), cwd=REPO, env=env(), stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True) for part in (first, second)]
    outputs = [p.communicate(timeout=600)[0] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outputs
    assert sum("another `make traces` is writing here; waiting for it to finish" in o for o in outputs) == 1, outputs
    store = TraceStore(shared)
    assert set(SENTENCES) <= {e["text"] for e in store.entries("tiny")}  # with the head-score set
    for s in SENTENCES:
        assert store.load("tiny", s)["text"] == s
    assert not temp_files(shared / "tiny")

    alone = tmp_path / "alone"
    once = run(traces_command(*args(alone, SENTENCES)), timeout=600)
    assert once.returncode == 0, once.stderr
    assert tree_digest(shared) == tree_digest(alone)


# ---------------------------------------------------------------- make site, killed at each stage

KILL_HELPER = Path(__file__).resolve().parent / "killed_make_site.py"
STRAY = re.compile(r"^\.site\.(building|assets|old)-\d+$")


def small_course(root: Path) -> Path:
    """A copy of the project to build: the Makefile, the repository's mkdocs.yml and theme, one
    lesson with a figure, the committed traces (the generator comes from PYTHONPATH)."""
    from catalogue import GLOSSARY, mkdocs_yml

    content = root / "content"
    content.mkdir(parents=True)
    (content / "index.md").write_text("# Home\n\nA course about attention.\n", encoding="utf-8")
    (content / "glossary.md").write_text("# Glossary\n\n[[glossary]]\n", encoding="utf-8")
    (content / "glossary.yml").write_text(GLOSSARY, encoding="utf-8")
    (content / "lily.md").write_text('# Lily\n\n```attention\nmodel: tiny\nsentence: "Lily wanted to play with her"\n'
                                     "layer: 3\nhead: 3\nid: lily\n```\n\n·her gives {{ lily.weight(her, Lily) }} to Lily.\n",
                                     encoding="utf-8")
    (root / "mkdocs.yml").write_text(mkdocs_yml(), encoding="utf-8")
    shutil.copy2(REPO / "Makefile", root / "Makefile")
    shutil.copytree(REPO / "traces", root / "traces")
    return root


def make_args() -> list[str]:
    """make's arguments that use this test run's virtual environment as it is (-o: the install
    stamp is taken as done; the copy's `make` must not reinstall the package from the copy)."""
    venv = Path(sys.prefix)
    if shutil.which("make") is None or not (venv / ".deps-site").is_file():
        pytest.skip(f"no make, or {venv} was not set up by the Makefile (no .deps-site stamp): `make test` sets it up")
    return [f"VENV={venv}", "-o", str(venv / ".deps-site")]


@pytest.fixture(scope="module")
def built_course(tmp_path_factory) -> Path:
    """The small course, built once by `make site` (each test kills a build over this site)."""
    root = small_course(tmp_path_factory.mktemp("built") / "course")
    first = run(["make", "--no-print-directory", "site", *make_args()], cwd=root, timeout=600)
    assert first.returncode == 0, first.stderr
    return root


@pytest.mark.parametrize("stage", publish.PAUSE_STAGES)
def test_make_site_killed_at_a_stage_leaves_nothing_after_the_next_build(tmp_path, built_course, stage):
    """kill -9 of `make site` (make and the build) at `stage`, its process left a zombie as where
    nothing reaps orphans; the next `make site` succeeds, build/ holds no temporary folder of
    either build, and build/site is a whole site (put back first where the kill came between the
    two renames)."""
    root = tmp_path / "course"
    shutil.copytree(built_course, root, symlinks=True)
    done = run([sys.executable, str(KILL_HELPER), str(root), stage, *make_args()], timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert "error" not in report, report
    assert any(STRAY.match(name) for name in report["killed"]), f"the kill at {stage} left nothing to clear: {report['killed']}"
    assert report["returncode"] == 0, report["log"]
    assert not [name for name in report["after"] if STRAY.match(name)], report["after"]
    assert "site" in report["after"] and report["site_index"]
