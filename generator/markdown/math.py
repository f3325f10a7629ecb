r"""`$...$` and `$$...$$` rendered to MathML at build time with latex2mathml (no network, no JS).
`\$` is a literal dollar sign. MATH_INLINE_RE is also what the reading time counts as a formula."""

from __future__ import annotations

import xml.etree.ElementTree as etree
from pathlib import Path

from latex2mathml.converter import convert
from markdown.blockprocessors import BlockProcessor
from markdown.inlinepatterns import InlineProcessor

from ..lessons.source import read_text
from .errors import CourseBuildError

MATH_DISPLAY_RE = r"(?<!\\)\$\$(.+?)\$\$"
MATH_INLINE_RE = r"(?<![\\$\w])\$(?=\S)([^$\n]*?\S)\$(?![\w$])"


def to_mathml(latex: str, display: str, where: str) -> str:
    try:
        return convert(latex.strip(), display=display)
    except Exception as exc:  # latex2mathml raises many kinds; each is a mistake in the formula
        raise CourseBuildError(where, f"math ${latex.strip()}$ cannot be converted to MathML ({type(exc).__name__}: {exc})", "correct the LaTeX") from None


def math_where(shown: str, latex: str) -> str:
    """path:line of the first line of the page's file that contains this formula."""
    path = Path(shown)
    text = read_text(path) if path.is_file() else None
    if text:
        needle = latex.strip().split("\n")[0]
        for n, line in enumerate(text.split("\n"), start=1):
            if needle and needle in line:
                return f"{shown}:{n}"
    return shown


class MathProcessor(InlineProcessor):
    def __init__(self, pattern, md, ext, display: str):
        super().__init__(pattern, md)
        self.ext, self.display = ext, display

    def handleMatch(self, m, data):
        latex = m.group(1)
        html = to_mathml(latex, self.display, math_where(self.ext.state.shown, latex))
        return self.md.htmlStash.store(html), m.start(0), m.end(0)


class EscapedDollar(InlineProcessor):
    def handleMatch(self, m, data):
        return "$", m.start(0), m.end(0)


class MathBlockProcessor(BlockProcessor):
    """A paragraph that starts with `$$` and (possibly several blocks later) ends with `$$`."""

    def __init__(self, parser, ext):
        super().__init__(parser)
        self.ext = ext

    def test(self, parent, block):
        return block.lstrip().startswith("$$")

    def run(self, parent, blocks):
        parts = []
        first = True
        while blocks:
            block = blocks.pop(0)
            text = block.strip()
            if first:
                text = text[2:]
                first = False
            if text.endswith("$$"):
                parts.append(text[:-2])
                break
            parts.append(text)
        else:
            blocks.insert(0, "")  # unterminated: render what there is, the error names it below
            latex = "\n\n".join(parts)
            raise CourseBuildError(math_where(self.ext.state.shown, latex), "a $$ math block is not closed", "end it with $$")
        latex = "\n".join(parts)
        html = to_mathml(latex, "block", math_where(self.ext.state.shown, latex))
        div = etree.SubElement(parent, "div")
        div.set("class", "course-math")
        div.text = self.parser.md.htmlStash.store(html)
        return True


def register(md, ext) -> None:
    md.inlinePatterns.register(MathProcessor(MATH_DISPLAY_RE, md, ext, "block"), "course_math_display", 187)
    md.inlinePatterns.register(MathProcessor(MATH_INLINE_RE, md, ext, "inline"), "course_math", 186)
    md.inlinePatterns.register(EscapedDollar(r"\\\$", md), "course_dollar", 188)
    md.parser.blockprocessors.register(MathBlockProcessor(md.parser, ext), "course_math_block", 75)
