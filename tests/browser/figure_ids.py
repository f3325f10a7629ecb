"""Find a figure of a built page by what it is (its kind, its sentence, its caption), not by its
number: figures are numbered in page order, so a figure added above renumbers every later one and
a test that asked for `#fig-7` would then test another figure (or fail).

    fig = figure_id(site / "attention.html", kind="attention", sentence="Tom had a red ball")
    page.goto(f"{base}/attention.html#{fig}:layer=3,head=2,token=3")

The page is read from the built file, so the id is known before the page is opened (a URL's hash
names the figure). Exactly one figure must match, or the test stops with the page's figures listed.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from pathlib import Path

FIGURE_RE = re.compile(r'<figure class="course-fig[^"]*" id="(fig-\d+)" data-kind="([\w-]+)"')
TOKEN_OPTION_RE = re.compile(r"<option value=\"\d+\"[^>]*>\d+: (.*?)</option>")
CAPTION_RE = re.compile(r'<span class="course-caption">(.*?)</span>', re.S)
TAG_RE = re.compile(r"<[^>]+>")


@dataclass(frozen=True)
class Figure:
    id: str  # "fig-7"
    kind: str  # data-kind
    tokens: str  # the token menu's tokens as one text ("" for a figure without one)
    caption: str  # the caption's text ("" without one)

    def __str__(self) -> str:
        return f"{self.id} {self.kind} {self.caption[:60]!r} {self.tokens[:60]!r}"


def _element(page: str, start: int) -> str:
    """The figure element that starts at `start`, to its own </figure> (figures nest: a
    scoreboard holds its example figures)."""
    depth = 0
    for tag in re.finditer(r"<figure\b|</figure>", page[start:]):
        depth += 1 if tag.group(0) == "<figure" else -1
        if depth == 0:
            return page[start : start + tag.end()]
    return page[start:]


def _own(element: str) -> str:
    """The element without the figures nested in it."""
    inner = element[1:]
    for m in list(FIGURE_RE.finditer(inner))[::-1]:
        nested = _element(inner, m.start())
        inner = inner[: m.start()] + inner[m.start() + len(nested) :]
    return inner


def figures(page_html: str) -> list[Figure]:
    """Every figure of the page, in page order."""
    found = []
    for m in FIGURE_RE.finditer(page_html):
        own = _own(_element(page_html, m.start()))
        menu = re.search(rf'<select id="{m.group(1)}-token"[^>]*>(.*?)</select>', own, re.S)
        tokens = "".join(html.unescape(t) for t in TOKEN_OPTION_RE.findall(menu.group(1))) if menu else ""
        caption = CAPTION_RE.search(own)
        text = html.unescape(TAG_RE.sub("", caption.group(1))) if caption else ""
        found.append(Figure(m.group(1), m.group(2), tokens.replace("·", " "), " ".join(text.split())))
    return found


def figure_id(page: Path | str, kind: str | None = None, sentence: str | None = None, caption: str | None = None) -> str:
    """The id ("fig-7") of the one figure of `page` (a built .html file) of this kind, whose token
    menu reads `sentence` (a part of it will do) and whose caption holds `caption`."""
    text = Path(page).read_text(encoding="utf-8")
    every = figures(text)
    match = [f for f in every if (kind is None or f.kind == kind)
             and (sentence is None or sentence in f.tokens)
             and (caption is None or caption in f.caption)]
    if len(match) != 1:
        listed = "\n  ".join(map(str, every))
        raise AssertionError(f"{len(match)} figures of {Path(page).name} match kind={kind!r} sentence={sentence!r} "
                             f"caption={caption!r}; its figures:\n  {listed}")
    return match[0].id


def course_figure(course: Path, page: str, **what) -> str:
    """figure_id on a page of the shared course build (the `course` fixture's folder)."""
    return figure_id(Path(course) / "build" / "site" / page, **what)


# The course's figures the browser tests open, by what they are (course_figure's arguments).
FIRST_HEATMAP = dict(kind="attention", caption="One head of the tiny model reading the sentence")  # attention.html, Lily
REPEATED_WORDS = dict(kind="attention", sentence="Tom had a red ball. Tom gave the red ball to Sam.")  # attention.html, 15 tokens


def first_of(page: Path | str, kind: str) -> str:
    """The id of the first figure of this kind on `page` (a built .html file)."""
    found = [f.id for f in figures(Path(page).read_text(encoding="utf-8")) if f.kind == kind]
    assert found, f"{Path(page).name} has no figure of kind {kind!r}"
    return found[0]
