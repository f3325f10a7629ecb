r"""The course's figures and prose references as one Python-Markdown extension.

mkdocs.yml::

    markdown_extensions:
      - pymdownx.superfences:
          custom_fences:
            - name: attention            # one entry per kind in lessons.directives.DIRECTIVE_KINDS
              class: course
              format: !!python/name:generator.markdown.course.fence_format
              validator: !!python/name:generator.markdown.course.fence_validator
      - generator.markdown.course:
          traces_dir: traces             # relative to the working directory (the mkdocs.yml folder)
          docs_dir: content

Parts:

1. A preprocessor that finds which file of docs_dir the page comes from and marks every
   directive fence (`# @source path:line`) and every `{{ ... }}` reference (` @line`), so that
   errors name the lesson's file and line (lessons.refs.annotate_source).
2. :func:`fence_format` / :func:`fence_validator` for SuperFences: parse the block
   (lessons.directives), render it (render). Every error leaves as a CourseBuildError.
3. An inline processor for `{{ figure-id.weight(her, Lily) }}` and the other references
   (render.render_ref), and a postprocessor for the references inside code.
4. Missing traces: one warning per missing thing per page on the `mkdocs.plugins.generator`
   logger, so `mkdocs build --strict` fails on them; a figure shows its pending box (the
   sentence's real tokens, the grid's size), and a reference has no number: it may stand only in
   a passage marked `{: .needs-traces }` (needs_traces.py), which is then replaced, whole, by one
   note for readers. A reference with no number anywhere else stops the build with its line.
5. Math (math.py).

The references every figure kind answers are listed in generator/render/__init__.py's docstring.

A reference to a figure whose traces are missing has no number. Mark the paragraph, list item or
table that holds it with a line of its own right under it (marked passages next to each other go
together, so a lead-in sentence can go with its table):

    In this head ·it gives {{ it.weight(it, animal) }} to ·animal.
    {: .needs-traces }

With the traces the passage reads as written; without them it is one short note for readers, and
an unmarked reference with no number is an error. A reference to a figure whose traces are
missing is still checked against the sentence's tokens from the committed tokenizer (a token the
sentence lacks, a position past its end, a layer or head the model lacks: render/pending.py), as
are the figure's `token:`, its pick and the sentence's length against the model's context.
"""

from __future__ import annotations

import html
import json
import logging
import re
import sys
from dataclasses import dataclass, field
from math import isfinite
from pathlib import Path

from markdown import Extension
from markdown.inlinepatterns import InlineProcessor
from markdown.postprocessors import Postprocessor
from markdown.preprocessors import Preprocessor
from markdown.treeprocessors import Treeprocessor

from .. import render
from ..tokens import NoTokenizer
from ..render import assets
from ..lessons.directives import SPECS, at_option, check_code_fence, parse_directive
from ..lessons import claims, refs
from ..lessons.errors import LessonError
from ..lessons.source import GENERATED, check_layout, find_source, shown_path
from ..render import ref_binding, training_figure as training
from ..render.context import Ctx, sentence_pairs
from ..render.ref_common import PENDING_REF, TRACING_REF
from ..store import TraceStore
from . import attribute_refs, kept_errors, math, needs_traces, python_view
from .page_warnings import WarnPostprocessor
from .kept_errors import one_line_errors
from .build_errors import CourseBuildError, reraise

log = logging.getLogger("mkdocs.plugins.generator")
TAG_RE = attribute_refs.TAG_RE  # one pattern for a tag, with the attributes' references
# Where the course's scripts go: right after the page's first heatmap that has its numbers, so
# course.js draws it while the rest of the page is still parsed (overrides/main.html replaces the
# mark with the scripts; a page without one gets them after the article).
SCRIPTS_MARK = "<!-- course:scripts -->"
FIRST_HEATMAP_RE = re.compile(r'<figure class="course-fig"[^>]*\sdata-kind="(?:attention|compare)"(?![^>]*\sdata-pending=)[^>]*>')


