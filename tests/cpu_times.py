"""CPU-seconds per test phase, for measuring the suite on a busy machine (where wall times run 2-4x
the CPU time and say little): `COURSE_CPU_TIMES=FILE pytest ...` appends one JSON line per test
phase to FILE: {"test", "phase", "wall", "cpu", "end" (Unix time), "worker" (xdist's gw0, ...)}. Loaded by tests/conftest.py; off when unset.

"cpu" is the CPU time (user + system) spent during the phase by pytest's process and by every
process under it: the children it waited for (subprocess builds and traces), and the live ones
(Chromium and Playwright's driver), read from /proc with the children they waited for. A process
that ends as an orphan is not counted. Session fixtures are charged to the first test that asks.
`python tests/cpu_times.py FILE [N]` prints the N heaviest phases and the total per file.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections import defaultdict
from pathlib import Path

import pytest

ENV = "COURSE_CPU_TIMES"
TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _stat(pid: int) -> tuple[int, float]:
    """(parent pid, CPU seconds of the process and of the children it waited for)."""
    with open(f"/proc/{pid}/stat", "rb") as f:
        fields = f.read().rsplit(b")", 1)[1].split()
    # after the name: state ppid ... utime(14) stime(15) cutime(16) cstime(17), 1-based from pid
    return int(fields[1]), sum(int(x) for x in fields[11:15]) / TICK


def tree_cpu(root: int | None = None) -> float:
    """CPU seconds of `root` (this process), the children it waited for, and every live descendant."""
    root = root or os.getpid()
    parents: dict[int, int] = {}
    cpu: dict[int, float] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                parents[int(entry)], cpu[int(entry)] = _stat(int(entry))
            except (OSError, IndexError, ValueError):
                continue
    children = defaultdict(list)
    for pid, ppid in parents.items():
        children[ppid].append(pid)
    total, todo = 0.0, [root]
    while todo:
        pid = todo.pop()
        total += cpu.get(pid, 0.0)
        todo.extend(children.get(pid, ()))
    return total


class CpuTimes:
    def __init__(self, path: str):
        self.path = Path(path)

    def _measure(self, item, phase: str):
        wall, cpu = time.perf_counter(), tree_cpu()
        yield
        record = {"test": item.nodeid, "phase": phase, "wall": round(time.perf_counter() - wall, 3), "cpu": round(tree_cpu() - cpu, 3),
                  "end": round(time.time(), 1), "worker": os.environ.get("PYTEST_XDIST_WORKER", "")}
        with self.path.open("a", encoding="utf-8") as f:
            f.write(json.dumps(record) + "\n")

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_setup(self, item):
        yield from self._measure(item, "setup")

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(self, item):
        yield from self._measure(item, "call")

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_teardown(self, item):
        yield from self._measure(item, "teardown")


def register(config) -> None:
    path = os.environ.get(ENV)
    if path:
        config.pluginmanager.register(CpuTimes(path), "course-cpu-times")


def report(path: str, n: int = 25) -> None:
    rows = [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]
    print(f"{'cpu s':>8} {'wall s':>8}  phase     test")
    for r in sorted(rows, key=lambda r: -r["cpu"])[:n]:
        print(f"{r['cpu']:8.1f} {r['wall']:8.1f}  {r['phase']:<9} {r['test']}")
    files: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
    for r in rows:
        f = files[r["test"].split("::")[0]]
        f[0] += r["cpu"]
        f[1] += r["wall"]
    print(f"\n{'cpu s':>8} {'wall s':>8}  file")
    for name, (c, w) in sorted(files.items(), key=lambda kv: -kv[1][0]):
        print(f"{c:8.1f} {w:8.1f}  {name}")
    print(f"{sum(c for c, _ in files.values()):8.1f} {sum(w for _, w in files.values()):8.1f}  total")
    ends: dict[str, float] = {}
    for r in rows:
        if "end" in r:
            ends[r.get("worker") or "main"] = max(ends.get(r.get("worker") or "main", 0.0), r["end"])
    last = max(ends.values(), default=0.0)
    early = {w: last - t for w, t in ends.items() if t < last}
    if early:  # the run's tail (one run per file): how long the last worker ran alone after each other one finished
        order = sorted(early, key=lambda w: (len(w), w))  # gw2 before gw10
        print("\nworkers finished before the last: " + ", ".join(f"{w} {early[w]:.0f} s" for w in order))


if __name__ == "__main__":
    report(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 25)
