"""Offline downloads, made from a finished build of the site (`python -m generator site` calls
:func:`build_downloads` last; `python -m generator downloads` reruns it on build/site).

Two kinds:

* **The whole course**: ``build/downloads/course-offline.zip``, every file of ``build/site``
  under one folder ``attention-course/`` (unzip anywhere, open ``attention-course/index.html``
  from disk: pages, heatmaps, search and formulas work with no network; the offline plugin
  inlines the search index and the vendored iframe-worker shim runs the search worker from
  file://). The zip is deterministic: entries sorted by path, every timestamp 1980-01-01 00:00,
  permissions 0644, deflate, no extra fields. A copy goes to
  ``build/site/downloads/course-offline.zip`` for the hosted site, whose footer links to it.

  What the zip leaves out, and why: the whole ``downloads/`` folder (the zip cannot contain
  itself, and the one-file chapters would only repeat what the zip holds, Plotly four times
  over), with the links to them (the text between the ``course:zip-link`` and
  ``course:onefile-link`` comments is cut from every page in the zip, so no page inside the zip
  links to a file that is not there), source maps (``*.map``: only browser developer tools
  ask for them) and ``404.html`` (only a web server shows it, and its links are absolute,
  ``/assets/...``, so from disk it would load nothing). Deflate level 6: level 9 took four times as long for 1.5 % less.

* **One chapter in one file**: for every page with figures (``class="course-fig"``),
  ``build/site/downloads/<page>.html`` (``<page>`` is the page's path with ``/`` turned into
  ``-``). A lean standalone page of its own: the page's article (prose, tabs, tables, MathML
  formulas, figure data), with the site's stylesheets, the page's local scripts (Plotly,
  course.js) and the heavy trace parts of *that page's* figures inlined as ``<style>`` and
  ``<script>`` elements. Material's own JavaScript (navigation, search) is left out: tabs are
  CSS (radio buttons), pickers are course.js. Links inside the article to other pages (the
  glossary, other chapters) and to the trace JSON downloads become absolute URLs on the hosted
  site when mkdocs.yml has a site_url (the Pages workflow sets COURSE_SITE_URL), so they work
  wherever the file is opened; without one (a local build) they are rewritten to be relative to
  ``downloads/``: they work where the file sits in the built site, and are dead (no request is
  made) when it is opened alone, as the chapter's banner says.

Nothing here imports mkdocs or torch; it reads and writes files only.
"""

from __future__ import annotations

import argparse
import base64
import gzip
import html
import mimetypes
import posixpath
import re
import shutil
import sys
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urljoin


REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_SITE = REPO_ROOT / "build" / "site"
DEFAULT_OUT = REPO_ROOT / "build" / "downloads"

DOWNLOADS_DIR = "downloads"  # inside the site
ZIP_NAME = "course-offline.zip"
ZIP_ROOT = "attention-course"  # the one folder every zip entry lives in
ZIP_DATE = (1980, 1, 1, 0, 0, 0)  # the earliest date a zip can hold
ZIP_FILE_MODE = 0o100644  # regular file, rw-r--r--
ZIP_EXCLUDE_SUFFIXES = (".map",)
ZIP_EXCLUDE_FILES = ("404.html",)
# The footer's link to the zip is written between these two comments (overrides/partials/copyright.html).
ZIP_LINK_START = "<!-- course:zip-link -->"
ZIP_LINK_END = "<!-- /course:zip-link -->"
ZIP_LINK_RE = re.compile(re.escape(ZIP_LINK_START) + r".*?" + re.escape(ZIP_LINK_END), re.S)
# Each chapter's link to its one-file copy (overrides/main.html); cut from that copy and the zip.
ONEFILE_LINK_RE = re.compile(r"<!-- course:onefile-link -->.*?<!-- /course:onefile-link -->", re.S)
# The course's scripts where overrides/main.html put them, after a page's first heatmap: a
# one-file chapter inlines them after its article instead (with the heavy parts before them).
COURSE_SCRIPTS_RE = re.compile(r"<!-- course:scripts -->.*?<!-- /course:scripts -->", re.S)
ZIP_LEVEL = 6
# Each chapter's link to its notebook (overrides/main.html, generator/site/notebook_files.py): the
# hosted page's names downloads/<page>-notebook.zip; in the zip it names notebooks/<page>.ipynb.
NOTEBOOKS_DIR = "notebooks"
NOTEBOOK_BUNDLE_SUFFIX = "-notebook.zip"
NOTEBOOK_LINK_RE = re.compile(r"<!-- course:notebook-link -->.*?<!-- /course:notebook-link -->", re.S)
NOTEBOOK_HREF_RE = re.compile(r"href=\"((?:\.\.?/)*)" + DOWNLOADS_DIR + r"/([^\"/]+)" + re.escape(NOTEBOOK_BUNDLE_SUFFIX) + "\"")

