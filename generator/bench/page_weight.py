"""What a built page weighs (for `make bench`, through generator.bench.browser): the script code
each page loads, the trace parts its figures name (shown heads, a head switch, "All heads", every
head), and each one-file chapter as generator/site/downloads.py makes it. Figures, not tests."""

from __future__ import annotations

import gzip
import html
import re
from pathlib import Path

from . import met

SCRIPT_RE = re.compile(r"<script\b([^>]*)>(.*?)</script>", re.S | re.I)
SRC_RE = re.compile(r"\bsrc=\"([^\"]+)\"")
TYPE_RE = re.compile(r"\btype=\"([^\"]+)\"")
PARTS_RE = re.compile(r"\sdata-parts=\"([^\"]+)\"")
INLINE_PART_RE = re.compile(r"<script>window\.courseTraceParts = .*?</script>", re.S)  # a trace's parts, joined
JS_TYPES = ("", "text/javascript", "module", "application/javascript")
SCRIPT_TARGET, ONEFILE_TARGET = 1.8e6, 2.5e6  # bytes: script code per page, one one-file chapter


def local_path(page: Path, url: str) -> Path | None:
    url = html.unescape(url).split("#", 1)[0].split("?", 1)[0]
    if not url or re.match(r"^[a-z][a-z0-9+.-]*:", url, re.I) or url.startswith("/"):
        return None
    return (page.parent / url).resolve()


def page_scripts(page: Path) -> dict:
    """What one built page loads as script: its <script src> files and inline JavaScript (counted),
    and the trace parts its figures name (not counted as code): the shown heads' (loaded on idle
    after the first paint), the largest head's (what a head switch loads), weights.js ("All heads")
    and every head's (courseReady())."""
    text = page.read_text(encoding="utf-8")
    files, inline = {}, 0
    for m in SCRIPT_RE.finditer(text):
        attrs, body = m.group(1), m.group(2)
        t = TYPE_RE.search(attrs)
        if t and t.group(1).lower() not in JS_TYPES:
            continue  # JSON data (course-data), not code
        src = SRC_RE.search(attrs)
        if src:
            path = local_path(page, src.group(1))
            if path is not None and path.is_file():
                files[path] = path.stat().st_size
        else:
            inline += len(body.encode("utf-8"))
    folders, shown = page_parts(page, text)
    every = [f for d in folders for f in sorted(d.glob("*.js"))]
    code = sum(files.values()) + inline
    gz = sum(_gz(p) for p in files) + inline  # inline: raw (small)
    return {"bytes": code, "gzip": gz, "files": {p.name: n for p, n in files.items()}, "inline": inline,
            "partsBytes": sum(p.stat().st_size for p in every), "parts": len(every), "traces": len(folders),
            "shownParts": len(shown), "shownGzip": sum(_gz(p) for p in shown),
            "headGzipMax": max((_gz(p) for p in every if p.name != "weights.js"), default=0),
            "weightsGzip": sum(_gz(d / "weights.js") for d in folders if (d / "weights.js").is_file())}


def _gz(p: Path) -> int:
    return len(gzip.compress(p.read_bytes(), 6, mtime=0))


FIGURE_TAG_RE = re.compile(r"<figure\b[^>]*\bclass=\"course-fig\"[^>]*>.*?</figure>", re.S)
LAYER_RE, HEAD_RE = re.compile(r'\sdata-layer="(\d+)"'), re.compile(r'\sdata-head="(\d+)"')


def page_parts(page: Path, text: str) -> tuple[list[Path], list[Path]]:
    """The part folders a page's figures name (data-parts; render/assets.py head_parts), and the
    parts it loads before the reader touches anything: each figure's shown head (data-layer,
    data-head), one per trace."""
    folders, shown = {}, {}
    for fig in FIGURE_TAG_RE.finditer(text):
        body = fig.group(0)
        layer, head = LAYER_RE.search(body), HEAD_RE.search(body)
        for url in PARTS_RE.findall(body):
            d = local_path(page, url)
            if d is None or not d.is_dir():
                continue
            folders.setdefault(d, None)
            if layer and head:
                p = d / f"{layer.group(1)}-{head.group(1)}.js"
                if p.is_file():
                    shown.setdefault(p, None)
    return list(folders), list(shown)