@dataclass
class PageState:
    shown: str = "<page>"
    rel: Path | None = None  # path relative to docs_dir
    first_line: int = 1
    ctx: Ctx = field(default_factory=Ctx)
    code_refs: list = field(default_factory=list)  # (placeholder, Ref) for references inside code
    pending: dict = field(default_factory=dict)  # htmlStash placeholder -> needs_traces.PendingRef
    marks: list = field(default_factory=list)  # the lines of the page's `{: .needs-traces }` marks
    trace_refs: set = field(default_factory=set)  # placeholders of references that traces fill in
    model_refs: dict = field(default_factory=dict)  # placeholder -> model of a reference to a model's published facts
    ref_text: dict = field(default_factory=dict)  # placeholder -> (its HTML, "path:line") of each prose reference
    scripts_marked: bool = False  # SCRIPTS_MARK follows the page's first drawn heatmap
    errors: list = field(default_factory=list)  # the page's mistakes so far, all said at its end (ErrorsPostprocessor)

    @property
    def failed_ids(self) -> set:
        """The page's failed figures' ids (Ctx.failed_ids): a reference to one is no second mistake."""
        return self.ctx.failed_ids

    def code_pending(self, placeholder: str):
        """The PendingRef of a reference inside code that has no number in this build, or None."""
        for held, ref in self.code_refs:
            if held == placeholder:
                return needs_traces.pending_ref(ref, self.ctx) if render.render_ref(ref, self.ctx) == PENDING_REF else None
        return None


_STORES: dict[Path, TraceStore] = {}
_ASSETS_CHECKED: set[Path] = set()


def _store(root: Path) -> TraceStore:
    """One store per traces folder for the whole build (it caches what it has read)."""
    root = root.resolve()
    if root not in _STORES:
        _STORES[root] = TraceStore(root)
    return _STORES[root]