# Scripts of a built page that the one-file chapter leaves out (Material's app, its search
# worker and the file:// worker shim; none is needed without navigation and search).
ONEFILE_SKIP_SCRIPTS = re.compile(r"(^|/)(bundle\.[0-9a-f]+\.min\.js|iframe-worker[^/]*\.js|workers/|lunr/)")
CHAPTER_MARK = 'class="course-fig'
# The playground (content/play.md): no figure in its HTML (play.js draws them), its weights named
# by data-model and loaded by play.js, which the article loads itself.
PLAY_MARK = 'id="course-play"'
PLAY_MODEL_RE = re.compile(r'\sid="course-play"[^>]*\sdata-model="([^"]+)"')
PLAY_SCRIPT_RE = re.compile(r'<script src="[^"]*play\.js" defer></script>\n?')

LINK_CSS_RE = re.compile(r"<link\b[^>]*\brel=\"stylesheet\"[^>]*>", re.I)
ICON_LINK_RE = re.compile(r"<link\b[^>]*\brel=\"(?:shortcut )?icon\"[^>]*>", re.I)
SCRIPT_SRC_RE = re.compile(r"<script\b[^>]*\bsrc=\"([^\"]+)\"[^>]*>\s*</script>", re.I)
HREF_RE = re.compile(r"\bhref=\"([^\"]*)\"")
ATTR_URL_RE = re.compile(r"(\s(?:href|data-parts))=\"([^\"]*)\"")
IMG_SRC_RE = re.compile(r"(<img\b[^>]*?\ssrc=)\"([^\"]+)\"", re.I)
PARTS_RE = re.compile(r"\sdata-parts=\"([^\"]+)\"")
# overrides/main.html's script that picks the palette matching the system's colour scheme before
# the first frame (the palette's options are written into it)
PALETTE_SCRIPT_RE = re.compile(r"<script data-course-palette>(.*?)</script>", re.S)


class DownloadError(Exception):
    """Something the downloads need is missing from the build. str() is one line."""


@dataclass
class DownloadReport:
    zip_path: Path | None = None
    zip_bytes: int = 0
    zip_entries: int = 0
    chapters: dict[str, dict] = field(default_factory=dict)  # page -> {path, bytes, gzipBytes}
    warnings: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        out = [f"downloads: {self.zip_path} ({self.zip_bytes / 1e6:.1f} MB, {self.zip_entries} files; a copy in <site>/{DOWNLOADS_DIR}/)"]
        for page, info in self.chapters.items():
            out.append(
                f"downloads: <site>/{DOWNLOADS_DIR}/{info['path'].name} ({info['bytes'] / 1e6:.2f} MB, "
                f"{info['gzipBytes'] / 1e6:.2f} MB gzipped) from {page}"
            )
        return out


# ---------------------------------------------------------------- helpers


def onefile_name(page: str) -> str:
    """`attention.html` -> `attention.html`; `part/ch.html` -> `part-ch.html`."""
    return page.replace("/", "-")


def _is_relative(url: str) -> bool:
    return bool(url) and not url.startswith(("#", "/", "data:", "mailto:", "javascript:")) and not re.match(r"^[a-z][a-z0-9+.-]*:", url, re.I)


