"""The folder a build writes its site into: which folders it may replace (a build replaces its
site folder whole, so it may hold none of the course's own files), and what a killed build left
beside it (its temporary folders, removed once that build is gone). `make site` and the Zensical
build (publish.py, zensical_build.py) both ask here first. And what in the lessons' folder the
site could not build as written (publish.settings_problem asks for every command): a folder that
is a link, and a page the site's own output would take the place of.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

from ..lessons.source import iter_markdown, shown_path
from . import downloads


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


def linked_folder_problem(docs_dir: str) -> str | None:
    """A folder inside the lessons' folder that is a symbolic link: MkDocs follows it (a link to a
    folder above loops until the system stops it, with a traceback), and `make check` does not.
    One line naming the link, or None."""
    for here, folders, _ in os.walk(docs_dir):
        for name in sorted(folders):
            path = Path(here) / name
            if path.is_symlink():  # named as written, not where it leads (shown_path would resolve it)
                link = path.parent.resolve() / name
                shown = link.relative_to(Path.cwd().resolve()).as_posix() if link.is_relative_to(Path.cwd().resolve()) else link.as_posix()
                return (f"{shown}: is a link to a folder, which the site would read through (a link to a "
                        "folder above it, over and over). Fix: copy the pages into the lessons' folder, or remove the link")
    return None


RESERVED = (downloads.DOWNLOADS_DIR, downloads.NOTEBOOKS_DIR)  # folders the site writes itself


def output_names_problem(docs_dir: str) -> str | None:
    """A lesson whose page the site's own output would take the place of, in one line, or None:
    one under downloads/ or notebooks/ (the one-file chapters and the notebooks go there), or two
    whose one-file chapters would share a name (part-ch.md and part/ch.md)."""
    docs = Path(docs_dir)
    pages = [p.relative_to(docs).with_suffix(".html").as_posix() for p in iter_markdown(docs)]
    for page in pages:
        top = page.split("/", 1)[0]
        if "/" in page and top in RESERVED:
            return (f"{shown_path(docs / page[:-len('.html')])}.md: the site writes its own {top}/ folder, which would take "
                    f"this page's place. Fix: move the page out of {shown_path(docs / top)}/")
    return downloads.name_clash(pages)
