r"""Markdown extensions stage: the course's figures, prose references and math, as one
Python-Markdown extension (configured under `markdown_extensions`, so MkDocs and Zensical both
run it; it is not an MkDocs plugin).

mkdocs.yml::

    markdown_extensions:
      - pymdownx.superfences:
          custom_fences:
            - name: attention            # one entry per kind in directives.DIRECTIVE_KINDS
              class: course
              format: !!python/name:generator.markdown_ext.fence_format
              validator: !!python/name:generator.markdown_ext.fence_validator
      - generator.markdown_ext:
          traces_dir: traces             # relative to the working directory (the mkdocs.yml folder)
          docs_dir: content

Parts:

1. A preprocessor that finds which file of docs_dir the page comes from and marks every
   directive fence (`# @source path:line`) and every `{{ ... }}` reference (` @line`), so that
   errors name the lesson's file and line (directives.annotate_source).
2. :func:`fence_format` / :func:`fence_validator` for SuperFences: parse the block with
   generator.directives, render it with generator.figures. Every error is raised as
   :class:`CourseBuildError`, a SuperFencesException (SuperFences swallows any other exception
   and silently shows a code block) that is also an MkDocs BuildError (MkDocs prints its one-line
   message and aborts).
3. An inline processor for `{{ figure-id.weight(her, Lily) }}` and the other references
   (figures.render_ref).
4. Missing traces: one warning per (model, sentence) per page on the `mkdocs.plugins.generator`
   logger, so `mkdocs build --strict` fails on them; the page shows a "traces pending" box.
5. `$...$` and `$$...$$` rendered to MathML at build time with latex2mathml (no network, no JS).
   `\$` is a literal dollar sign.

References (tokens by text, `her` / `·her` / `' her'`, or by position `#6`; layers and heads
count from 1; weights have 2 decimals, the softmax widget's 3):

    attention   {{ id.layer }} {{ id.head }} {{ id.layer0 }} {{ id.head0 }} (0-based, for Code views)
                {{ id.weight(her, Lily) }} {{ id.score(her, Lily) }} {{ id.scaled(her, Lily) }}
                {{ id.top(her, 3) }} {{ id.argmax(her) }} {{ id.tokens }} {{ id.token(6) }}
                {{ id.rule }} {{ id.sentence }}
    compare     the same, with the sentence (1 or 2) as an extra last argument, default 1:
                {{ id.weight(her, Ben, 2) }} {{ id.top(her, 3, 2) }}
    stepper     {{ id.score(she, Lily) }} {{ id.scaled(she, Lily) }} {{ id.weight(she, Lily) }}
                {{ id.out(she) }} (a vector) {{ id.out(1) }} (entry 1 of the focus output)
                {{ id.sqrtd }} {{ id.tokens }}
    softmax     {{ id.weight(1) }} {{ id.exp(1) }} (by position or label) {{ id.total }}
    scoreboard  {{ id.top(induction, 3) }} {{ id.score(induction, 6, 6) }} {{ id.rank(induction, 6, 6) }}
                {{ id.chance(induction) }} (the score of a head spreading its attention evenly)
    predictions {{ id.tokens }}
    models      {{ model.gpt2.nLayer }} nHead width headDim nCtx nParams vocabSize revision hfName
                nHeads (layers × heads) sqrtHeadDim (2 decimals)
    training    {{ model.tiny.training.bitsPerChar }} natsPerToken steps tokensSeen finalLoss
                validationLoss wallMinutes nParams trainStories validationStories source
    page        {{ page.minutes }} {{ page.words }} (generator/lesson_ext.py)

A reference to a figure whose trace is pending renders `<span class="course-pending-ref">pending</span>`.
"""

from __future__ import annotations

import html
import logging
import os
import re
import sys
import xml.etree.ElementTree as etree
from dataclasses import dataclass, field
from pathlib import Path

from markdown import Extension
from markdown.blockprocessors import BlockProcessor
from markdown.inlinepatterns import InlineProcessor
from markdown.postprocessors import Postprocessor
from markdown.preprocessors import Preprocessor
from pymdownx.superfences import SuperFencesException

from . import directives as D
from . import figures
from .directives import DirectiveError

log = logging.getLogger("mkdocs.plugins.generator")

try:  # MkDocs prints a BuildError's message and aborts; Zensical has no MkDocs to import from
    from mkdocs.exceptions import BuildError as _BuildError
except Exception:  # pragma: no cover
    _BuildError = None


if _BuildError is not None:

    class CourseBuildError(SuperFencesException, _BuildError):
        """A lesson mistake found while rendering; str() is `path:line: problem. Fix: remedy`."""

else:  # pragma: no cover

    class CourseBuildError(SuperFencesException):
        """A lesson mistake found while rendering; str() is `path:line: problem. Fix: remedy`."""


