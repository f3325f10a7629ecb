"""Attention course generator: trace real models, freeze the numbers, render the lessons.

:data:`STAGES` lists the package's stages once, in the order their imports may point: a module
imports only from its own stage and the stages before it (tests/test_layout.py checks every
import, lazy ones included, and `python -m generator reference` writes docs/architecture.md's module table
from this list).
"""

from dataclasses import dataclass

__version__ = "0.1.0"


@dataclass(frozen=True)
class Stage:
    name: str
    modules: tuple[str, ...]  # dotted names under generator; a package stands for all its modules
    does: str  # what the stage is for, in the docs' module table
    torch: str = "no"  # whether it imports torch, in the docs' module table


STAGES: tuple[Stage, ...] = (
    Stage("facts", ("schema", "registry"), "every traced activation and its shape; every model's and score kind's facts"),
    Stage("tokens", ("tokens", "bpe"), "both models' committed tokenizers, torch-free; chapter 1's merge replay"),
    Stage("store", ("store",), "trace files on disk: read once, checked, written atomically"),
    Stage("head scores", ("heads",), "head-type scores of every layer × head, from stored traces"),
    Stage("lessons", ("lessons",), "the one parser of the lessons: fences, options, references"),
    Stage("model", ("model",), "loading, tracing, causal tests, training (`make traces`, `make tiny-model`)", torch="yes"),
    Stage("render", ("render",), "one module and one template per figure kind; the assets a page loads"),
    Stage("notebooks", ("notebooks",), "each chapter's Python notebook: its cells, and which sections a lesson's figures get"),
    Stage("markdown", ("markdown",), "the Python-Markdown extensions MkDocs and Zensical run"),
    Stage("site", ("site",), "`make site`, `make serve`, the downloads", torch="only to trace on save"),
    Stage("bench", ("bench",), "`make bench`: figures, not tests", torch="through model"),
    Stage("command line", ("cli", "__main__"), "`python -m generator …`", torch="only the model commands"),
)
