"""Shared fixtures: synthetic traces (plain numpy, no torch) in the store's layout, and a real
`mkdocs build` of a throwaway content folder.

For other test files:

* ``synthetic_trace(text, ...)`` builds a schema-shaped trace document; ``plant`` sets one row
  of one head exactly (``{(layer, head, query): {key: weight, ...}}``, 0-based), the rest is a
  seeded random softmax that never reaches 0.6.
* ``site_builder`` (fixture) -> ``build(pages, traces=(), strict=True, ...)`` writes
  ``content/``, ``traces/`` and ``mkdocs.yml`` under tmp_path, runs the asset step and
  ``python -m mkdocs build`` in a subprocess, and returns a :class:`Built` (``.ok``, ``.log``,
  ``.html("page.md")``).
* ``pytest --update-golden`` rewrites tests/golden/*.html.
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[1]
GOLDEN = Path(__file__).resolve().parent / "golden"

# The builds of the tests read synthetic traces (made-up ids, queries that do not give the stored
# scores), whose notebooks cannot agree with them: the builds write the notebooks without running
# them (generator/notebooks/run.py). tests/test_notebook_runs.py runs them, on committed traces.
os.environ["COURSE_RUN_NOTEBOOKS"] = "0"

SHAPES = {"tiny": dict(n_layer=4, n_head=4, head_dim=4, n_ctx=256), "gpt2": dict(n_layer=12, n_head=12, head_dim=4, n_ctx=1024)}


def pytest_addoption(parser):
    parser.addoption("--update-golden", action="store_true", default=False, help="rewrite tests/golden/*.html from the current output")


def pytest_configure(config):
    import cpu_times  # COURSE_CPU_TIMES=FILE: CPU-seconds per test phase (tests/cpu_times.py)

    cpu_times.register(config)
    config.addinivalue_line("markers", "gpt2_shaped: uses the run's one GPT-2-shaped course (tests/gpt2_store.py; set by pytest_collection_modifyitems)")


@pytest.fixture
def update_golden(request) -> bool:
    return bool(request.config.getoption("--update-golden"))


# ---------------------------------------------------------------- rendered prose


BOUND_NUMBER = re.compile(r'<span class="course-ref[^"]*"[^>]*>(.*?)</span>', re.S)


def unbound(html: str) -> str:
    """A page's HTML with each bound prose number (a course-ref span) read as its text."""
    return BOUND_NUMBER.sub(r"\1", html)


# ---------------------------------------------------------------- synthetic traces


def words_to_tokens(text: str) -> list[str]:
    """'Lily wanted to' -> ['Lily', ' wanted', ' to'] (a stand-in for a BPE tokenizer)."""
    parts = text.split(" ")
    return [parts[0]] + [" " + p for p in parts[1:]]


def synthetic_trace(
    text: str,
    model: str = "tiny",
    tokens: list[str] | None = None,
    plant: dict | None = None,
    revision: str = "synthetic-0001",
    stand_in: bool = False,
    seed: int = 0,
) -> dict:
    from generator import schema

    shape = SHAPES[model]
    L, H, d = shape["n_layer"], shape["n_head"], shape["head_dim"]
    toks = tokens if tokens is not None else words_to_tokens(text)
    T = len(toks)
    rng = np.random.default_rng([seed, T, L, sum(map(ord, text)) % 9973])
    mask = np.triu(np.ones((T, T), dtype=bool), 1)
    layers = []
    for l in range(L):
        heads = []
        for h in range(H):
            q, k, v = (rng.uniform(-1, 1, (T, d)) for _ in range(3))
            logits = rng.uniform(-0.5, 0.5, (T, T))
            for (pl, ph, pq), row in (plant or {}).items():
                if (pl, ph) == (l, h):
                    w = np.full(pq + 1, 1e-9)
                    for key, val in row.items():
                        w[key] = max(val, 1e-12)
                    logits[pq, : pq + 1] = np.log(w)
            scaled = np.where(mask, -np.inf, logits)
            e = np.exp(scaled - scaled.max(axis=1, keepdims=True))
            weights = e / e.sum(axis=1, keepdims=True)
            scores = np.where(mask, rng.uniform(-1, 1, (T, T)), logits) * math.sqrt(d)
            out = weights @ v
            heads.append(
                dict(
                    q=q.tolist(), k=k.tolist(), v=v.tolist(), scores=scores.tolist(),
                    scaledMasked=[[None if mask[i, j] else float(scaled[i, j]) for j in range(T)] for i in range(T)],
                    weights=weights.tolist(), out=out.tolist(),
                )
            )
        concat = np.concatenate([np.array(h["out"]) for h in heads], axis=1)
        layers.append({"heads": heads, "attnConcat": concat.tolist()})
    token_docs = [
        {"id": 100 + i, "text": t, "display": schema.display_token(t), "spoken": schema.spoken_token(t)} for i, t in enumerate(toks)
    ]
    guesses = [" the", " a", " ball", ".", " and"]
    probs = [0.4, 0.2, 0.1, 0.05, 0.001]
    predictions = [
        [{"id": 200 + r, "text": g, "display": schema.display_token(g), "prob": p} for r, (g, p) in enumerate(zip(guesses, probs))]
        for _ in toks
    ]
    meta = {
        "model": model, "hfName": "openai-community/gpt2" if model == "gpt2" else None, "revision": revision,
        "architecture": "gpt2", "nLayer": L, "nHead": H, "nKvHead": H, "positions": "learned", "ropeTheta": None, "width": H * d, "headDim": d, "nCtx": shape["n_ctx"], "vocabSize": 4096,
        "nParams": 123456, "tokenizer": "synthetic", "libraryVersions": {"numpy": "synthetic"},
        "schemaVersion": schema.SCHEMA_VERSION, "precision": {"compute": "float64", "significantDigits": 6},
        "standIn": stand_in,
    }
    from causal_helpers import fake_causal

    return {
        "schemaVersion": schema.SCHEMA_VERSION, "model": model, "text": text, "meta": meta,
        "tokens": token_docs, "layers": layers, "predictions": predictions,
        "causal": fake_causal(L, H, T, seed=seed),
    }