class CourseExtension(Extension):
    def __init__(self, **kwargs):
        self.config = {
            "traces_dir": ["traces", "the trace store, relative to the working directory (the mkdocs.yml folder)"],
            "docs_dir": ["content", "the lessons' folder (MkDocs' docs_dir), relative to the working directory"],
            "training_log": ["", "the tiny model's training_log.json (default: generator/tiny_model/training_log.json)"],
            "directory_urls": [False, "MkDocs' use_directory_urls (for the relative asset links)"],
            "assets_dir": ["", "where a missing trace asset is written (default: docs_dir/assets/generated; `python -m generator site` points it at its temporary folder)"],
            "tracing": ["", "sentences `make serve` is tracing now, one `model<TAB>sentence` per line: their figures say tracing… and references to them are no error"],
            "traced_on_save": ["", "models `make serve` traces on save, comma-separated: a sentence of theirs with no trace is being traced (or is on the next build), as above"],
            "untraceable": ["", "sentences `make serve`'s tracer refused, one `model<TAB>sentence` per line: theirs is the error of a missing trace"],
        }
        super().__init__(**kwargs)
        self.state = PageState()

    def setConfig(self, key: str, value) -> None:
        """Python-Markdown's, with mkdocs.yml's mistakes said in words: an option this extension
        does not have (a KeyError there), or one of the wrong type (a TypeError later)."""
        if key not in self.config:
            raise ValueError(f"generator.markdown.course has no option {key!r} (its options: {', '.join(self.config)})")
        if isinstance(self.config[key][0], str) and not isinstance(value, str):  # true/false ones: Python-Markdown parses them
            raise ValueError(f"generator.markdown.course's option {key!r} must be text, not {value!r}")
        super().setConfig(key, value)

    def docs_dir(self) -> Path:
        return Path(self.getConfig("docs_dir"))

    def traces_dir(self) -> Path:
        return Path(self.getConfig("traces_dir"))

    def training_log_path(self) -> Path:
        p = self.getConfig("training_log")
        return Path(p) if p else Path(__file__).resolve().parents[1] / "tiny_model" / "training_log.json"

    def extendMarkdown(self, md):
        md.registerExtension(self)
        md.course_ext = self
        self.md = md
        self.reset()
        # Find the page's file before any extension edits the text (lesson.py, at 120, fills in
        # `{{ page.* }}`); mark fences and references after those edits, before SuperFences (25).
        md.preprocessors.register(SourceFinder(md, self), "course_find_source", 125)
        md.preprocessors.register(SourcePreprocessor(md, self), "course_source", 35)
        md.inlinePatterns.register(RefProcessor(r"\{\{(.*?)\}\}", md, self), "course_ref", 185)
        # after attr_list (8) has read the `{: .needs-traces }` marks, before the glossary terms (7)
        md.treeprocessors.register(needs_traces.NeedsTraces(md, self), "course_needs_traces", 7.5)
        # after the inline patterns (20) and attr_list (8), which moves `{: title="…" }` into attributes
        md.treeprocessors.register(attribute_refs.AttributeRefs(md, self), "course_attribute_refs", 7.9)
        md.treeprocessors.register(TabLabelsUnsearched(md), "course_tab_labels_unsearched", 5)
        math.register(md, self)
        # after raw_html (30) has put the highlighted code back into the page
        md.postprocessors.register(kept_errors.ErrorsPostprocessor(md, self), "course_errors", 100)
        md.postprocessors.register(CodeRefPostprocessor(md, self), "course_code_refs", 25)
        md.postprocessors.register(GuessPostprocessor(md, self), "course_guesses", 24)
        md.postprocessors.register(LeakPostprocessor(md, self), "course_leaks", 1)
        md.postprocessors.register(WarnPostprocessor(md, self), "course_warn", 0)

    def reset(self):
        try:
            self.state = self.new_state("<page>", None, 1)
        except CourseBuildError:  # a damaged training log: each page's own state reports it
            self.state = PageState()

    def new_state(self, shown: str, rel: Path | None, first_line: int) -> PageState:
        depth = 0
        if rel is not None:
            depth = len(rel.parts) - 1
            if self.getConfig("directory_urls") and rel.name not in ("index.md", "README.md"):
                depth += 1
        log_path = self.training_log_path()
        ctx = Ctx(
            store=_store(self.traces_dir()),
            page=shown,
            assets_url="../" * depth + GENERATED.as_posix() + "/",
            play_url="../" * depth + "play.html" if (self.docs_dir() / "play.md").is_file() else None,
            training_log=read_training_log(log_path),
            training_log_path=shown_path(log_path),
            on_trace=self.ensure_trace_assets,
            tracing=sentence_pairs(self.getConfig("tracing")),
            traced_on_save=frozenset(m.strip() for m in str(self.getConfig("traced_on_save") or "").split(",") if m.strip()),
            untraceable=sentence_pairs(self.getConfig("untraceable")),
        )
        return PageState(shown, rel, first_line, ctx)

    def ensure_trace_assets(self, trace: dict) -> None:
        """Write a trace's download copy and per-head parts if they are missing (for `mkdocs serve`
        without `make assets`); `python -m generator assets` writes everything."""
        generated = Path(self.getConfig("assets_dir")) if self.getConfig("assets_dir") else self.docs_dir() / GENERATED
        try:
            assets.write_trace_assets(trace, generated, only_missing=True)
            if generated.resolve() not in _ASSETS_CHECKED:
                _ASSETS_CHECKED.add(generated.resolve())
                assets.write_static_assets(generated, only_missing=True)
        except OSError as exc:  # a read-only checkout still builds; the links will 404
            log.info(f"could not write assets into {generated}: {exc}")


def makeExtension(**kwargs):
    return CourseExtension(**kwargs)


from ..render.training_figure import TRAINING_LOG_FIX, training_log_problem  # noqa: E402 (the log's checks live with its fields)