GENERATED = Path("assets") / "generated"
FIGURE_KINDS = D.DIRECTIVE_KINDS


# ---------------------------------------------------------------- which file is this page?

_TEXT_CACHE: dict[Path, tuple[tuple[int, int], str]] = {}
_FRONT_MATTER = re.compile(r"\A(?:---[ \t]*\n.*?\n(?:---|\.\.\.)[ \t]*\n)?\s*\Z", re.S)


def _read(path: Path) -> str | None:
    try:
        st = path.stat()
    except OSError:
        return None
    stamp = (st.st_mtime_ns, st.st_size)
    hit = _TEXT_CACHE.get(path)
    if hit and hit[0] == stamp:
        return hit[1]
    try:
        text = path.read_text(encoding="utf-8-sig").replace("\r\n", "\n").replace("\r", "\n")
    except (OSError, UnicodeDecodeError):
        return None
    _TEXT_CACHE[path] = (stamp, text)
    return text


def find_source(page_text: str, docs_dir: Path, hint: str | None = None) -> tuple[Path, int] | None:
    """(file, line of the page's first line) of the docs_dir file the page text comes from.

    MkDocs hands Markdown the file's text without its front matter, so the page is a suffix of
    the file; the line offset is the number of lines before it. `hint` (a path relative to
    docs_dir, which Zensical provides) is tried first."""
    pt = page_text.replace("\r\n", "\n").rstrip()
    candidates: list[Path] = []
    if hint:
        candidates.append(docs_dir / hint)
    if docs_dir.is_dir():
        candidates += sorted(p for p in docs_dir.rglob("*.md") if GENERATED.parts[0] not in p.relative_to(docs_dir).parts[:1])
    best: tuple[int, Path, int] | None = None
    for path in candidates:
        ft = _read(path)
        if ft is None:
            continue
        ft = ft.rstrip()
        if not ft.endswith(pt):
            continue
        prefix = ft[: len(ft) - len(pt)]
        rank = 0 if path == (docs_dir / hint if hint else None) else (1 if _FRONT_MATTER.match(prefix) else 2)
        if best is None or rank < best[0]:
            best = (rank, path, prefix.count("\n") + 1)
        if rank == 0:
            break
    return None if best is None else (best[1], best[2])


def shown_path(path: Path) -> str:
    try:
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return path.as_posix()


# ---------------------------------------------------------------- per-page state


@dataclass
class PageState:
    shown: str = "<page>"
    rel: Path | None = None  # path relative to docs_dir
    first_line: int = 1
    ctx: figures.Ctx = field(default_factory=figures.Ctx)
    code_refs: list = field(default_factory=list)  # (placeholder, Ref) for references inside code


_STORES: dict[Path, object] = {}
_ASSETS_CHECKED: set[Path] = set()


def _store(root: Path):
    from .store import TraceStore  # torch-free

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
        }
        super().__init__(**kwargs)
        self.state = PageState()

    # paths
    def docs_dir(self) -> Path:
        return Path(self.getConfig("docs_dir"))

    def traces_dir(self) -> Path:
        return Path(self.getConfig("traces_dir"))

    def training_log_path(self) -> Path:
        p = self.getConfig("training_log")
        return Path(p) if p else Path(__file__).resolve().parent / "tiny_model" / "training_log.json"

    def extendMarkdown(self, md):
        md.registerExtension(self)
        md.course_ext = self
        self.md = md
        self.reset()
        # Find the page's file before any extension edits the text (lesson_ext, at 120, fills in
        # `{{ page.* }}`); mark fences and references after those edits, before SuperFences (25).
        md.preprocessors.register(SourceFinder(md, self), "course_find_source", 125)
        md.preprocessors.register(SourcePreprocessor(md, self), "course_source", 35)
        md.inlinePatterns.register(RefProcessor(r"\{\{(.*?)\}\}", md, self), "course_ref", 185)
        md.inlinePatterns.register(MathProcessor(MATH_DISPLAY_RE, md, self, "block"), "course_math_display", 187)
        md.inlinePatterns.register(MathProcessor(MATH_INLINE_RE, md, self, "inline"), "course_math", 186)
        md.inlinePatterns.register(EscapedDollar(r"\\\$", md), "course_dollar", 188)
        md.parser.blockprocessors.register(MathBlockProcessor(md.parser, self), "course_math_block", 75)
        # after raw_html (30) has put the highlighted code back into the page
        md.postprocessors.register(CodeRefPostprocessor(md, self), "course_code_refs", 25)
        md.postprocessors.register(WarnPostprocessor(md, self), "course_warn", 0)

    def reset(self):
        self.state = self.new_state("<page>", None, 1)

    def new_state(self, shown: str, rel: Path | None, first_line: int) -> PageState:
        depth = 0
        if rel is not None:
            depth = len(rel.parts) - 1
            if self.getConfig("directory_urls") and rel.name not in ("index.md", "README.md"):
                depth += 1
        log_path = self.training_log_path()
        traces = self.traces_dir()
        ctx = figures.Ctx(
            store=_store(traces),
            page=shown,
            assets_url="../" * depth + GENERATED.as_posix() + "/",
            training_log=figures.load_training_log(log_path),
            training_log_path=shown_path(log_path),
            on_trace=self.ensure_trace_assets,
        )
        return PageState(shown, rel, first_line, ctx)

    def ensure_trace_assets(self, trace: dict) -> None:
        """Write a trace's download copy and heavy part if they are missing (for `mkdocs serve`
        without `make assets`); `python -m generator assets` writes everything."""
        from . import publish

        generated = self.docs_dir() / GENERATED
        try:
            publish.write_trace_assets(trace, generated, self.traces_dir(), only_missing=True)
            if generated.resolve() not in _ASSETS_CHECKED:
                _ASSETS_CHECKED.add(generated.resolve())
                publish.write_static_assets(generated, only_missing=True)
        except OSError as exc:  # a read-only checkout still builds; the links will 404
            log.info(f"could not write assets into {generated}: {exc}")


