"""course.js, joined from its parts in generator/assets/js/.

The site ships one classic script at assets/generated/course.js (modules do not load from file://,
and the one-file chapters inline scripts as text). Its source is kept in parts, each a section of
one closure; `ORDER` in that folder lists them once, in the order they are joined. Everything that
reads course.js (the build, the one-file chapters, the tests' harness) reads it through
`course_js()`.
"""
from __future__ import annotations

import re

from pathlib import Path

from .asset_files import AssetError, read_text

PARTS_DIR = Path(__file__).resolve().parents[1] / "assets" / "js"
ORDER_FILE = PARTS_DIR / "ORDER"

# The closure the parts share: one scope, so one set of helpers, and nothing leaks to window
# except what a part sets on it on purpose.
OPENING = "(function () {\n  'use strict';\n\n"
CLOSING = "})();\n"


class ScriptError(AssetError):
    """The parts and ORDER disagree: a part listed twice or missing, or a file ORDER leaves out."""

    def __init__(self, problem: str):
        super().__init__(ORDER_FILE, problem, "list each part in the folder once in ORDER, or restore both from git")


def part_names() -> list[str]:
    """The parts in join order: ORDER's lines, less blanks and `#` comments."""
    names = [ln.strip() for ln in read_text(ORDER_FILE).splitlines()]
    names = [n for n in names if n and not n.startswith("#")]
    on_disk = {p.name for p in PARTS_DIR.glob("*.js")}
    dupes = sorted({n for n in names if names.count(n) > 1})
    missing = [n for n in names if n not in on_disk]
    unlisted = sorted(on_disk - set(names))
    for what, found in (("listed twice", dupes), ("listed but missing", missing), ("not listed", unlisted)):
        if found:
            raise ScriptError(f"part(s) {what}: {', '.join(found)}")
    return names


def parts() -> list[tuple[str, str]]:
    """(name, text) of every part, in join order."""
    return [(n, read_text(PARTS_DIR / n)) for n in part_names()]


# A line that is only a // comment, and a line's indentation. The parts have no template literals
# and no line ending in a backslash, so neither is ever inside a string, and neither changes what
# the code does.
COMMENT_LINE_RE = re.compile(r"^[ \t]*//.*\n", re.M)
INDENT_RE = re.compile(r"^[ \t]+", re.M)


def without_comments_or_indents(text: str) -> str:
    """`text` (a part of course.js or play.js) less its whole-line // comments and its lines'
    indentation (a tenth of what is left), ending in one newline."""
    return INDENT_RE.sub("", COMMENT_LINE_RE.sub("", text.rstrip("\n") + "\n"))


def course_js() -> str:
    """The joined script: the header part first, outside the closure, then the rest inside it.
    The parts' comment lines stay in the sources (a sixth of the bytes every page would load)."""
    named = parts()
    (_, header), body = named[0], named[1:]
    code = [without_comments_or_indents(t) for _, t in body]
    return header.rstrip("\n") + "\n" + OPENING + "\n".join(code) + CLOSING


def shipped_js(text: str) -> str:
    """`text` (course.js or play.js) as the site ships it: minified by rjsmin, a JavaScript
    minifier that reads the language's tokens (strings, regular expressions, comments), not
    lines. The sources stay readable, and the tests' twins read them; the browser tests read the
    built site, so they run the minified code."""
    import rjsmin

    return rjsmin.jsmin(text, keep_bang_comments=True).rstrip("\n") + "\n"
