"""A page's mistakes kept as the course's fences and references are read, and said together at
the page's end (lessons.errors.collected: each once, in line order, at most MAX_SHOWN); and the
warning for a sentence the model reads partly as bytes; how any failure while rendering
becomes one line (one_line_errors). Used by course.py."""

from __future__ import annotations

import logging
from contextlib import contextmanager

from markdown.postprocessors import Postprocessor

from ..lessons.directives import load_body
from ..lessons.errors import LessonError
from ..lessons.pages import directive_sentences
from ..lessons.source import shown_path
from ..store import DamagedFile, StoreError
from ..tokens import NoTokenizer, byte_split_chars
from .build_errors import CourseBuildError, raise_kept, reraise

log = logging.getLogger("mkdocs.plugins.generator")


def store_failure(exc: StoreError):
    """A damaged trace, index or heads.json found while rendering: its one line, naming the file."""
    if isinstance(exc, DamagedFile):
        raise CourseBuildError(shown_path(exc.path), exc.problem, exc.fix) from None
    raise CourseBuildError("traces", str(exc), "run `make traces`") from None


@contextmanager
def one_line_errors(where: str, internal: str, fix: str):
    """Every failure inside becomes one CourseBuildError line: a lesson mistake as it is, a
    damaged store file naming the file, and a bug as `internal` with its place."""
    try:
        yield
    except CourseBuildError:
        raise
    except LessonError as exc:
        reraise(exc)
    except StoreError as exc:
        store_failure(exc)
    except NoTokenizer as exc:  # a committed tokenizer file missing or damaged: name it, not the lesson
        raise CourseBuildError(where, f"{exc}", "restore the tokenizer files from git (generator/tiny_model/, generator/gpt2/)") from None
    except Exception as exc:
        raise CourseBuildError(where, f"{internal}: {exc!r}"[:300], fix) from exc


def keep_fence_error(state, exc: CourseBuildError, body: str, language: str) -> None:
    """Keep a figure's mistake, and its id (None where the body has no readable id): a reference
    to that figure then adds no second mistake (course.RefProcessor)."""
    state.errors.append(exc)
    try:
        ident = (load_body(body, "", language) or {}).get("id")
    except (LessonError, AttributeError):
        ident = None
    state.failed_ids.add(ident if isinstance(ident, str) else None)


class ErrorsPostprocessor(Postprocessor):
    """The page's mistakes, kept as the figures and references were read, in one error: one
    line each, in line order (lessons.errors.collected). First of the postprocessors: the page
    is not finished while any is there (needs_traces.NeedsTraces raises them before its own checks, which a
    dropped reference would mislead)."""

    def __init__(self, md, ext):
        super().__init__(md)
        self.ext = ext

    def run(self, text: str) -> str:
        raise_kept(self.ext.state.errors)
        return text


def warn_byte_tokens(directive) -> None:
    """A warning for each sentence the model reads partly as bytes: the figure shows those tokens as
    '�' and no word of the sentence names them (an emoji is four of them)."""
    for model, text in directive_sentences(directive):
        try:
            chars = byte_split_chars(model, text)
        except NoTokenizer:  # said where the figure needs its tokens
            continue
        if chars:
            shown = ", ".join(f"{c!r} (U+{ord(c):04X})" for c in chars[:3])
            log.warning(f"{directive.where}: {directive.kind}: model {model} has no token for {shown} in {text!r}, so it reads "
                        f"the bytes as tokens of their own, which the figure shows as '\ufffd' and no token name can pick; "
                        f"write a word instead, or say in the text what the '\ufffd' tokens are")