def _resolve(site_dir: Path, page: str, url: str) -> tuple[Path, str]:
    """The file a page-relative URL names, and its site-relative path (no query or fragment)."""
    clean = url.split("#", 1)[0].split("?", 1)[0]
    rel = posixpath.normpath(posixpath.join(posixpath.dirname(page), clean))
    if rel.startswith("../"):
        raise DownloadError(f"{page}: {url!r} points outside the site")
    return site_dir / rel, rel


def absolute_url(site_url: str, page: str, url: str) -> str:
    """A URL relative to `page` (site-relative) as an absolute URL on the site at `site_url`."""
    path, sep, rest = url.partition("#")
    target = posixpath.normpath(posixpath.join(posixpath.dirname(page), path)) if path else page
    return urljoin(site_url.rstrip("/") + "/", target) + (sep + rest if sep else "")


def _rebase(page: str, url: str, new_dir: str) -> str:
    """A URL relative to `page`, made relative to the folder `new_dir` (both site-relative)."""
    path, sep, rest = url.partition("#")
    if not path:
        return url
    target = posixpath.normpath(posixpath.join(posixpath.dirname(page), path))
    out = posixpath.relpath(target, new_dir)
    return out + (sep + rest if sep else "")


def script_text(js: str) -> str:
    """JavaScript made safe to sit inside <script>…</script> (no early close, no comment state)."""
    return re.sub(r"</(script)", r"<\\/\1", js, flags=re.I).replace("<!--", "<\\!--")


def part_script(part: Path) -> str:
    """A figure's parts for a one-file chapter: every file of the trace's part folder (render/assets.py,
    head_parts: weights.js, then each head's, numbers only, as script-safe JSON) joined in one
    script, so the chapter loads none of them. A single part file (a site built before the
    per-head parts, or a test's) is taken as it is."""
    from ..render import assets

    if part.is_file():
        return part.read_text(encoding="utf-8")
    files = sorted((p for p in part.glob("*.js") if p.is_file()), key=lambda p: assets.part_order(p.name))
    return assets.join_parts([p.read_bytes() for p in files]).decode("ascii")


def style_text(css: str) -> str:
    return re.sub(r"</(style)", r"<\\/\1", css, flags=re.I)


def chapter_pages(site_dir: Path) -> list[str]:
    """Site-relative paths of the built pages that hold figures, sorted."""
    out = []
    for p in sorted(site_dir.rglob("*.html")):
        rel = p.relative_to(site_dir).as_posix()
        if rel.split("/", 1)[0] == DOWNLOADS_DIR or rel == "404.html":
            continue
        text = p.read_text(encoding="utf-8")
        if CHAPTER_MARK in text or PLAY_MARK in text:
            out.append(rel)
    return out


# ---------------------------------------------------------------- the zip


def zip_members(site_dir: Path) -> list[tuple[str, Path]]:
    """(name in the zip, file) for every file the zip holds, sorted by name."""
    members = []
    for p in site_dir.rglob("*"):
        if not p.is_file() or p.is_symlink():
            continue
        rel = p.relative_to(site_dir).as_posix()
        if rel.split("/", 1)[0] == DOWNLOADS_DIR or rel.endswith(ZIP_EXCLUDE_SUFFIXES) or rel in ZIP_EXCLUDE_FILES:
            continue
        members.append((f"{ZIP_ROOT}/{rel}", p))
    return sorted(members)


def notebook_links_in_zip(text: str) -> str:
    """A page as the zip holds it: its notebook link names notebooks/<page>.ipynb, which the zip
    has, not the bundle in downloads/, which it leaves out."""
    def one(m: re.Match) -> str:
        return NOTEBOOK_HREF_RE.sub(lambda h: f'href="{h.group(1)}{NOTEBOOKS_DIR}/{h.group(2)}.ipynb"', m.group(0))
    return NOTEBOOK_LINK_RE.sub(one, text)