def site_weights(site: Path) -> dict:
    """Script code of every built page, and the size of every one-file chapter (made in memory by
    generator/site/downloads.py, as `make site` writes them)."""
    from ..site import downloads

    pages = {}
    for p in sorted(site.rglob("*.html")):
        rel = p.relative_to(site).as_posix()
        if rel.split("/", 1)[0] == downloads.DOWNLOADS_DIR or rel == "404.html":
            continue
        pages[rel] = page_scripts(p)
    onefile = {}
    for rel in downloads.chapter_pages(site):
        text = downloads.build_onefile(site, rel, warnings=[])
        data = text.encode("utf-8")
        inlined = sum(len(m.group(0).encode("utf-8")) for m in INLINE_PART_RE.finditer(text))
        onefile[rel] = {"bytes": len(data), "gzip": len(gzip.compress(data, 6, mtime=0)), "partsBytes": inlined,
                        "playground": downloads.PLAY_MARK in text}
    return {"site": str(site), "pages": pages, "onefile": onefile}


def weights_report(w: dict) -> str:
    lines = [f"what a page weighs — {w['site']}"]
    if not w["pages"]:
        return lines[0] + ": no built pages"
    worst = max(v["bytes"] for v in w["pages"].values())
    lines.append(f"  script code per page (every <script src> + inline JS; trace parts not counted)"
                 f"  [target <= {SCRIPT_TARGET / 1e6:.1f} MB: {met(worst <= SCRIPT_TARGET)}, max {worst / 1e6:.2f} MB]")
    for rel, v in w["pages"].items():
        top = ", ".join(f"{n} {b / 1e3:.0f} kB" for n, b in sorted(v["files"].items(), key=lambda x: -x[1])[:3])
        parts = (f"; trace parts: {v['shownParts']} shown head(s) {v['shownGzip'] / 1e3:.0f} kB gzipped before any interaction,"
                 f" a head switch <= {v['headGzipMax'] / 1e3:.1f} kB, All heads {v['weightsGzip'] / 1e3:.0f} kB,"
                 f" every head of {v['traces']} trace(s) {v['partsBytes'] / 1e3:.0f} kB raw") if v["parts"] else ""
        lines.append(f"    {rel}: {v['bytes'] / 1e6:.2f} MB ({v['gzip'] / 1e6:.2f} MB gzipped; {top}; inline {v['inline'] / 1e3:.1f} kB){parts}")
    chapters = {rel: v for rel, v in w["onefile"].items() if not v.get("playground")}
    if chapters:
        worst = max(v["bytes"] for v in chapters.values())
        lines.append(f"  one-file chapters  [target <= {ONEFILE_TARGET / 1e6:.1f} MB: {met(worst <= ONEFILE_TARGET)},"
                     f" max {worst / 1e6:.2f} MB]")
        for rel, v in chapters.items():
            lines.append(f"    downloads/{rel.replace('/', '-')}: {v['bytes'] / 1e6:.2f} MB ({v['gzip'] / 1e6:.2f} MB gzipped;"
                         f" of which inlined trace parts {v['partsBytes'] / 1e6:.2f} MB)")
    for rel, v in w["onefile"].items():
        if v.get("playground"):  # the tiny model's weights inline: what it is for, so no chapter's size goal
            lines.append(f"  one-file playground downloads/{rel.replace('/', '-')}: {v['bytes'] / 1e6:.2f} MB"
                         f" ({v['gzip'] / 1e6:.2f} MB gzipped), the model's weights inline; not a chapter, no size goal")
    return "\n".join(lines)
