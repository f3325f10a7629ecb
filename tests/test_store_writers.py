"""One writer at a time (TraceStore.writing, which `make traces` holds): a second writer waits
for the first and says so, and a killed writer's temp files are removed when the next one starts."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
import time

from conftest import REPO, lily_trace, write_traces
from generator.store import TraceStore

HOLD = textwrap.dedent("""
    import sys, time
    from generator.store import TraceStore
    with TraceStore(sys.argv[1]).writing():
        print("held", flush=True)
        sys.stdin.readline()  # until the test lets go
""")


def test_a_second_writer_waits_for_the_first_and_says_so(tmp_path):
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(tmp_path)], cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        said, inside = [], threading.Event()

        def write():
            with TraceStore(tmp_path).writing(say=said.append):
                inside.set()

        t = threading.Thread(target=write)
        t.start()
        while not said:  # it says why it waits before it blocks
            assert t.is_alive() and not inside.is_set(), "the second writer did not wait"
            time.sleep(0.01)
        assert not inside.is_set()
        holder.stdin.write("\n")
        holder.stdin.flush()
        assert holder.wait(timeout=60) == 0
        t.join(timeout=60)
        assert inside.is_set()
        assert said == [f"{tmp_path}: another `make traces` is writing here; waiting for it to finish"]
    finally:
        if holder.poll() is None:
            holder.kill()
    assert list(tmp_path.iterdir()) == []  # the lock is on the folder: no file is added to the store


def test_a_killed_writers_temp_files_are_removed_by_the_next(tmp_path):
    [path] = write_traces(tmp_path, [lily_trace()])
    stray = path.parent / f".{path.name}.abc123.tmp"
    stray.write_bytes(b"half a trace")
    keep = path.parent / "notes.tmp"  # not a writer's temp name: left alone
    keep.write_bytes(b"x")
    with TraceStore(tmp_path).writing():
        assert not stray.exists() and keep.exists() and path.exists()