def makeExtension(**kwargs):
    return CourseExtension(**kwargs)


def _ext(md) -> CourseExtension:
    ext = getattr(md, "course_ext", None)
    if ext is None:
        raise CourseBuildError(
            "a course fence was found but generator.markdown_ext is not loaded. "
            "Fix: add `- generator.markdown_ext` under markdown_extensions in mkdocs.yml"
        )
    return ext


def _raise(exc: DirectiveError):
    raise CourseBuildError(str(exc)) from None


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
        docs = self.ext.docs_dir()
        hint = None
        context = sys.modules.get("zensical.extensions.context")  # loaded only under Zensical
        if context is not None:  # Zensical registers the page being rendered
            try:
                cp = context.ContextPreprocessor.from_markdown(self.md)
                hint = getattr(getattr(cp, "page", None), "path", None)
            except Exception:
                hint = None
        return find_source("\n".join(lines), docs, hint)


class SourcePreprocessor(Preprocessor):
    """Marks fences and references with their file and line (directives.annotate_source)."""

    def __init__(self, md, ext: CourseExtension):
        super().__init__(md)
        self.ext = ext

    def run(self, lines: list[str]) -> list[str]:
        found, n_before = getattr(self.ext, "found", (None, 0))
        self.ext.found = (None, 0)
        if found is None:
            self.ext.state = self.ext.new_state("<page>", None, 1)
            return D.annotate_source(lines, "<page>", 1, self.ext.state.code_refs)
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
        return D.annotate_source(lines, shown, first, self.ext.state.code_refs)


# ---------------------------------------------------------------- 2. fences


def fence_validator(language, inputs, options, attrs, md) -> bool:
    """Accept every course fence; options on the fence line are reported by fence_format."""
    if inputs:
        options["_inputs"] = dict(inputs)
    return True


def fence_format(src, language, class_name, options, md, **kwargs) -> str:
    """SuperFences formatter: the figure's HTML, or CourseBuildError with `path:line: ...`."""
    ext = _ext(md)
    state = ext.state
    body, where = D.split_source_mark(src, state.shown)
    try:
        if options and options.get("_inputs"):
            names = ", ".join(sorted(options["_inputs"]))
            raise DirectiveError(where, f"{language}: options on the fence line ({names}) are not read", "write every option in the block body as `key: value`")
        directive = D.parse_directive(language, body, where)
        return figures.render(directive, state.ctx)
    except DirectiveError as exc:
        _raise(exc)
    except CourseBuildError:
        raise
    except Exception as exc:  # a bug; never let SuperFences turn it into a silent code block
        raise CourseBuildError(f"{where}: {language}: internal error while rendering: {exc!r}. Fix: report it with this block") from exc


# ---------------------------------------------------------------- 3. prose references


class RefProcessor(InlineProcessor):
    def __init__(self, pattern, md, ext: CourseExtension):
        super().__init__(pattern, md)
        self.ext = ext

    def handleMatch(self, m, data):
        state = self.ext.state
        try:
            ref = D.parse_ref(m.group(1), state.shown)
            html = figures.render_ref(ref, state.ctx)
        except DirectiveError as exc:
            _raise(exc)
        return self.md.htmlStash.store(html), m.start(0), m.end(0)