def read_training_log(path: Path) -> dict | None:
    """render.training.load_log, with every way the file can be damaged as one line naming it."""
    shown = shown_path(path)
    try:
        log = training.load_log(path)
    except json.JSONDecodeError as exc:
        raise CourseBuildError(shown, f"is not valid JSON, perhaps cut short ({exc.msg} at line {exc.lineno}, column {exc.colno})", TRAINING_LOG_FIX) from None
    except UnicodeDecodeError:
        raise CourseBuildError(shown, "is not UTF-8 text", TRAINING_LOG_FIX) from None
    except RecursionError:  # arrays or objects nested thousands deep
        raise CourseBuildError(shown, "is nested too deep to be a training log", TRAINING_LOG_FIX) from None
    except (OSError, ValueError) as exc:
        raise CourseBuildError(shown, f"cannot be read ({exc})", TRAINING_LOG_FIX) from None
    if log is not None and not isinstance(log, dict):
        raise CourseBuildError(shown, f"is not a training log (a JSON object), but a JSON {type(log).__name__}", TRAINING_LOG_FIX)
    if log is not None:
        found = training_log_problem(log)
        if found:
            raise CourseBuildError(shown, *found)
    return log


def _ext(md) -> CourseExtension:
    ext = getattr(md, "course_ext", None)
    if ext is None:
        raise CourseBuildError("<page>", "a course fence was found but generator.markdown.course is not loaded", "add `- generator.markdown.course` under markdown_extensions in mkdocs.yml")
    return ext


# ---------------------------------------------------------------- 1. source marks


class SourceFinder(Preprocessor):
    """Which file is this page, and which line of it is the page's first? (Changes nothing.)"""

    def __init__(self, md, ext: CourseExtension):
        super().__init__(md)
        self.ext = ext

    def run(self, lines: list[str]) -> list[str]:
        self.ext.found = (self.find(lines), len(lines))
        return lines

    def find(self, lines: list[str]):
        hint = None
        context = sys.modules.get("zensical.extensions.context")  # loaded only under Zensical
        if context is not None:  # Zensical registers the page being rendered
            try:
                cp = context.ContextPreprocessor.from_markdown(self.md)
                hint = getattr(getattr(cp, "page", None), "path", None)
            except Exception:  # Zensical's internals change between versions; the text search still works
                hint = None
        return find_source("\n".join(lines), self.ext.docs_dir(), hint)


class SourcePreprocessor(Preprocessor):
    """Marks fences and references with their file and line (lessons.refs.annotate_source)."""

    def __init__(self, md, ext: CourseExtension):
        super().__init__(md)
        self.ext = ext

    def run(self, lines: list[str]) -> list[str]:
        found, n_before = getattr(self.ext, "found", (None, 0))
        self.ext.found = (None, 0)
        if found is None:
            self.ext.state = self.ext.new_state("<page>", None, 1)
            try:
                check_layout(lines, "<page>", 1, SPECS, check_code_fence)
                self.ext.state.marks = needs_traces.check_marks(lines, "<page>", 1)
                claims.check_hand_verdicts(lines, "<page>", 1)
                return self.python_views(refs.annotate_source(lines, "<page>", 1, self.ext.state.code_refs), "<page>", 1)
            except LessonError as exc:
                reraise(exc)
        path, first = found
        if len(lines) < n_before:  # an earlier preprocessor removed lines at the top (front matter)
            first += n_before - len(lines)
        docs = self.ext.docs_dir()
        try:
            rel = path.resolve().relative_to(docs.resolve())
        except ValueError:
            rel = Path(path.name)
        shown = shown_path(path)
        self.ext.state = self.ext.new_state(shown, rel, first)
        try:
            check_layout(lines, shown, first, SPECS, check_code_fence)
            self.ext.state.marks = needs_traces.check_marks(lines, shown, first)
            claims.check_hand_verdicts(lines, shown, first)
            return self.python_views(refs.annotate_source(lines, shown, first, self.ext.state.code_refs), shown, first)
        except LessonError as exc:
            reraise(exc)

    def python_views(self, lines: list[str], shown: str, first: int) -> list[str]:
        """A Code tab's Python view (python_view.py), after every line has been numbered (its own
        lines then move no other line's number); `lines` hold annotate_source's fence marks, which
        are no lines of the file."""
        numbers, n = [], first
        for line in lines:
            numbers.append(n)
            n += not line.lstrip().startswith(refs.SOURCE_MARK)
        copied: list[int] = []
        out = python_view.expand(lines, shown, first, copied, numbers)
        self.ext.state.marks = sorted(self.ext.state.marks + copied)
        return out


