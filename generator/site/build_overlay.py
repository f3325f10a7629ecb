"""`make serve`'s error overlay: while the latest build failed, every served page gets, before its
`</body>`, one box with the build's one line, its file and line, and its Fix
(generator/assets/serve-error.html, a Jinja2 template with autoescape). The page behind it is the
last good build's; the next good build takes the box away. Never written into a built site.
Also the body of the preview's 404 and 500 pages (error_page)."""

from __future__ import annotations

import threading
from pathlib import Path

from ..lessons.errors import LessonError

ASSETS = Path(__file__).resolve().parents[1] / "assets"


def render_page(name: str, **values) -> str:
    """One of `make serve`'s own templates in generator/assets/ (serve-*.html), autoescaped."""
    from jinja2 import Environment, FileSystemLoader

    return Environment(loader=FileSystemLoader(ASSETS), autoescape=True).get_template(name).render(**values)


def error_page(code: int, site_dir: Path) -> bytes:
    """The body of a 404 or 500: the built site's own 404.html, or, before any good build, the
    page of generator/assets/serve-missing.html (the server adds the reload script and overlay)."""
    page = site_dir / f"{code}.html"
    if page.is_file():
        return page.read_bytes()
    return render_page("serve-missing.html", code=code).encode("utf-8")


def lesson_error_of(exc: BaseException) -> LessonError | None:
    """The LessonError behind a failed build (MkDocs raises Abort from inside its handler of our
    BuildError, so it is the Abort's context), or None."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, LessonError):
            return exc
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return None


class BuildOverlay:
    """The latest build's error, if it failed, and the HTML that shows it."""

    def __init__(self):
        self._lock = threading.Lock()
        self._html: bytes | None = None
        self.line: str | None = None

    def failed(self, exc: BaseException) -> str:
        """Remember a failed build; returns its one line (as the terminal shows it)."""
        found = lesson_error_of(exc)
        line = str(found) if found is not None else (" ".join(str(exc).split()) or type(exc).__name__)
        where = found.where if found is not None else None
        fix = found.fix if found is not None else None
        mistakes = getattr(found, "errors", None) or []  # a page's several mistakes: one line each
        html = render_page("serve-error.html", line=line, where=where, fix=fix, mistakes=[str(e) for e in mistakes])
        with self._lock:
            self.line, self._html = line, html.encode("utf-8")
        return line

    def cleared(self) -> None:
        with self._lock:
            self.line, self._html = None, None

    def inject(self, content: bytes) -> bytes:
        with self._lock:
            box = self._html
        if box is None:
            return content
        end = content.rfind(b"</body>")
        end = len(content) if end < 0 else end
        return content[:end] + box + content[end:]
