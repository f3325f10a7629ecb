"""The folder a build writes its site into: which folders it may replace (a build replaces its
site folder whole, so it may hold none of the course's own files), and what a killed build left
beside it (its temporary folders, removed once that build is gone). `make site` and the Zensical
build (publish.py, zensical_build.py) both ask here first.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path


BUILT_SITE_MARKS = ("sitemap.xml", "404.html", "index.html")  # one of them in every site MkDocs or Zensical builds


def site_dir_problem(final: Path, config_file: str | Path, docs: Path, traces: Path) -> str | None:
    """Why `final` cannot be the built site, or None. A build replaces its site folder whole and
    deletes what was there, so the folder may hold nothing of the course's sources: not the folder
    of mkdocs.yml or one above it, not the lessons' folder, one above it or one inside it, not the
    traces; and a folder that is already there must be a site built before or empty."""
    final = final.resolve()
    sources = {"the folder of " + Path(config_file).name: Path(config_file).resolve().parent,
               "the lessons' folder": docs.resolve(), "the traces' folder": traces.resolve()}
    for what, folder in sources.items():
        if final == folder or final in folder.parents:
            return (f"{final}: {'is' if final == folder else 'holds'} {what} ({folder}), and a build replaces its site folder "
                    "whole; give a folder of its own (default build/site)")
    if docs.resolve() in final.parents:
        return f"{final}: is inside the lessons' folder ({docs.resolve()}); give a folder outside it (default build/site)"
    if final.is_dir() and any(final.iterdir()) and not any((final / name).is_file() for name in BUILT_SITE_MARKS):
        return (f"{final}: is not a site built before (it has none of {', '.join(BUILT_SITE_MARKS)}) and not empty, and a build "
                "replaces it whole; give a new or empty folder, or remove it first")
    if final.exists() and not final.is_dir():
        return f"{final}: is a file, not a folder"
    return None


def remove_leftovers(final: Path) -> list[Path]:
    """The temporary folders of a killed build next to `final` (`.<name>.building-<pid>`,
    `.assets-<pid>`, `.old-<pid>`), removed when that build is gone (build_is_gone); a build still
    running keeps its own. A build killed between its two renames left no `final` but the old
    site as `.old-<pid>`: that is put back first, so `final` is again the old site."""
    pattern = re.compile(rf"^\.{re.escape(final.name)}\.(building|assets|old)-(\d+)$")
    removed = []
    for p in sorted(final.parent.iterdir()) if final.parent.is_dir() else []:
        m = pattern.match(p.name)
        if not m or int(m.group(2)) == os.getpid() or not build_is_gone(int(m.group(2)), p):
            continue
        if m.group(1) == "old" and not final.exists():
            try:
                os.rename(p, final)
                continue
            except OSError:
                pass
        shutil.rmtree(p, ignore_errors=True)
        if not p.exists():
            removed.append(p)
    return removed


def build_is_gone(pid: int, folder: Path) -> bool:
    """Whether the build that made `folder` (named with its pid) has ended. Not only "no such
    process": a build killed with its parent stays a zombie where nothing reaps orphans (a
    container whose first process is not an init), and its pid may since belong to another
    process, one that started after the folder was last touched."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        pass  # another user's process: /proc still says what it is
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
        fields = stat[stat.rindex(")") + 2:].split()  # after "pid (name) ": state is field 3, starttime 22
        if fields[0] in ("Z", "X"):
            return True
        boot = next(int(line.split()[1]) for line in Path("/proc/stat").read_text(encoding="ascii").splitlines() if line.startswith("btime "))
        started = boot + int(fields[19]) / os.sysconf("SC_CLK_TCK")
        st = folder.stat()
        return started > max(st.st_mtime, st.st_ctime) + 1  # btime is whole seconds
    except (OSError, ValueError, IndexError, StopIteration):
        return False  # no /proc (not Linux): alive, as kill says
