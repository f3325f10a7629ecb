"""`make test` and `make test-quick` hand whole files to the workers (pytest-xdist, --dist loadfile)
in the order tests/conftest.py sorts them: the slowest files first (SLOW_FIRST), the files of the
GPT-2-shaped course last. xdist reorders the files by their number of tests unless told not to
(its --loadscope-reorder is on by default), which put the GPT-2-shaped end-to-end file, ten tests,
behind the files with many short tests, and a GPT-2-shaped file's worker waited for the course's
lock (94 s in a fresh-clone run). Here xdist's own scheduler is given the Makefile's flags."""

from __future__ import annotations

import re
import shlex

import pytest

from conftest import REPO, SLOW_FIRST

xdist_scheduler = pytest.importorskip("xdist.scheduler")


def pytest_args(target: str) -> list[str]:
    """The pytest arguments of a Makefile target's recipe (`$(PY) -m pytest ARGS`)."""
    recipe = re.search(rf"(?m)^{re.escape(target)}:.*\n((?:\t.*\n)+)", (REPO / "Makefile").read_text(encoding="utf-8"))
    assert recipe, f"the Makefile has no target {target}"
    line = next(l for l in recipe.group(1).splitlines() if "-m pytest" in l)
    return shlex.split(line.split("-m pytest", 1)[1])


class FakeWorker:
    """What the scheduler asks of a worker: it is sent test indices, it is never shut down."""

    shutting_down = False

    def __init__(self, name: str):
        self.sent: list[int] = []
        self.gateway = type("Gateway", (), {"id": name})()

    def send_runtest_some(self, indices):
        self.sent += indices

    def shutdown(self):
        pass


def scheduled_files(args: list[str], collection: list[str]) -> list[str]:
    """The files in the order xdist's scheduler, given `args`, hands them out to two workers."""
    from _pytest.config import _prepareconfig

    config = _prepareconfig(args + ["-p", "no:cacheprovider"])
    config.option.tx = ["popen"] * 2  # what xdist makes of `-n auto` on two cores when it starts
    assert config.option.dist == "loadfile"
    sched = xdist_scheduler.LoadFileScheduling(config)
    handed: list[str] = []
    assign = sched._assign_work_unit

    def recording(node):
        handed.append(next(iter(sched.workqueue)))  # the unit it pops is the queue's first
        assign(node)

    sched._assign_work_unit = recording
    for worker in (FakeWorker("gw0"), FakeWorker("gw1")):
        sched.add_node(worker)
        sched.add_node_collection(worker, collection)
    sched.schedule()
    return handed + list(sched.workqueue)


# conftest's order: a slow file of few tests first, files of many short tests, a GPT-2-shaped file
# last (made-up file names but the first, which the scheduler only groups by)
COLLECTION = ([f"tests/{SLOW_FIRST[0]}::t{i}" for i in range(3)] + [f"short-{k}::t{i}" for k in range(4) for i in range(40)]
              + [f"gpt2-shaped::t{i}" for i in range(60)])
IN_ORDER = [f"tests/{SLOW_FIRST[0]}"] + [f"short-{k}" for k in range(4)] + ["gpt2-shaped"]


@pytest.mark.parametrize("target", ["test", "test-quick"])
def test_make_hands_the_files_out_in_conftest_s_order(target):
    assert scheduled_files(pytest_args(target), COLLECTION) == IN_ORDER


def test_xdist_s_default_order_is_not_conftest_s():
    # the check above can fail: without --no-loadscope-reorder the files go by their number of tests
    args = [a for a in pytest_args("test") if a != "--no-loadscope-reorder"]
    assert scheduled_files(args, COLLECTION)[0] == "gpt2-shaped"
