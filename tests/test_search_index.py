"""The site's search finds the lessons' prose, not the figures' insides (issue 46, item 6): a
result read "first0.576second0.212third0.212 StoryNumbersFormulaCode", the softmax figure's
rows and a tab set's names run together. Read from the shared build of the real course."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser

import pytest

from course_builds import shared_course

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


class FigureTexts(HTMLParser):
    """Every text inside a course figure (<figure class="course-fig">) or a tab set's row of
    names (div.tabbed-labels), each text node as one string; the page's other text as written."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack: list[bool] = []  # per open element: inside a figure or a tab row
        self.inside: list[str] = []
        self.outside: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag in VOID:
            return
        cls = (dict(attrs).get("class") or "").split()
        inner = bool(self.stack and self.stack[-1]) or (tag == "figure" and "course-fig" in cls) or "tabbed-labels" in cls
        self.stack.append(inner)

    def handle_endtag(self, tag):
        if tag not in VOID and self.stack:
            self.stack.pop()

    def handle_data(self, data):
        if self.stack and self.stack[-1]:
            text = " ".join(data.split())
            if text:
                self.inside.append(text)
        else:
            self.outside.append(data)  # as written: a sentence runs on across its inline elements


@pytest.fixture(scope="module")
def site():
    return shared_course() / "build" / "site"


def index_texts(site) -> dict[str, str]:
    docs = json.loads((site / "search" / "search_index.json").read_text(encoding="utf-8"))["docs"]
    by_page: dict[str, str] = {}
    for doc in docs:
        page = doc["location"].split("#")[0] or "index.html"
        by_page[page] = by_page.get(page, "") + " " + re.sub(r"<[^>]+>", " ", doc["text"])
    return by_page


def test_no_figures_text_and_no_tab_names_are_in_the_search_index(site):
    index = index_texts(site)
    assert "StoryNumbers" not in " ".join(index.values())
    leaked: dict[str, list[str]] = {}
    checked = 0
    for page in sorted(index):
        path = site / page
        if not path.is_file():
            continue
        parser = FigureTexts()
        parser.feed(path.read_text(encoding="utf-8"))
        prose = " ".join("".join(parser.outside).split())
        # a figure's text long enough to be its own (not a word the prose uses too)
        own = {t for t in parser.inside if len(t) >= 12 and t not in prose}
        checked += len(own)
        words = " ".join(index[page].split())
        hits = sorted(t for t in own if t in words)
        if hits:
            leaked[page] = hits[:5]
    assert checked > 100  # the figures were found
    assert leaked == {}