# ---------------------------------------------------------------- 2. fences


def fence_validator(language, inputs, options, attrs, md) -> bool:
    """Accept every course fence; options on the fence line are reported by fence_format."""
    if inputs:
        options["_inputs"] = dict(inputs)
    return True


def fence_format(src, language, class_name, options, md, **kwargs) -> str:
    """SuperFences formatter: the figure's HTML; a mistake is kept (one CourseBuildError line,
    `path:line: ...`) and the page goes on, so that ErrorsPostprocessor says all of them at once."""
    state = _ext(md).state
    try:
        return _fence_html(src, language, options, state)
    except CourseBuildError as exc:
        kept_errors.keep_fence_error(state, exc, refs.split_source_mark(src, state.shown)[0], language)
        return ""


def _fence_html(src, language, options, state) -> str:
    body, where = refs.split_source_mark(src, state.shown)
    # A bug, too, is one line: never let SuperFences turn it into a silent code block.
    with one_line_errors(where, f"{language}: internal error while rendering", "report it with this block"):
        if options and options.get("_inputs"):
            names = ", ".join(sorted(options["_inputs"]))
            raise LessonError(where, f"{language}: options on the fence line ({names}) are not read", "write every option in the block body as `key: value`")
        directive = parse_directive(language, body, where)
        kept_errors.warn_byte_tokens(directive)
        try:
            out = render.render(directive, state.ctx)
        except LessonError as e:  # a mistake in one option, found against the traces: its own line
            raise at_option(e, where, directive.option_where) from None
        heatmap = None if state.scripts_marked else FIRST_HEATMAP_RE.search(out)
        if heatmap:  # a block may hold several figures (a scoreboard and its examples)
            state.scripts_marked = True
            end = out.index("</figure>", heatmap.end()) + len("</figure>")
            out = out[:end] + SCRIPTS_MARK + out[end:]
        return out


# ---------------------------------------------------------------- 3. prose references


class RefProcessor(InlineProcessor):
    def __init__(self, pattern, md, ext: CourseExtension):
        super().__init__(pattern, md)
        self.ext = ext

    def handleMatch(self, m, data):
        try:
            return self._filled(m)
        except CourseBuildError as exc:  # kept; ErrorsPostprocessor says the page's mistakes at once
            self.ext.state.errors.append(exc)
            return "", m.start(0), m.end(0)

    def _filled(self, m):
        state = self.ext.state
        target = m.group(1).strip().split(".", 1)[0]
        if target in state.failed_ids or (None in state.failed_ids and target != "model" and target not in state.ctx.figures):
            return "", m.start(0), m.end(0)  # its figure's own mistake is said already
        where = state.shown
        mark = refs.LINE_MARK_RE.search(m.group(1))
        if mark:
            where = f"{state.shown}:{mark['line']}"
        shown = refs.LINE_MARK_RE.sub("", m.group(1)).strip()
        with one_line_errors(where, f"internal error while filling in {{{{ {shown} }}}}", "report it with this reference"):
            ref = refs.parse_ref(m.group(1), state.shown)
            out = render.render_ref(ref, state.ctx)
            hit = needs_traces.pending_ref(ref, state.ctx) if out == PENDING_REF else None
            bound = None if hit else ref_binding.binding(ref, state.ctx, out)
            if bound is not None:  # a prose number points at its figure (code stays plain: CodeRefPostprocessor)
                out = ref_binding.bound_html(bound, out)
            placeholder = self.md.htmlStash.store(TRACING_REF if hit and hit.tracing else out)
            state.ref_text[placeholder] = (None if hit else out, where)
            if ref.target != "model" or ".training." in f".{ref.name}.":
                state.trace_refs.add(placeholder)
            else:
                state.model_refs[placeholder] = ref.name.split(".")[0]
            if hit and not hit.tracing:  # needs_traces replaces its passage, or refuses the page
                state.pending[placeholder] = hit
        return placeholder, m.start(0), m.end(0)


