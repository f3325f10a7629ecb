"""Verdicts about a head come from the data, never typed by hand.

A sentence of a lesson that names a head (L2H3, or "layer 2, head 3") and says what the model
does with it in a verdict word ("carries most of", "needs", "is not needed", "works against", …)
must take that word from a reference ({{ ab.verdict(L2H3) }}, {{ circ.needs(L1H4) }}): those
print a verdict only when it holds under the ways of removing the head that the data holds
(generator/render/ablation.py, circuit_robust.py), or name the one method it is scoped to. A
typed verdict would escape that check, so the build stops at it (one line, file and line).
"""

from __future__ import annotations

import re

from .errors import LessonError

HEAD = re.compile(r"\bL\d+H\d+\b|\b[Ll]ayer\s+\d+,\s+head\s+\d+\b")
VERDICT = re.compile(r"\b(carries (?:most|part|a small part) of|carries|needs|is not needed|does not need|"
                     r"doesn't need|works against|is needed)\b")
REF = re.compile(r"\{\{.*?\}\}", re.S)
FENCE = re.compile(r"^\s*(```|~~~)")
SENTENCE_END = re.compile(r"(?<=[.!?:;])\s+")


def _paragraphs(lines: list[str], first: int):
    """(line number of the paragraph's first line, its text with refs and code spans removed),
    outside fenced blocks."""
    fenced, start, buf = False, None, []
    for n, line in enumerate(lines, start=first):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if fenced or not line.strip():
            if buf:
                yield start, buf
            start, buf = None, []
            continue
        if start is None:
            start = n
        buf.append((n, line))
    if buf:
        yield start, buf


def check_hand_verdicts(lines: list[str], shown: str, first: int = 1) -> None:
    """LessonError at the first sentence that names a head and types a verdict word."""
    for _start, buf in _paragraphs(lines, first):
        text = "\n".join(line for _n, line in buf)
        clean = REF.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), re.sub(r"`[^`]*`", lambda m: " " * len(m.group(0)), text))
        pos = 0
        for sentence in SENTENCE_END.split(clean):
            at = clean.index(sentence, pos)
            pos = at + len(sentence)
            head, word = HEAD.search(sentence), VERDICT.search(sentence)
            if head and word:
                line = buf[clean.count("\n", 0, at + word.start())][0]
                raise LessonError(
                    f"{shown}:{line}", f"'{word.group(0)}' about {' '.join(head.group(0).split())} is typed by hand, "
                    "and a verdict about a head must come from data that two ways of removing it agree on",
                    "refer to the figure's verdict ({{ id.verdict(L2H3) }} or {{ id.needs(L2H3) }}), or write what "
                    "was measured, with its method, instead of a verdict word")
