"""Passages whose numbers need traces: `{: .needs-traces }` on the line right under a paragraph,
a list item, a table or a fenced code block (its closing fence).

    In this head ·it gives {{ it.weight(it, animal, 1) }} of its attention to ·animal.
    {: .needs-traces }

With the traces, the mark is dropped and the passage reads as written. Without them (a reference in
it has no number in this build), the whole passage is replaced by one short note for readers. A reference with no number anywhere else stops the
build with its line: a reader's page never holds a placeholder inside a sentence.

Marked passages next to each other (a lead-in sentence and its table) are one passage: replaced
together, by one note, when a reference in any of them has no number. The first note for the same
models on a page that a reader sees without opening anything says why, the later ones are short; a passage right before or after a pending
figure of its models is taken out with no note, since the figure's box says what is missing. A
mark under passages that reference no figure is refused (nothing there can go missing). attr_list puts the mark's class on
paragraphs and list items (and to the paragraph that holds a fenced code block's stash placeholder,
whose references inside code are looked up in the stash); a table takes the mark as a last row of
one cell, which is read here. Where the mark may stand is checked on the page's lines
(:func:`check_marks`) before Markdown reads them, so a misplaced mark names its line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from xml.etree.ElementTree import Element

from markdown.treeprocessors import Treeprocessor

from ..lessons.errors import fail
from ..lessons.refs import strip_code_spans
from ..lessons.source import walk_lines
from ..render import pending as pending_render
from .build_errors import CourseBuildError, raise_kept

MARK_CLASS = "needs-traces"
MARK = "{: .needs-traces }"
MARKABLE = ("p", "li", "table")
MARK_RE = re.compile(r"\{:?[ \t]*\.needs-traces\b")  # the mark, however it is spaced
MARK_LINE_RE = re.compile(r"^[ \t]*\{:?[ \t]*\.needs-traces[ \t]*\}[ \t]*$")  # a line that is only the mark
STASH_RE = re.compile("\x02wzxhzdk:\\d+\x03")  # Python-Markdown's htmlStash placeholder
CODE_REF_RE = re.compile(r"__course_ref_\d+__")  # lessons.refs.CODE_REF_PREFIX
PENDING_BOX_RE = re.compile(r'^<figure class="course-fig course-pending"[^>]*?\sdata-model="([^"]+)"')  # render/templates/_parts.html
FIX = f"write `{MARK}` on the line right under the paragraph, list item or table that holds it, so readers get a short note until the traces exist"


@dataclass(frozen=True)
class PendingRef:
    """A reference that has no number in this build, as RefProcessor met it."""

    where: str
    raw: str
    model: str
    reason: str  # why it has no number: "the traces of model gpt2 ... are missing"
    remedy: str
    tracing: bool = False  # `make serve` is tracing its figure's sentence: the next build has the number


def check_marks(lines: list[str], shown: str, first_line: int) -> list[int]:
    """The line numbers of the page's marks; a mark that shares its line or follows a blank line
    (where Markdown would not tie it to the passage above) is a one-line error."""
    found = []
    for i, line, role, _fence in walk_lines(lines):
        if role != "prose" or not MARK_RE.search(strip_code_spans(line)):
            continue  # a mark inside code is shown, not read
        where = f"{shown}:{first_line + i}"
        if not MARK_LINE_RE.match(line):
            fail(where, f"the mark `{MARK}` shares its line with text", "put it on a line of its own, right under the passage it marks")
        if i == 0 or not lines[i - 1].strip():
            fail(where, f"the mark `{MARK}` follows a blank line, so it marks nothing", "put it right under the last line of the paragraph, list item or table, with no blank line between")
        found.append(first_line + i)
    return found


def _classes(el: Element) -> list[str]:
    return (el.get("class") or "").split()


def _drop_mark(el: Element) -> None:
    rest = [c for c in _classes(el) if c != MARK_CLASS]
    if rest:
        el.set("class", " ".join(rest))
    else:
        el.attrib.pop("class", None)


def _mark_tables(root: Element) -> None:
    """A table's mark is its last row, one cell holding only the mark: drop the row, mark the table."""
    for table in root.iter("table"):
        body = table.find("tbody")
        rows = body.findall("tr") if body is not None else []
        if not rows:
            continue
        cells = list(rows[-1])
        if cells and MARK_LINE_RE.match(cells[0].text or "") and not len(cells[0]) and all(not (c.text or "").strip() and not len(c) for c in cells[1:]):
            body.remove(rows[-1])
            if not body.findall("tr"):
                table.remove(body)
            table.set("class", " ".join(_classes(table) + [MARK_CLASS]))