class TabLabelsUnsearched(Treeprocessor):
    """The content tabs' row of names (Story, Numbers, Formula, Code) is left out of the search
    index, as the figures are (templates/_parts.html): a result read "StoryNumbersFormulaCode".
    Only the row of labels: it holds no <div> of its own, whose end would end the exclusion early
    in mkdocs-material's search parser (it matches an excluded element by its tag)."""

    def run(self, root) -> None:
        for el in root.iter("div"):
            if "tabbed-labels" in (el.get("class") or "").split():
                el.set("data-search-exclude", "")


class CodeRefPostprocessor(Postprocessor):
    """Fills in references that stood inside code (lessons.refs.annotate_source) as plain text,
    so a Code view reads `trace.layers[2]` and runs as written in the console."""

    def __init__(self, md, ext: CourseExtension):
        super().__init__(md)
        self.ext = ext

    def run(self, text: str) -> str:
        state = self.ext.state
        for placeholder, ref in state.code_refs:
            if placeholder not in text:
                continue
            with one_line_errors(ref.where, f"internal error while filling in {{{{ {ref.raw} }}}}", "report it with this reference"):
                rendered = render.render_ref(ref, state.ctx)
            if rendered == PENDING_REF:  # outside every replaced passage (needs_traces)
                needs_traces.refuse(needs_traces.pending_ref(ref, state.ctx))
            plain = html.unescape(TAG_RE.sub("", rendered))
            text = text.replace(placeholder, html.escape(plain, quote=False))
        # No clearing: toc runs the postprocessors on each heading before the page itself.
        return text


class GuessPostprocessor(Postprocessor):
    """Grades each `guess` once the page's figures are rendered: it stands before the one it reads."""

    def __init__(self, md, ext: CourseExtension):
        super().__init__(md)
        self.ext = ext

    def run(self, text: str) -> str:
        try:
            return render.guess.fill(text, self.ext.state.ctx, render.render_ref) if self.ext.state.ctx.guesses else text
        except LessonError as exc:
            reraise(exc)


class LeakPostprocessor(Postprocessor):
    """The last guard: a source mark left in the page means Markdown did not read a fence or a
    reference the way the course does (raw HTML, an indented block); stop with its line rather
    than show `# @source ...` or `{{ lily.layer @11}}` to readers."""

    FENCE_LEAK = re.compile(re.escape(refs.SOURCE_MARK) + r"(?P<where>\S+?:\d+)")
    REF_LEAK = re.compile(r"\{\{(?P<body>[^{}]*?)\s@(?P<line>\d+)\s*\}\}")

    def __init__(self, md, ext: CourseExtension):
        super().__init__(md)
        self.ext = ext

    def run(self, text: str) -> str:
        m = self.FENCE_LEAK.search(text)
        if m:
            raise CourseBuildError(m["where"], "this fence was not read as a figure: Markdown took it for code or text (in raw HTML, or indented)", "start the fence at the left margin, after a blank line, outside HTML blocks (indent it by 4 spaces only inside a content tab, an admonition or a list item)")
        m = self.REF_LEAK.search(text)
        if m:
            body = html.unescape(m["body"]).strip()
            raise CourseBuildError(f"{self.ext.state.shown}:{m['line']}", f"the reference {{{{ {body} }}}} was left as text: it is inside raw HTML or an indented code block, which Markdown does not read for references", "write it in the page's text, use a fenced code block for code, or add the `markdown` attribute to the HTML element around it")
        return text
