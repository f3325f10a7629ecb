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
mark under passages that reference neither a figure nor a model is refused (nothing there can go
missing); one that references only a model's published facts ({{ model.gpt2.nHeads }}) stays
where that model has traces, and goes, with no note, in a copy built without them (a learning goal
or a link that promises what that model's figures show). attr_list puts the mark's class on
paragraphs and list items (and to the paragraph that holds a fenced code block's stash placeholder,
whose references inside code are looked up in the stash); a table takes the mark as a last row of
one cell, which is read here. Where the mark may stand is checked on the page's lines
(:func:`check_marks`) before Markdown reads them, so a misplaced mark names its line.

A copy built without a model's weights (every copy built where GPT-2 cannot be downloaded) has no
trace of that model at all (render/pending.lacks_model). Where every figure of a page is such a
model's pending box, the page gets one notice under its title (render/templates/model_notice.html)
saying what it shows here and what a copy built with the weights adds; where that is true of an
`##` section only (a chapter's GPT-2 section), the section gets the notice under its heading
(:class:`ModelGaps`). Under a notice, each section has at most one short "not in this copy" line:
its pending box, or else one line in place of its first marked passage in plain view; the other
marked passages go without a note, and a content tab they leave empty goes too. A copy with the
model's traces has no notice, and every passage reads as written.
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
from ..render.context import Ctx, Missing
from .build_errors import CourseBuildError, raise_kept

MARK_CLASS = "needs-traces"
MARK = "{: .needs-traces }"
MARKABLE = ("p", "li", "table")
MARK_RE = re.compile(r"\{:?[ \t]*\.needs-traces\b")  # the mark, however it is spaced
MARK_LINE_RE = re.compile(r"^[ \t]*\{:?[ \t]*\.needs-traces[ \t]*\}[ \t]*$")  # a line that is only the mark
CODE_REF_RE = re.compile(r"__course_ref_\d+__")  # lessons.refs.CODE_REF_PREFIX
STASH_RE = re.compile("\x02wzxhzdk:\\d+\x03")  # Python-Markdown's htmlStash placeholder
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


def pending_ref(ref, ctx: Ctx) -> PendingRef:
    """Why `ref` has no number in this build, and what the author can do about it."""
    shown = " ".join(ref.raw.split())
    if ref.target == "model":
        model = ref.name.split(".")[0]
        if ".training." in f".{ref.name}.":
            return PendingRef(ref.where, shown, model, f"the tiny model's training log {ctx.training_log_path} is missing", "run `make tiny-model`")
        reason = f"model {model} has no traces here"
    else:
        fig = ctx.figures[ref.target]
        model = fig.directive.model
        what = "head scores" if fig.kind == "scoreboard" else "traces"
        reason = f"the {fig.kind} figure '{ref.target}' ({fig.directive.where}) has no {what} of model {model} here"
    remedy = Missing(model, Missing.TRACE).remedy()
    tracing = ref.target != "model" and bool(ctx.figures[ref.target].numbers.get("tracing"))
    return PendingRef(ref.where, shown, model, reason, remedy[0].lower() + remedy[1:].rstrip("."), tracing)


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
        gaps = ModelGaps(self, root)
        lined: set[int] = set()  # the sections under a notice that have their one line
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
                section = gaps.section_of(group[0], parents)
                if set(models) <= gaps.noticed.get(section, set()):
                    # a notice above says why: the section's one line, if it has no pending box
                    if section in gaps.boxed or section in lined or not self.open_at_first(group[0], parents):
                        self.drop(group, parents)
                    else:
                        self.replace(group, parents, models, section=True)
                        lined.add(section)
                    continue
                if self.beside_pending_box(group, parents, models):
                    self.drop(group, parents)
                    continue
                self.replace(group, parents, models, again=models in noted)
                if self.open_at_first(group[0], parents):
                    noted.add(models)
            elif not any(self.refers(el) for el in group):
                named = {m for el in group for m in self.models_named(el)}
                if not named:
                    raise CourseBuildError(self.mark_where(marked.index(group[0])), f"the mark `{MARK}` stands under a passage with no reference to a figure or a model, so no trace can be missing from it", "drop the mark, or keep it right under a passage next to one that reads a figure's numbers")
                if named & gaps.lacking:  # it promises what a model this copy lacks would show
                    self.drop(group, parents)
        gaps.add_notices(parents)
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

    def models_named(self, el: Element) -> set[str]:
        """The models whose published facts `el` references ({{ model.gpt2.nHead }}, in prose or code)."""
        text = "".join(el.itertext())
        state = self.ext.state
        code = {held: ref for held, ref in state.code_refs}
        found = {state.model_refs[p] for p in STASH_RE.findall(text) if p in state.model_refs}
        return found | {code[p].name.split(".")[0] for p in self.code_refs_in(text) if p in code and code[p].target == "model"}

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
        if parent.tag in ("ul", "ol") and not len(parent) and parent in parents:
            parents[parent].remove(parent)  # a list whose every item went goes too

    def replace(self, group: list[Element], parents: dict, models: tuple[str, ...], again: bool = False, section: bool = False) -> None:
        """Put one note in place of the passages of `group` (the short one when `again`, the
        section's one line under a notice when `section`)."""
        first, parent = group[0], parents[group[0]]
        placeholder = self.md.htmlStash.store(pending_render.traces_note(models, again, section))
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


# ---------------------------------------------------------------- a model this copy lacks

FIGURE_OPEN_RE = re.compile(r'<figure class="course-fig[^"]*"[^>]*>')  # render/templates/_parts.html
ATTR_RE = re.compile(r'\s(data-model|data-pending|data-kind)="([^"]*)"')
SECTION_TAG = "h2"


CONFIG_DRAWN = frozenset({"architecture"})  # figure kinds drawn from config.json alone


class ModelGaps:
    """The sections of one page (split at its `##` headings) and the notices its gaps need."""

    def __init__(self, proc, root: Element):
        self.proc, self.root = proc, root
        self.sections: list[list[Element]] = [[]]
        for child in root:
            if child.tag == SECTION_TAG:
                self.sections.append([])
            self.sections[-1].append(child)
        self.index = {child: i for i, part in enumerate(self.sections) for child in part}
        # a diagram drawn from the model's published config (chapter 4's GPT-2 architecture) needs
        # no weights: it neither splits the page's one notice into per-section ones nor is counted
        figures = [[f for child in part for f in self.figures_in(child) if f[1] or f[2] not in CONFIG_DRAWN]
                   for part in self.sections]
        state = proc.ext.state
        named = {m for m, _, _ in (f for part in figures for f in part) if m}
        named |= set(state.model_refs.values()) | {ref.name.split(".")[0] for _, ref in state.code_refs if ref.target == "model"}
        # a model `make serve` traces on save is on its way (its boxes say "tracing…"), not lacking
        self.lacking = {m for m in named if pending_render.lacks_model(state.ctx.store, m) and m not in state.ctx.traced_on_save}
        self.noticed: dict[int, set[str]] = {}  # section -> the models its notice names
        self.notices: list[tuple[int, set[str], bool, int]] = []  # (section, models, whole page, figures)
        every = [f for part in figures for f in part]
        if self.all_lacking(every):
            models = {m for m, _, _ in every}
            self.noticed = {i: models for i in range(len(self.sections))}
            self.notices.append((0, models, True, len(every)))
        else:
            for i, part in enumerate(figures):
                if i and self.all_lacking(part):
                    self.noticed[i] = {m for m, _, _ in part}
                    self.notices.append((i, self.noticed[i], False, len(part)))
        self.boxed = {i for i, part in enumerate(figures) if i in self.noticed and any(p for _, p, _ in part)}

    def all_lacking(self, figures: list[tuple[str | None, bool, str]]) -> bool:
        return bool(figures) and all(pending and model in self.lacking for model, pending, _ in figures)

    def figures_in(self, el: Element) -> list[tuple[str | None, bool, str]]:
        """(model, pending, kind) of each figure in `el`: a figure is a paragraph that holds only
        its stash placeholder."""
        out = []
        for p in el.iter("p"):
            held = None if len(p) else self.stashed_in(p)
            for tag in FIGURE_OPEN_RE.findall(held or ""):
                attrs = dict(ATTR_RE.findall(tag))
                out.append((attrs.get("data-model"), attrs.get("data-pending") == "true", attrs.get("data-kind", "")))
        return out

    def stashed_in(self, p: Element) -> str | None:
        held = STASH_RE.fullmatch((p.text or "").strip())
        return self.proc.stashed(held.group(0)) if held else None

    def section_of(self, el: Element, parents: dict) -> int:
        """The section of the page `el` stands in (its top-level ancestor's)."""
        while el in parents and parents[el] is not self.root:
            el = parents[el]
        return self.index.get(el, 0)

    def add_notices(self, parents: dict) -> None:
        """Each notice under its heading (the page's title, or the section's `##`); content tabs
        of a noticed section left empty by the dropped passages go."""
        for section, models, whole_page, figures in reversed(self.notices):
            part = self.sections[section]
            head = next((el for el in part if el.tag in ("h1", SECTION_TAG)), None)
            at = list(self.root).index(head) + 1 if head is not None else (list(self.root).index(part[0]) if part else 0)
            note = Element("p")
            note.text = self.proc.md.htmlStash.store(pending_render.model_notice(sorted(models), whole_page, figures))
            note.tail = "\n"
            self.root.insert(at, note)
        if self.noticed:
            prune_empty_tabs(self.root)


def _blank(el: Element) -> bool:
    return not len(el) and not (el.text or "").strip()


def prune_empty_tabs(root: Element) -> None:
    """Remove the content tabs (pymdownx.tabbed, alternate style) whose block is empty, innermost
    first, and a tab set with none left."""
    parents = {child: parent for parent in root.iter() for child in parent}
    sets = [el for el in root.iter("div") if "tabbed-set" in (el.get("class") or "").split()]
    for tabs in reversed(sets):  # innermost first: an emptied inner set empties its outer tab
        labels = tabs.find("div[@class='tabbed-labels']")
        content = tabs.find("div[@class='tabbed-content']")
        if labels is None or content is None:
            continue
        inputs = tabs.findall("input")
        blocks = list(content)
        if len(inputs) != len(blocks) or len(list(labels)) != len(blocks):
            continue
        gone = [i for i, b in enumerate(blocks) if _blank(b)]
        if not gone:
            continue
        if len(gone) == len(blocks):
            parents[tabs].remove(tabs)
            continue
        for i in reversed(gone):
            tabs.remove(inputs[i])
            labels.remove(list(labels)[i])
            content.remove(blocks[i])
        kept = tabs.findall("input")
        if not any(x.get("checked") for x in kept):
            kept[0].set("checked", "checked")
        if tabs.get("data-tabs"):
            tabs.set("data-tabs", f"{tabs.get('data-tabs').split(':')[0]}:{len(kept)}")


def refuse(hit: PendingRef):
    if hit.tracing:  # not a mistake: the trace is under way, and the page shows "tracing…"
        return
    raise CourseBuildError(hit.where, f"reference {{{{ {hit.raw} }}}} has no number in this build: {hit.reason}", f"{FIX}; {hit.remedy}")
