"""Run by tests/test_crash_safety.py: `make site` killed (SIGKILL, make and the build together) at one
stage, then `make site` again, in the project folder ROOT. Prints what build/ held after the kill
and after the second build, as JSON.

    python killed_make_site.py ROOT STAGE [make arguments...]

The build stops at STAGE by itself ($COURSE_BUILD_PAUSE_AT, generator/site/publish.py pause_point)
and says so, so the kill never depends on timing. This process makes itself the reaper of
orphans (PR_SET_CHILD_SUBREAPER) and does not reap the killed build until the second one has
run: the killed build stays a zombie, as it does in a container whose first process reaps
nothing; such a pid still answers kill(pid, 0), and was taken for a live build."""

from __future__ import annotations

import ctypes
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

PR_SET_CHILD_SUBREAPER = 36


def listing(build: Path) -> list[str]:
    return sorted(p.name for p in build.iterdir()) if build.is_dir() else []


def main() -> int:
    root, stage, *make_args = sys.argv[1:]
    build = Path(root) / "build"
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        print(json.dumps({"error": f"prctl: errno {ctypes.get_errno()}"}))
        return 1
    env = dict(os.environ, COURSE_BUILD_PAUSE_AT=stage)
    make = ["make", "--no-print-directory", "site", *make_args]
    first = subprocess.Popen(make, cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                             start_new_session=True)
    said = []
    for line in first.stderr:
        said.append(line)
        if line.strip() == f"paused at {stage}":
            break
    else:
        first.wait()
        print(json.dumps({"error": f"the build never paused at {stage} (exit {first.returncode})", "log": "".join(said)[-3000:]}))
        return 1
    os.killpg(first.pid, signal.SIGKILL)
    first.wait()
    first.stderr.close()
    killed = listing(build)
    env.pop("COURSE_BUILD_PAUSE_AT")
    second = subprocess.run(make, cwd=root, env=env, capture_output=True, text=True, timeout=600)
    after = listing(build)
    site_index = (build / "site" / "index.html").is_file()
    while True:  # now reap the killed build
        try:
            if os.waitpid(-1, os.WNOHANG) == (0, 0):
                break
        except ChildProcessError:
            break
    print(json.dumps({"killed": killed, "after": after, "returncode": second.returncode, "site_index": site_index,
                      "log": second.stderr[-3000:]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