def zip_bytes_of(name: str, path: Path) -> bytes:
    data = path.read_bytes()
    if name.endswith(".html"):
        text = data.decode("utf-8")
        if "<!-- course:" in text:
            data = notebook_links_in_zip(ONEFILE_LINK_RE.sub("", ZIP_LINK_RE.sub("", text))).encode("utf-8")
    return data


def write_zip(site_dir: Path, out_path: Path) -> int:
    """Write the deterministic course zip (atomically); returns the number of entries."""
    members = zip_members(site_dir)
    if not any(name == f"{ZIP_ROOT}/index.html" for name, _ in members):
        raise DownloadError(f"{site_dir}: no index.html; build the site first (make site)")
    out_path.parent.mkdir(parents=True, exist_ok=True)
    tmp = out_path.with_name(f".{out_path.name}.tmp")
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=ZIP_LEVEL) as zf:
        for name, path in members:
            info = zipfile.ZipInfo(name, date_time=ZIP_DATE)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.create_system = 3  # Unix, so the permissions below are read
            info.external_attr = ZIP_FILE_MODE << 16
            zf.writestr(info, zip_bytes_of(name, path), compress_type=zipfile.ZIP_DEFLATED, compresslevel=ZIP_LEVEL)
    tmp.replace(out_path)
    return len(members)


# ---------------------------------------------------------------- one chapter, one file

ONEFILE_TEMPLATE = """<!doctype html>
<html lang="{lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1">
<script>document.documentElement.classList.add("course-js")</script>
<title>{title}</title>
{icon}
{styles}
<style>
/* one-file chapter: the page without the site's navigation, its column as wide as the site's
   beside the sidebar (49rem), so prose and figures sit as they do there */
.course-onefile-banner{{margin:0;padding:.6rem 1.2rem;font-size:.7rem;background:var(--md-default-fg-color--lightest)}}
.course-onefile .md-main__inner{{margin-top:0}}
.course-onefile .md-content{{max-width:49rem;margin:0 auto}}
</style>
</head>
<body{body_attrs} class="course-onefile">
{palette}<header class="course-onefile-banner"><p>{banner}</p></header>
<main class="md-main">
<div class="md-main__inner md-grid">
<div class="md-content">
{article}
</div>
</div>
</main>
{scripts}
<script>window.course || document.documentElement.classList.remove("course-js")</script>
</body>
</html>
"""


def _one(pattern: str, text: str, what: str, page: str, flags=re.S | re.I) -> re.Match:
    m = re.search(pattern, text, flags)
    if not m:
        raise DownloadError(f"{page}: cannot find {what} in the built page")
    return m


def extract_article(text: str, page: str) -> str:
    start = _one(r"<article\b[^>]*\bclass=\"md-content__inner[^\"]*\"[^>]*>", text, "the article", page).start()
    depth, pos = 0, start
    tag = re.compile(r"<(/?)article\b", re.I)
    for m in tag.finditer(text, start):
        depth += -1 if m.group(1) else 1
        if depth == 0:
            pos = text.index(">", m.end()) + 1
            return text[start:pos]
    raise DownloadError(f"{page}: the article is not closed")


def _data_uri(path: Path) -> str:
    mime = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
    return f"data:{mime};base64,{base64.b64encode(path.read_bytes()).decode('ascii')}"


def palette_picker(body: str) -> str:
    """For the top of a one-file chapter's body, which has no toggle and no Material bundle: the
    page's script that picks the palette matching the reader's system (light or dark), before
    anything is drawn. "" when the page has none (no palette to pick from)."""
    script = PALETTE_SCRIPT_RE.search(body)
    return f"<script>{script.group(1)}</script>\n" if script else ""


