"""What a change under `make serve`'s watches means: which files count as a change (a move's
destination, not the copy an editor renamed; nothing MkDocs leaves out of the site), which changed
while no watch ran (changed_since), and which build a change needs (Rebuilds: the quick "dirty" one
or a full one). generator/site/serve.py watches and builds."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path

from ..lessons import pages
from ..lessons.errors import LessonError
from ..lessons.source import iter_markdown
from ..store import TraceRequest
from .save_tracer import store_stamp


class Rebuilds:
    """Which build a change needs. A full MkDocs build of the course takes seconds; a "dirty" one
    (MkDocs rebuilds only the pages whose source is newer than their HTML) well under one. A
    rebuild is dirty when all that changed is lesson Markdown (not a lesson deleted or renamed:
    only a full build, made in a fresh folder, drops its page) and the traces this process wrote;
    the pages that use those new traces lose their HTML first, so MkDocs rebuilds them too.
    Anything else (mkdocs.yml, the glossary, a trace from another process) gets a full build.
    A dirty build leaves the search index of the last full build in place (MkDocs's would hold
    the rebuilt pages only)."""

    def __init__(self, docs: Path, traces_dir: Path, site_dir: Path):
        self.docs, self.traces_dir, self.site_dir = docs, traces_dir, site_dir
        self.changed: set[Path] = set()
        self.stamp: tuple | None = None  # the store as the last build saw it
        self._lock = threading.Lock()

    def note(self, path: str) -> None:
        with self._lock:
            self.changed.add(Path(path))

    def dirty(self, written: list[TraceRequest], own_stamp: tuple | None, now: tuple | None = None) -> bool:
        """Whether the next build may be dirty (and, if so, the pages using `written` are marked).
        `now`: the store's stamp, taken with `written` (Tracer.take); read here if None."""
        with self._lock:
            changed, self.changed = self.changed, set()
        if self.stamp is None:  # the first build
            return False
        now = store_stamp(self.traces_dir) if now is None else now
        if now != self.stamp and now != own_stamp:  # another process changed the store
            return False
        if any(not (p.suffix == ".md" and p.is_relative_to(self.docs)) and not p.is_relative_to(self.traces_dir) for p in changed):
            return False
        if any(p.suffix == ".md" and p.is_relative_to(self.docs) and not p.exists() for p in changed):
            return False  # a lesson deleted or renamed: a dirty build would keep serving its old page
        self.mark_pages_using(written)
        return True

    def mark_pages_using(self, written: list[TraceRequest]) -> None:
        """Date the HTML of the pages that use `written` to 1970, so MkDocs's dirty build (which
        rebuilds a page whose source is newer than its HTML) rebuilds them. Not deleted: if that
        build fails, the page stays the last good one behind the overlay, and it still reloads."""
        wanted = {(r.model, r.text) for r in written}
        if not wanted:
            return
        for path in iter_markdown(self.docs):
            try:
                found = pages.parse_file(path)
            except (LessonError, OSError, UnicodeDecodeError):
                continue  # its own build reports it
            if any(pair in wanted for d in found for pair in pages.directive_sentences(d)):
                html = self.site_dir / path.relative_to(self.docs).with_suffix(".html")
                if html.is_file():
                    os.utime(html, ns=(0, 0))


def changed_since(paths, since: float, ignore: Callable[[str], bool], skip: Path) -> list[str]:
    """Files under `paths` (files or folders) modified at or after `since` (a time.time()) that
    `ignore` does not skip (it notes them for the next build); the folder `skip` is not walked."""
    found = []
    for top in map(Path, paths):
        files = [top] if top.is_file() else []
        for folder, dirs, names in os.walk(top):
            dirs[:] = sorted(d for d in dirs if Path(folder, d) != skip)
            files += [Path(folder, n) for n in sorted(names)]
        for f in files:
            try:
                if f.stat().st_mtime >= since and not ignore(str(f)):
                    found.append(str(f))
            except OSError:  # gone, a link in a loop, unreadable: the build says what is wrong with it
                continue
    return found


def left_out_of_site(docs: Path, path: Path) -> bool:
    """A file under the docs folder that MkDocs leaves out of every build: a name starting with a
    dot (its default `exclude_docs`, which mkdocs.yml's own list adds to), at any depth."""
    return path.is_relative_to(docs) and any(part.startswith(".") for part in path.relative_to(docs).parts)


def event_path(event) -> str:
    """The file a watched change changed: for a move, where it went. An editor that saves by writing
    a copy and renaming it over the lesson makes a moved event whose source is the copy, gone by
    then (its timestamp unreadable, and not a lesson, so the next build could not be the quick one)."""
    return os.fsdecode(getattr(event, "dest_path", "") or event.src_path)
