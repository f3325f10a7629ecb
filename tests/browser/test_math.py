"""Formulas in Chromium: brackets and the cases brace grow with what they hold. The
page is the MathML that generator/markdown/math.py writes, inside Material's typeset styles'
stand-in (a text font on the page), as a lesson shows it."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from generator.markdown.math import to_mathml

from .conftest import page_opener

pytestmark = pytest.mark.browser

FORMULA = r"\operatorname{softmax}\!\left(\frac{Q K^\top}{\sqrt{d_k}} + M\right) V, \qquad M_{ij} = \begin{cases} 0 & j \le i \\ -\infty & j > i \end{cases}"
BIG = r"\big[\,\text{head}_1 \;\; \cdots \;\; \text{head}_H\,\big]\, W_O"


def math_font() -> str | None:
    """The first of math.py's fonts that fontconfig knows, or None."""
    if not shutil.which("fc-list"):
        return None
    names = subprocess.run(["fc-list", ":", "family"], capture_output=True, text=True).stdout
    return next((f for f in ("STIX Two Math", "DejaVu Math TeX Gyre", "Latin Modern Math") if f in names), None)


def test_brackets_and_the_cases_brace_stretch(browser, tmp_path):
    if math_font() is None:
        pytest.skip("no math font installed (apt-get install fonts-dejavu-extra): nothing can stretch")
    page_html = tmp_path / "math.html"
    page_html.write_text(
        "<!doctype html><html><head><meta charset='utf-8'><style>body { font-family: 'DejaVu Sans', sans-serif; }</style></head><body>"
        f"<div id='f'>{to_mathml(FORMULA, 'block', 'page.md:1')}</div><div id='b'>{to_mathml(BIG, 'block', 'page.md:2')}</div></body></html>",
        encoding="utf-8",
    )
    with page_opener(browser, set()) as open_:
        page = open_().page
        page.goto(page_html.as_uri())
        h = page.evaluate("""() => {
          const height = el => el.getBoundingClientRect().height;
          const mo = (root, ch) => Array.from(document.querySelectorAll(root + ' mo')).filter(o => o.textContent === ch);
          return {paren: height(mo('#f', '(')[0]), close: height(mo('#f', ')')[0]), frac: height(document.querySelector('#f mfrac')),
                  brace: height(mo('#f', '{')[0]), cases: height(document.querySelector('#f mtable')),
                  big: height(mo('#b', '[')[0]), text: height(document.querySelector('#b mtext'))};
        }""")
    assert h["paren"] >= 0.9 * h["frac"] and h["close"] >= 0.9 * h["frac"], h  # before the fix: 16 px beside a 45 px fraction
    assert h["brace"] >= 0.9 * h["cases"], h
    assert h["big"] > 1.1 * h["text"], h  # \big is 1.2em: larger than the text it holds