def build_onefile(site_dir: Path, page: str, site_name: str | None = None, warnings: list[str] | None = None,
                  site_url: str | None = None) -> str:
    """The self-contained HTML of one built page (site-relative path `page`). A figure whose
    heavy part is missing from the build is a warning (appended to `warnings`; the hosted page
    lacks it too), or a DownloadError when `warnings` is None."""
    text = (site_dir / page).read_text(encoding="utf-8")
    lang = _one(r"<html\b[^>]*\blang=\"([^\"]+)\"", text, "<html lang>", page).group(1)
    title = _one(r"<title>(.*?)</title>", text, "<title>", page).group(1).strip()
    body_tag = _one(r"<body\b([^>]*)>", text, "<body>", page).group(1)
    body_attrs = "".join(f" {m.group(0)}" for m in re.finditer(r"\b(?:dir|data-md-color-[a-z]+)=\"[^\"]*\"", body_tag))
    head = text[: text.lower().index("<body")]
    body = text[text.lower().index("<body"):]

    styles = []
    for m in LINK_CSS_RE.finditer(head):
        href = _one(r"\bhref=\"([^\"]+)\"", m.group(0), "a stylesheet href", page).group(1)
        if not _is_relative(href):
            raise DownloadError(f"{page}: stylesheet {href} is not a local file; the one-file chapter cannot inline it")
        path, _ = _resolve(site_dir, page, href)
        styles.append(f"<style>{style_text(path.read_text(encoding='utf-8'))}</style>")

    article = COURSE_SCRIPTS_RE.sub("", ONEFILE_LINK_RE.sub("", extract_article(body, page)))
    out_dir = DOWNLOADS_DIR

    # The playground: its weights inline, before the scripts (play.js finds them there and loads
    # nothing); its own script tag leaves the article and is inlined with the others below.
    model_js = []
    play = PLAY_MODEL_RE.search(article)
    if play:
        path, _ = _resolve(site_dir, page, html.unescape(play.group(1)))
        if not path.is_file():
            raise DownloadError(f"{page}: the playground's weights {play.group(1)} are missing from the build")
        model_js.append(f"<script>{script_text(path.read_text(encoding='utf-8'))}</script>")
        article = PLAY_SCRIPT_RE.sub("", article)

    # The parts of this page's figures (each trace's part folder joined in one script), each
    # trace once, in document order.
    parts_js = []
    for rel in dict.fromkeys(PARTS_RE.findall(article)):
        path, _ = _resolve(site_dir, page, html.unescape(rel))
        if not (path.is_file() or (path / "weights.js").is_file()):
            problem = f"{page}: figure data {rel} is missing from the build"
            if warnings is None:
                raise DownloadError(problem)
            warnings.append(f"{problem}; the one-file chapter (and the hosted page) will lack that figure's q, k, v")
            continue
        parts_js.append(f"<script>{script_text(part_script(path))}</script>")

    def inline_img(m: re.Match) -> str:
        src = html.unescape(m.group(2))
        if not _is_relative(src):
            return m.group(0)
        path, _ = _resolve(site_dir, page, src)
        return f'{m.group(1)}"{_data_uri(path)}"'

    def rebase(m: re.Match) -> str:
        url = html.unescape(m.group(2))
        if not _is_relative(url):
            return m.group(0)
        if site_url and m.group(1).strip() == "href":  # the hosted page: works wherever the file is opened
            return f'{m.group(1)}="{html.escape(absolute_url(site_url, page, url), quote=True)}"'
        return f'{m.group(1)}="{html.escape(_rebase(page, url, out_dir), quote=True)}"'

    article = IMG_SRC_RE.sub(inline_img, article)
    article = ATTR_URL_RE.sub(rebase, article)

    scripts = list(parts_js) + model_js
    for src in SCRIPT_SRC_RE.findall(body):
        src = html.unescape(src)
        if not _is_relative(src):
            raise DownloadError(f"{page}: script {src} is not a local file; the one-file chapter cannot inline it")
        if ONEFILE_SKIP_SCRIPTS.search(src):
            continue
        path, _ = _resolve(site_dir, page, src)
        scripts.append(f"<script>{script_text(path.read_text(encoding='utf-8'))}</script>")

    name = site_name or re.sub(r"^.*? - ", "", title)
    # The site's icon, inlined: without one, a browser asks the server for /favicon.ico (a 404
    # logged where the file is served over http)
    icon_link = ICON_LINK_RE.search(head)
    icon_href = icon_link and html.unescape(_one(r"\bhref=\"([^\"]+)\"", icon_link.group(0), "an icon href", page).group(1))
    icon = _data_uri(_resolve(site_dir, page, icon_href)[0]) if icon_href and _is_relative(icon_href) else "data:,"

    rest_of_course = ("open the hosted course and need the network" if site_url
                      else "need the whole course, the zip, beside this file")
    banner = (
        f"{html.escape(title.split(' - ')[0])}: one chapter of <i>{html.escape(name)}</i> in a single file "
        f"(works offline; its links to the rest of the course, such as other chapters, the glossary, "
        f"the playground, the trace files and the notebooks, {rest_of_course})."
    )
    return ONEFILE_TEMPLATE.format(
        lang=html.escape(lang), title=title, styles="\n".join(styles), body_attrs=body_attrs,
        icon=f'<link rel="icon" href="{html.escape(icon, quote=True)}">',
        palette=palette_picker(body),
        banner=banner, article=article, scripts="\n".join(scripts),
    )