# The course's first example, with a planted head: layer 3, head 3 (1-based), ·her looks at
# Lily 0.66, ·her 0.12, ·wanted 0.10.
LILY = "Lily wanted to play with her"
LILY_PLANT = {(2, 2, 5): {0: 0.66, 1: 0.10, 2: 0.04, 3: 0.04, 4: 0.04, 5: 0.12}}


def lily_trace(weight: float = 0.66, **kw) -> dict:
    rest = 1 - weight - 0.10 - 0.12
    row = {0: weight, 1: 0.10, 2: rest / 3, 3: rest / 3, 4: rest / 3, 5: 0.12}
    return synthetic_trace(LILY, plant={(2, 2, 5): row}, **kw)


def write_traces(root: Path, traces) -> list[Path]:
    from generator.store import TraceStore

    store = TraceStore(root)
    return [store.write(t) for t in traces]


def stored(root: Path, model: str, text: str) -> dict:
    from generator.store import TraceStore

    return TraceStore(root).load(model, text)


# ---------------------------------------------------------------- real builds


def test_mkdocs_yml(traces_dir: str = "traces", training_log: str | None = None) -> str:
    """The repository's mkdocs.yml, made to build from a temporary folder: the theme overrides
    by absolute path, no nav, and without the glossary extension (its links need the real
    glossary page)."""
    text = (REPO / "mkdocs.yml").read_text(encoding="utf-8")
    text = text.replace("custom_dir: overrides", f"custom_dir: {json.dumps(str(REPO / 'overrides'))}")
    text = re.sub(r"^  - generator\.markdown\.lesson\n", "", text, flags=re.M)
    text = re.sub(r"^nav:\n(?:[ \t]+.*\n)+", "", text, flags=re.M)  # the course's pages are not here
    opts = f"      traces_dir: {traces_dir}\n"
    if training_log:
        opts += f"      training_log: {training_log}\n"
    text = text.replace("      traces_dir: traces\n", opts)
    return text


test_mkdocs_yml.__test__ = False  # a helper, not a test


@dataclass
class Built:
    root: Path
    site: Path
    returncode: int
    log: str

    @property
    def ok(self) -> bool:
        return self.returncode == 0

    def html(self, page: str = "index.md") -> str:
        return (self.site / (page[:-3] + ".html")).read_text(encoding="utf-8")


def write_project(root: Path, pages: dict[str, str], traces=(), training_log: dict | None = None) -> None:
    content = root / "content"
    for name, text in pages.items():
        p = content / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    if "index.md" not in pages:
        (content / "index.md").write_text("# Home\n", encoding="utf-8")
    (root / "traces").mkdir(exist_ok=True)
    write_traces(root / "traces", list(traces))
    log_name = None
    if training_log is not None:
        log_name = "training_log.json"
        (root / log_name).write_text(json.dumps(training_log), encoding="utf-8")
    (root / "mkdocs.yml").write_text(test_mkdocs_yml(training_log=log_name or "no-training-log.json"), encoding="utf-8")


def run_build(root: Path, strict: bool = True, env: dict | None = None, assets: bool = True, cmd: list[str] | None = None) -> Built:
    if assets:
        from generator.site import publish

        publish.write_assets(root / "content", root / "traces")
    site = root / "site"
    args = cmd or [sys.executable, "-m", "mkdocs", "build", "-f", "mkdocs.yml", "-d", str(site)] + (["--strict"] if strict else [])
    full_env = {k: v for k, v in os.environ.items() if k != "COURSE_ALLOW_STANDIN"}
    full_env["NO_MKDOCS_2_WARNING"] = "1"
    full_env.update(env or {})
    proc = subprocess.run(args, cwd=root, env=full_env, capture_output=True, text=True, timeout=300)
    return Built(root, site, proc.returncode, proc.stdout + proc.stderr)


