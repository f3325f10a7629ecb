"""Crash safety: `python -m generator traces` killed (SIGKILL) part-way leaves a store that still
loads, and a rerun completes it."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

import pytest

from course_builds import REPO, env, run, traces_command, tree_digest

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
    args = ["--traces-dir", str(traces), "--content", str(content)]
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
        out = ["--traces-dir", str(traces), "--content", str(content)]
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