def name_clash(pages) -> str | None:
    """Two pages whose one-file chapters would have the same name (part-ch.html from both
    part-ch.md and part/ch.md), said in one line; None when every name is its own."""
    seen: dict[str, str] = {}
    for page in sorted(pages):
        name = onefile_name(page)
        if name in seen:
            a, b = (str(Path(p).with_suffix(".md")) for p in (seen[name], page))
            return (f"content/{a} and content/{b} would both download as {DOWNLOADS_DIR}/{name}. "
                    f"Fix: rename one of them")
        seen[name] = page
    return None


# ---------------------------------------------------------------- everything


def build_downloads(site_dir: Path = DEFAULT_SITE, out_dir: Path = DEFAULT_OUT, log=None,
                    site_url: str | None = None) -> DownloadReport:
    """One-file chapters into site/downloads/, then the zip of the site into out_dir and a copy
    of it into site/downloads/. Prints one line per download (and per warning) to `log`.
    With `site_url` (mkdocs.yml's, set where the site is hosted), the one-file chapters link to
    other pages and to the trace JSON files on the hosted site, absolutely."""
    log = log or sys.stderr  # the stderr of this call (a default would keep the one at import, maybe closed since)
    site_dir, out_dir = Path(site_dir), Path(out_dir)
    if not (site_dir / "index.html").is_file():
        raise DownloadError(f"{site_dir}: no index.html; build the site first (make site)")
    pages = chapter_pages(site_dir)
    clash = name_clash(pages)
    if clash:
        raise DownloadError(clash)
    report = DownloadReport()
    dl = site_dir / DOWNLOADS_DIR
    dl.mkdir(exist_ok=True)
    for page in pages:
        data = build_onefile(site_dir, page, warnings=report.warnings, site_url=site_url).encode("utf-8")
        target = dl / onefile_name(page)
        target.write_bytes(data)
        report.chapters[page] = {
            "path": target,
            "bytes": len(data),
            "gzipBytes": len(gzip.compress(data, compresslevel=6, mtime=0)),  # as gzip -6 / web servers
        }
    zip_path = out_dir / ZIP_NAME
    report.zip_entries = write_zip(site_dir, zip_path)
    report.zip_path = zip_path
    report.zip_bytes = zip_path.stat().st_size
    shutil.copyfile(zip_path, dl / ZIP_NAME)
    if log is not None:
        for line in report.lines():
            print(line, file=log)
        for line in report.warnings:
            print(f"warning: {line}", file=log)
    return report


def main_downloads(args: argparse.Namespace) -> int:
    try:
        build_downloads(Path(args.site_dir), Path(args.out), log=sys.stdout)
    except DownloadError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


def add_parser(sub) -> None:
    p = sub.add_parser("downloads", help="the offline zip and one-file chapters, from build/site")
    p.add_argument("--site-dir", default=str(DEFAULT_SITE), help="the built site (default build/site)")
    p.add_argument("--out", default=str(DEFAULT_OUT), help="where the zip goes (default build/downloads)")
    p.set_defaults(func=main_downloads)
