r"""`$...$` and `$$...$$` rendered to MathML at build time with latex2mathml (no network, no JS).
`\$` is a literal dollar sign. MATH_INLINE_RE is also what the reading time counts as a formula.

Brackets grow with what they hold: `\left( \right)` and the brace of `cases` come out of
latex2mathml as `<mo stretchy="true">`, and `\big[`-style sizes get `stretchy="true"` too, or
a browser sizes them only by the operator dictionary. A browser can only stretch a bracket with
a font that has an OpenType MATH table, and Chromium's generic `math` family is often a text font
(measured: the brackets of the Attention formula stay 16 px high beside a 45 px fraction). So
every formula names the common math fonts first (MATH_FONTS) and keeps `math` as the fallback."""

from __future__ import annotations

import re
import xml.etree.ElementTree as etree
from pathlib import Path

from latex2mathml.converter import convert
from markdown.blockprocessors import BlockProcessor
from markdown.inlinepatterns import InlineProcessor

from ..lessons.source import read_text
from .build_errors import CourseBuildError

MATH_DISPLAY_RE = r"(?<!\\)\$\$(.+?)\$\$"
MATH_INLINE_RE = r"(?<![\\$\w])\$(?=\S)([^$\n]*?\S)\$(?![\w$])"


# A math font for each common system: macOS, Linux (fonts-dejavu-extra, TeX), Windows.
MATH_FONTS = "'STIX Two Math', 'DejaVu Math TeX Gyre', 'Latin Modern Math', 'Cambria Math', math"
_SIZED_MO = re.compile(r"<mo(?![^>]*\bstretchy=)(?=[^>]*\bminsize=)")  # \big( and kin: a fixed size, but no stretchy


def grow_brackets(mathml: str) -> str:
    """latex2mathml's MathML with sized brackets marked stretchy and the math fonts named."""
    mathml = _SIZED_MO.sub('<mo stretchy="true" symmetric="true"', mathml)
    return mathml.replace("<math ", f'<math style="font-family: {MATH_FONTS}" ', 1)


def to_mathml(latex: str, display: str, where: str) -> str:
    try:
        return grow_brackets(convert(latex.strip(), display=display))
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