class NeedsTraces(Treeprocessor):
    """After the references are filled in (inline, 20) and attr_list (8) has read the marks."""

    def __init__(self, md, ext):
        super().__init__(md)
        self.ext = ext

    def code_refs_in(self, text: str) -> list[str]:
        """The placeholders of references inside code in `text`: in code spans, and in fenced code
        blocks, which SuperFences has put in the stash."""
        found = CODE_REF_RE.findall(text)
        for held in STASH_RE.findall(text):
            found += CODE_REF_RE.findall(self.stashed(held))
        return found

    def stashed(self, placeholder: str) -> str:
        """The HTML the stash holds for a placeholder ("" for anything else)."""
        blocks = self.md.htmlStash.rawHtmlBlocks
        i = int(placeholder[len("\x02wzxhzdk:") : -1])
        return blocks[i] if i < len(blocks) and isinstance(blocks[i], str) else ""

    def pending_in(self, el: Element) -> list[PendingRef]:
        state = self.ext.state
        text = "".join(el.itertext())
        found = [state.pending[p] for p in STASH_RE.findall(text) if p in state.pending]
        for placeholder in self.code_refs_in(text):
            hit = state.code_pending(placeholder)
            if hit is not None:
                found.append(hit)
        return found

    def run(self, root: Element) -> None:
        raise_kept(self.ext.state.errors)  # a reference with a mistake was dropped: its passage is no evidence
        _mark_tables(root)
        parents = {child: parent for parent in root.iter() for child in parent}
        marked = [el for el in root.iter() if MARK_CLASS in _classes(el)]
        groups: list[list[Element]] = []  # marked passages next to each other go together
        for k, el in enumerate(marked):
            _drop_mark(el)
            if el.tag not in MARKABLE:
                raise CourseBuildError(self.mark_where(k), f"the mark `{MARK}` stands under a <{el.tag}>, which it cannot replace", "mark a paragraph, a list item, a table or a fenced code block")
            if any(a in g for g in groups for a in self.ancestors(el, parents)):
                continue  # inside a marked passage: it goes with that one
            last = groups[-1][-1] if groups else None
            if last is not None and parents.get(last) is parents[el] and self.next_to(last, el, parents):
                groups[-1].append(el)
            else:
                groups.append([el])
        noted: set[tuple[str, ...]] = set()  # the models whose full note a reader has seen by now
        for group in groups:
            hits = [h for el in group for h in self.pending_in(el)]
            if hits:
                models = tuple(dict.fromkeys(h.model for h in hits))
                if self.beside_pending_box(group, parents, models):
                    self.drop(group, parents)
                    continue
                self.replace(group, parents, models, again=models in noted)
                if self.open_at_first(group[0], parents):
                    noted.add(models)
            elif not any(self.refers(el) for el in group):
                raise CourseBuildError(self.mark_where(marked.index(group[0])), f"the mark `{MARK}` stands under a passage with no reference to a figure, so no trace can be missing from it", "drop the mark, or keep it right under a passage next to one that reads a figure's numbers")
        self.refuse_leftovers(root)

    def mark_where(self, k: int) -> str:
        state = self.ext.state
        return f"{state.shown}:{state.marks[k]}" if k < len(state.marks) else state.shown

    @staticmethod
    def next_to(a: Element, b: Element, parents: dict) -> bool:
        siblings = list(parents[a])
        i = siblings.index(a)
        return i + 1 < len(siblings) and siblings[i + 1] is b and not (a.tail or "").strip()

    @staticmethod
    def ancestors(el: Element, parents: dict):
        while el in parents:
            el = parents[el]
            yield el

    def refers(self, el: Element) -> bool:
        """Whether `el` holds a reference to a figure or to the training log (which traces fill in)."""
        text = "".join(el.itertext())
        state = self.ext.state
        code = {held: ref for held, ref in state.code_refs}
        return any(p in state.trace_refs for p in STASH_RE.findall(text)) or any(
            p in code and code[p].target != "model" for p in self.code_refs_in(text))

    def pending_box_models(self, el: Element | None) -> set[str]:
        """The model of the pending figure `el` stands for (the paragraph that holds a figure's
        stash placeholder and nothing else), or no model."""
        if el is None or el.tag != "p" or len(el):
            return set()
        held = STASH_RE.fullmatch((el.text or "").strip())
        return set(PENDING_BOX_RE.findall(self.stashed(held.group(0)).lstrip())) if held else set()

    def beside_pending_box(self, group: list[Element], parents: dict, models: tuple[str, ...]) -> bool:
        """Whether the passages sit right before or after a pending figure of their models, whose
        box already tells the reader that those numbers are not in this copy."""
        if group[0].tag == "li" or (group[-1].tail or "").strip():
            return False  # an item stays an item; text after the passages stays where it is
        siblings = list(parents[group[0]])
        i, j = siblings.index(group[0]), siblings.index(group[-1])
        before = siblings[i - 1] if i > 0 and not (siblings[i - 1].tail or "").strip() else None
        after = siblings[j + 1] if j + 1 < len(siblings) else None
        return any(set(models) <= self.pending_box_models(el) for el in (before, after))

    def open_at_first(self, el: Element, parents: dict) -> bool:
        """Whether a reader sees `el` without opening anything: not inside a <details> (an
        answer, an aside) nor in a content tab other than the first (so the note that says why
        is not one the reader may never open)."""
        for box in self.ancestors(el, parents):
            if box.tag == "details":
                return False
            if "tabbed-block" in _classes(box):
                blocks = [b for b in parents[box] if "tabbed-block" in _classes(b)]
                if blocks and blocks[0] is not box:
                    return False
        return True

    @staticmethod
    def drop(group: list[Element], parents: dict) -> None:
        """Take the passages out (their neighbour, a pending box, says what is missing)."""
        parent = parents[group[0]]
        for el in group:
            parent.remove(el)

    def replace(self, group: list[Element], parents: dict, models: tuple[str, ...], again: bool = False) -> None:
        """Put one note in place of the passages of `group` (the short one when `again`)."""
        first, parent = group[0], parents[group[0]]
        placeholder = self.md.htmlStash.store(pending_render.traces_note(models, again))
        tail = group[-1].tail
        for el in group[1:]:
            parent.remove(el)
        if first.tag == "li":  # the item stays an item of its list
            for child in list(first):
                first.remove(child)
            first.text, first.tail = placeholder, tail
            return
        note = Element("p")
        note.text, note.tail = placeholder, tail
        parent[list(parent).index(first)] = note

    def refuse_leftovers(self, root: Element) -> None:
        """A reference with no number outside a marked passage, or a mark Markdown did not read."""
        state = self.ext.state
        for el in root.iter():
            for text in (el.text if el.tag != "code" else None, el.tail):
                if not text:
                    continue
                for placeholder in STASH_RE.findall(text):
                    hit = state.pending.get(placeholder)
                    if hit is not None:
                        refuse(hit)
                if MARK_RE.search(text):
                    where = f"{state.shown}:{state.marks[0]}" if state.marks else state.shown
                    raise CourseBuildError(where, f"the mark `{MARK}` was left as text", "put it right under a paragraph, list item or table (attr_list must be in mkdocs.yml's markdown_extensions)")


def refuse(hit: PendingRef):
    if hit.tracing:  # not a mistake: the trace is under way, and the page shows "tracing…"
        return
    raise CourseBuildError(hit.where, f"reference {{{{ {hit.raw} }}}} has no number in this build: {hit.reason}", f"{FIX}; {hit.remedy}")