class CodeRefPostprocessor(Postprocessor):
    """Fills in references that stood inside code (directives.annotate_source) as plain text,
    so a Code view reads `trace.layers[2]` and runs as written in the console."""

    def __init__(self, md, ext: CourseExtension):
        super().__init__(md)
        self.ext = ext

    def run(self, text: str) -> str:
        state = self.ext.state
        for placeholder, ref in state.code_refs:
            if placeholder not in text:
                continue
            try:
                rendered = figures.render_ref(ref, state.ctx)
            except DirectiveError as exc:
                _raise(exc)
            plain = html.unescape(TAG_RE.sub("", rendered))
            text = text.replace(placeholder, html.escape(plain, quote=False))
        # No clearing: toc runs the postprocessors on each heading before the page itself.
        return text


TAG_RE = re.compile(r"<[^>]+>")


# ---------------------------------------------------------------- 4. warnings


def where_list(wheres: list[str]) -> str:
    """'content/a.md:3, 9, 12' from ['content/a.md:9', 'content/a.md:3', ...], file by file."""
    by_file: dict[str, list[str]] = {}
    for w in wheres:
        path, _, line = w.rpartition(":") if w.rpartition(":")[2].isdigit() else (w, "", "")
        by_file.setdefault(path, [])
        if line and line not in by_file[path]:
            by_file[path].append(line)
    return "; ".join(f"{p}:{', '.join(sorted(ls, key=int))}" if ls else p for p, ls in by_file.items())


class WarnPostprocessor(Postprocessor):
    def __init__(self, md, ext: CourseExtension):
        super().__init__(md)
        self.ext = ext

    def run(self, text: str) -> str:
        ctx = self.ext.state.ctx
        for (model, sentence), wheres in ctx.missing.items():
            at = where_list(wheres)
            if sentence == "(training log)":
                log.warning(f"{at}: the tiny model's training log {ctx.training_log_path} is missing; the page shows 'pending'. Run `make tiny-model`.")
            elif sentence == "(head scores)":
                log.warning(f"{at}: no head scores for model {model} (traces/{model}/heads.json); the page shows a pending box. Run `make traces` on a machine with the model.")
            else:
                log.warning(f"{at}: no trace of {sentence!r} for model {model}; the page shows a 'traces pending' box. Run `make traces` on a machine with the model.")
        for model, wheres in ctx.missing_models.items():
            at = where_list(wheres)
            log.warning(f"{at}: no traces of model {model}, so its numbers show 'pending'. Run `make traces` on a machine with the model.")
        ctx.missing.clear()
        ctx.missing_models.clear()
        return text


# ---------------------------------------------------------------- 5. math

MATH_DISPLAY_RE = r"(?<!\\)\$\$(.+?)\$\$"
MATH_INLINE_RE = r"(?<![\\$\w])\$(?=\S)([^$\n]*?\S)\$(?![\w$])"


def to_mathml(latex: str, display: str, where: str) -> str:
    try:
        from latex2mathml.converter import convert
    except ImportError:  # pragma: no cover
        raise CourseBuildError(f"{where}: math needs the latex2mathml package. Fix: pip install -e . (it is a site dependency)") from None
    try:
        return convert(latex.strip(), display=display)
    except Exception as exc:
        raise CourseBuildError(f"{where}: math ${latex.strip()}$ cannot be converted to MathML ({type(exc).__name__}: {exc}). Fix: correct the LaTeX") from None


def _math_where(state: PageState, latex: str) -> str:
    """path:line of the first line of the page's file that contains this formula."""
    path = Path(state.shown)
    text = _read(path) if path.is_file() else None
    if text:
        needle = latex.strip().split("\n")[0]
        for n, line in enumerate(text.split("\n"), start=1):
            if needle and needle in line:
                return f"{state.shown}:{n}"
    return state.shown


class MathProcessor(InlineProcessor):
    def __init__(self, pattern, md, ext: CourseExtension, display: str):
        super().__init__(pattern, md)
        self.ext, self.display = ext, display

    def handleMatch(self, m, data):
        latex = m.group(1)
        html = to_mathml(latex, self.display, _math_where(self.ext.state, latex))
        return self.md.htmlStash.store(html), m.start(0), m.end(0)


class EscapedDollar(InlineProcessor):
    def handleMatch(self, m, data):
        return "$", m.start(0), m.end(0)


class MathBlockProcessor(BlockProcessor):
    """A paragraph that starts with `$$` and (possibly several blocks later) ends with `$$`."""

    def __init__(self, parser, ext: CourseExtension):
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
            raise CourseBuildError(f"{_math_where(self.ext.state, latex)}: a $$ math block is not closed. Fix: end it with $$")
        latex = "\n".join(parts)
        html = to_mathml(latex, "block", _math_where(self.ext.state, latex))
        div = etree.SubElement(parent, "div")
        div.set("class", "course-math")
        div.text = self.parser.md.htmlStash.store(html)
        return True