@pytest.fixture
def site_builder(tmp_path):
    """build(pages, traces=(), strict=True, training_log=None, env=None) -> Built."""

    def build(pages: dict[str, str], traces=(), strict: bool = True, training_log: dict | None = None, env: dict | None = None) -> Built:
        write_project(tmp_path, pages, traces, training_log)
        return run_build(tmp_path, strict=strict, env=env)

    return build


# training_log_doc()'s head scores every 300 steps: induction jumps between steps 300 and 600
HEAD_SCORES = {
    "previous-token": [0.20, 0.68, 0.80, 0.95], "duplicate-token": [0.08, 0.30, 0.72, 0.74],
    "induction": [0.08, 0.88, 0.70, 0.60], "sink": [0.23, 0.61, 0.90, 0.96],
}
HEAD_CHANCE = {"previous-token": 0.1204, "duplicate-token": 0.0625, "induction": 0.0625, "sink": 0.1204}


def training_log_doc() -> dict:
    """A training log in the shape generator/model/training.py writes (source files, headScores)."""
    steps = [{"step": s, "loss": round(8 * math.exp(-s / 300) + 1.5, 4), "tokens": s * 4096} for s in range(1, 1201)]
    validation = [{"step": s, "loss": round(8 * math.exp(-s / 300) + 1.7, 4), "tokens": s * 4096} for s in (300, 600, 900, 1200)]
    head_scores = [
        {"step": s, "tokens": s * 4096, "best": {k: {"layer": 3, "head": i % 4, "score": v[i]} for k, v in HEAD_SCORES.items()}}
        for i, s in enumerate((300, 600, 900, 1200))
    ]
    return {
        "config": {"steps": 1200}, "corpusSha256": "ab" * 32,
        "source": [{"file": "stories.txt", "stories": 6000, "sha256": "cd" * 32}, {"file": "more-stories.txt", "stories": 4000, "sha256": "ef" * 32}],
        "stories": {"train": 9000, "validation": 1000}, "tokens": {"train": 10**6, "validation": 10**5},
        "nParams": 812345, "steps": steps, "validation": validation, "headScores": head_scores, "headChance": HEAD_CHANCE,
        "heldOut": {"bitsPerChar": 1.2345, "natsPerToken": 1.61, "stories": 100}, "wallSeconds": 1800.0,
    }


# The files that take longest start first, so that `make test`'s workers (xdist, one file each
# at a time) do not end with one of them running alone: the GPT-2-shaped end-to-end run and the
# whole-course builds. The order of the rest is kept.
SLOW_FIRST = ("test_gpt2_e2e.py", "test_determinism.py", "test_site_build.py", "test_crash_safety.py",
              "test_serve.py", "test_gpt2_chapter.py", "test_a11y.py", "test_reader_pages.py")


def pytest_collection_modifyitems(session, config, items):
    """The slow files first (SLOW_FIRST); the other files with a test of the run's GPT-2-shaped
    course (the `gpt2_shaped` fixture, marked gpt2_shaped here) last, so that the worker that runs
    one finds it built by test_gpt2_e2e.py's worker rather than waits on its lock."""
    shaped = set()
    for item in items:
        if "gpt2_shaped" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.gpt2_shaped)
            shaped.add(item.path.name)
    rank = {name: i for i, name in enumerate(SLOW_FIRST)}
    last = len(SLOW_FIRST) + 1
    items.sort(key=lambda item: rank.get(item.path.name, last if item.path.name in shaped else len(SLOW_FIRST)))  # sort is stable


# ---------------------------------------------------------------- GPT-2's shape, once per run


def run_dir(tmp_path_factory) -> Path:
    """The folder every worker of this pytest run shares: under pytest-xdist each worker's basetemp
    is a folder of the run's (popen-gw0, ...), so its parent; without xdist, the basetemp."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@pytest.fixture(scope="session", autouse=True)
def _shared_course_in_the_run_dir(tmp_path_factory):
    """course_builds.shared_course builds the course once for the whole run, every worker's tests
    reading the same build (before, each worker built its own)."""
    import course_builds

    course_builds.RUN_DIR = run_dir(tmp_path_factory)


@pytest.fixture(scope="session")
def gpt2_shaped(tmp_path_factory):
    """The run's one GPT-2-shaped course (tests/gpt2_store.py): a random GPT-2 small saved as a
    local copy, the course's GPT-2 sentences and the small scoring set traced with it through the
    CLI, and the course built --strict. Built by the first worker that needs it, under a file lock,
    in the folder the run's workers share."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from gpt2_store import shared

    return shared(run_dir(tmp_path_factory))
