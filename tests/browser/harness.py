"""A small static page that exercises course.js without MkDocs (a fast unit-level harness).

It writes, under a directory: ``index.html`` (the figures of FIGURES: attention, compare,
stepper, softmax, training, a pending box, a scoreboard with its examples, content tabs),
``lazy.html`` (the same page with heavy parts loaded only on demand),
``assets/{plotly.min.js,colorscale.js,course.js,course.css}`` and each trace's heavy part and
download copy under ``traces/tiny/``.

Every figure's markup is the renderer's own: the harness writes its synthetic traces into a
temporary trace store, parses each figure's spec as a lesson's fence body
(lessons.directives.parse_directive) and renders it with generator.render.render, as the site
build does; the trace files come from render.assets.write_trace_assets, the colours from
render.format. Only page() (the harness's page, not MkDocs's) and the content tabs
(pymdownx.tabbed, run here through Python-Markdown as mkdocs.yml configures it) are not the
renderer's.

The traces are synthetic (seeded numpy: q, k, v -> masked softmax). The reference text functions
below (``summary_text`` ...) are the tests' own reading of CONTRACT.md, written independently of
course.js and of the renderer; they read the numbers the page ships (``build`` returns them).
"""

from __future__ import annotations

import json
import math
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np

ASSETS = Path(__file__).resolve().parents[2] / "generator" / "assets"
TESTS = Path(__file__).resolve().parents[1]
XSS = "</script><img src=x onerror=window.__pwned=1>"

SENTENCE = "Lily wanted to play with her"
TOKENS_1 = ["Lily", " wanted", " to", " play", " with", " her"]
TOKENS_2 = ["The", " <b>", XSS, " &amp;", " cat", " cat", "\n", " cat"]
COMPARE_A = ["The", " cat", " sat", " down"]
COMPARE_B = ["The", " dog", " sat"]
SHAPE = dict(n_layer=3, n_head=4, head_dim=4)  # every harness trace: the store holds one shape per model
REVISION = "abc123def456"
PAGE = "harness.md"  # where the figures' specs "are", for the renderer's messages


def plotly_js() -> Path:
    """The bundle the site ships: Plotly's vendored cartesian partial bundle (render/assets.py)."""
    from generator.render import assets

    return assets.VENDOR / assets.PLOTLY_JS


# ------------------------------------------------------------------ synthetic traces


def _r(x: float) -> float:
    return float(f"{x:.5g}")


def _rounded(a) -> list:
    return [[_r(v) for v in row] for row in np.asarray(a).tolist()]


def make_trace(tokens: list[str], n_layer=SHAPE["n_layer"], n_head=SHAPE["n_head"], head_dim=SHAPE["head_dim"], seed=0,
               uniform_head=None, plant=None, text=None, ids=None) -> dict:
    """A trace document as the tracer hands it to the store (schema.SCHEMA_VERSION).
    `uniform_head` = (layer, head) whose weights are exactly uniform (row i = 1/(i+1): row 8 gives
    the tie 0.125); `plant` = {(layer, head, query): {key: weight}} sets rows of weights (the
    scoring traces' planted heads; the rest of the row shares what is left)."""
    from generator import schema

    from causal_helpers import fake_causal  # tests/ is on sys.path under pytest (and in __main__ below)

    rng = np.random.default_rng(seed)
    n = len(tokens)
    layers = []
    for layer in range(n_layer):
        heads = []
        for head in range(n_head):
            q = rng.normal(size=(n, head_dim)) * 1.6  # (token, head_dim)
            k = rng.normal(size=(n, head_dim)) * 1.6  # (token, head_dim)
            v = rng.normal(size=(n, head_dim))  # (token, head_dim)
            if (layer, head) == uniform_head:
                q = np.zeros_like(q)
            q, k, v = (np.array(_rounded(a)) for a in (q, k, v))
            scores = q @ k.T  # (query, key)
            scaled = scores / math.sqrt(head_dim)  # (query, key)
            mask = np.triu(np.ones((n, n), bool), 1)  # (query, key): a later key
            scaled_m = np.where(mask, -np.inf, scaled)
            e = np.exp(scaled_m - scaled_m.max(-1, keepdims=True))
            w = e / e.sum(-1, keepdims=True)  # (query, key)
            for (pl, ph, pq), row in (plant or {}).items():
                if (pl, ph) == (layer, head):
                    rest = (1 - sum(row.values())) / max(1, pq + 1 - len(row))
                    w[pq, : pq + 1] = [row.get(j, rest) for j in range(pq + 1)]
            out = w @ v  # (query, head_dim)
            sm = [[None if j > i else float(scaled[i, j]) for j in range(n)] for i in range(n)]
            heads.append({"q": q.tolist(), "k": k.tolist(), "v": v.tolist(), "scores": scores.tolist(),
                          "scaledMasked": sm, "weights": w.tolist(), "out": out.tolist()})
        concat = np.concatenate([np.array(h["out"]) for h in heads], axis=1)  # (token, n_head * head_dim)
        layers.append({"heads": heads, "attnConcat": concat.tolist()})
    meta = {"model": "tiny", "hfName": "local/tiny", "revision": REVISION, "architecture": "gpt2", "nLayer": n_layer, "nHead": n_head,
            "nKvHead": n_head, "positions": "learned", "ropeTheta": None,
            "width": n_head * head_dim, "headDim": head_dim, "nCtx": 256, "vocabSize": 4096, "nParams": 123456,
            "tokenizer": "synthetic", "libraryVersions": {"numpy": "synthetic"}, "schemaVersion": schema.SCHEMA_VERSION,
            "precision": {"compute": "float64", "significantDigits": 6}, "standIn": False}
    guesses = [" the", " a", " ball", ".", " and"]
    predictions = [[{"id": 200 + r, "text": g, "display": schema.display_token(g), "prob": p}
                    for r, (g, p) in enumerate(zip(guesses, (0.4, 0.2, 0.1, 0.05, 0.001)))] for _ in tokens]
    ids = None if ids is None else [int(i) for i in ids]
    doc = {
        "schemaVersion": schema.SCHEMA_VERSION, "model": "tiny", "text": "".join(tokens) if text is None else text,
        "meta": meta, "layers": layers, "predictions": predictions, "causal": fake_causal(n_layer, n_head, n, seed=seed),
        "tokens": [{"id": (ids[i] if ids else i + 1), "text": t, "display": schema.display_token(t), "spoken": schema.spoken_token(t)}
                   for i, t in enumerate(tokens)],
    }
    if ids is not None:
        doc["ids"] = ids
    return doc


def scoring_traces() -> list[dict]:
    """The scoreboard's scoring texts (heads.scoring_requests) in the harness's shape: layer 1,
    head 1 (0-based (0, 0)) is a planted previous-token head on the natural sentences and an
    induction head on the repeated random tokens, so each kind has an example to link to."""
    from generator import heads

    out = []
    for i, req in enumerate(heads.scoring_requests("tiny", {"standIn": False})):
        if req.ids is None:
            words = req.text.split(" ")
            toks = [words[0]] + [" " + w for w in words[1:]]
            plant = {(0, 0, q): {q - 1: 0.97, q: 0.03} for q in range(1, len(toks))}
            out.append(make_trace(toks, seed=100 + i, plant=plant, text=req.text))
            continue
        half = (len(req.ids) - 1) // 2
        plant = {(0, 0, q): {q - half + 1: 0.97, q: 0.03} for q in range(half + 1, len(req.ids))}
        out.append(make_trace([f" r{t}" for t in req.ids], seed=100 + i, plant=plant, text=req.text, ids=req.ids))
    return out


def training_log() -> dict:
    """A training log in the shape generator/model/training.py writes, for the training figure."""
    steps = [{"step": s, "loss": round(6 * math.exp(-s / 40) + 1.5, 4), "tokens": s * 4096} for s in range(1, 201)]
    validation = [{"step": s, "loss": round(6 * math.exp(-s / 40) + 1.7, 4), "tokens": s * 4096} for s in (50, 100, 150, 200)]
    return {"config": {"steps": 200}, "nParams": 123456, "steps": steps, "validation": validation}


def page_doc(trace) -> dict:
    """What course.js holds of a trace once its heavy part is in: the page's weights (render.context
    .trace_weights: 4 decimals, masked cells 0), the stored q, k, v, scores, scaledMasked, out."""
    from generator.render.context import trace_weights

    weights = trace_weights(trace).tolist()  # (layer, head, query, key)
    return {
        **{k: trace[k] for k in ("key", "model", "text", "meta", "tokens")},
        "layers": [{"heads": [{**h, "weights": weights[l][i]} for i, h in enumerate(layer["heads"])],
                    "attnConcat": layer["attnConcat"]} for l, layer in enumerate(trace["layers"])],
    }


# ------------------------------------------------------------------ reference text (CONTRACT.md)


SUBSCRIPTS = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")


def label(tokens: list[dict], j: int) -> str:
    """Token j as the page shows it: its display text, and where that text occurs more than once
    in the sentence, its position (from 0) as a subscript (·cat₄)."""
    text = tokens[j]["display"]
    repeated = sum(t["display"] == text for t in tokens) > 1
    return text + str(j).translate(SUBSCRIPTS) if repeated else text


def ranked(row: list[float], i: int) -> list[int]:
    idx = sorted(range(i + 1), key=lambda j: -row[j])[:3]
    return [j for n, j in enumerate(idx) if n == 0 or f"{row[j]:.2f}" != "0.00"]


def entries(tokens, row, i) -> str:
    return ", ".join(f"{label(tokens, j)} {row[j]:.2f}" for j in ranked(row, i))


def summary_text(doc: dict, layer: int, head: int, i: int) -> str:
    row = doc["layers"][layer]["heads"][head]["weights"][i]
    tokens = doc["tokens"]
    return f"In layer {layer + 1}, head {head + 1}, {label(tokens, i)} looks most at {entries(tokens, row, i)}."


def top3_texts(doc: dict, layer: int, head: int) -> list[str]:
    grid = doc["layers"][layer]["heads"][head]["weights"]
    tokens = doc["tokens"]
    return [f"{label(tokens, i)} looks at {entries(tokens, grid[i], i)}." for i in range(len(tokens))]


def mini_label(doc: dict, layer: int, head: int, i: int) -> str:
    row = doc["layers"][layer]["heads"][head]["weights"][i]
    tokens = doc["tokens"]
    return (f"L{layer + 1} H{head + 1} (layer {layer + 1}, head {head + 1}): "
            f"{label(tokens, i)} looks most at {entries(tokens, row, i)}")


def cell_texts(doc: dict, layer: int, head: int) -> list[list[str]]:
    grid = doc["layers"][layer]["heads"][head]["weights"]
    return [[f"{w:.2f}" if j <= i else "hidden" for j, w in enumerate(row)] for i, row in enumerate(grid)]


def colour(w: float) -> str:
    """A cell's background as the browser reports it, from the palette the site ships."""
    from generator.render import format as fmt

    return "rgb({}, {}, {})".format(*fmt.cell_rgb(w))


def softmax(xs: list[float]) -> list[float]:
    m = max(xs)
    e = [math.exp(x - m) for x in xs]
    s = sum(e)
    return [v / s for v in e]


# ------------------------------------------------------------------ the page's figures (the renderer's HTML)

# Each figure as a lesson's fence body would write it (JSON is YAML), in page order. The
# scoreboard renders its example figures right after itself (render/scoreboard.py).
SOFTMAX_SCORES = [2.0, 1.0, 0.1]
SOFTMAX_LABELS = ["Lily", "play", "her"]
PENDING_SENTENCE = "A sentence nobody traced"
STEPPER = {"tokens": ["Lily", "play", "her"], "query": [[1, 0], [0, 1], [1, 1]],
           "key": [[2, 0], [0, 1], [1, 0]], "value": [[1, 2], [0, 1], [2, 0]], "focus": 2}
FIGURES: list[tuple[str, dict]] = [
    ("attention", {"model": "tiny", "sentence": SENTENCE, "layer": 1, "head": 1, "id": "lily"}),
    ("tabs", {"code": "trace.layers[2].heads[2].weights"}),
    ("attention", {"model": "tiny", "sentence": "".join(TOKENS_2), "layer": 1, "head": 2, "show_heads": False, "id": "xss"}),
    ("compare", {"model": "tiny", "sentences": ["".join(COMPARE_A), "".join(COMPARE_B)], "layer": 1, "head": 1, "token": "#2"}),
    ("stepper", STEPPER),
    ("softmax", {"scores": SOFTMAX_SCORES, "labels": SOFTMAX_LABELS}),
    ("training", {"model": "tiny"}),
    ("attention", {"model": "gpt2", "sentence": PENDING_SENTENCE, "layer": 1, "head": 1}),  # not in the store: the pending box
    ("scoreboard", {"model": "tiny", "scores": ["previous-token", "induction"], "id": "board"}),
]
# Figure ids as the renderer numbers them in FIGURES' order (the tests' selectors)
TRAINING_FIG, PENDING_FIG, SCOREBOARD_FIG = "#fig-6", "#fig-7", "#fig-8"


def tabs(code: str) -> str:
    """A Picture tab and a Code tab, as pymdownx.tabbed (alternate style, as in mkdocs.yml) writes them."""
    import markdown

    text = f'=== "Picture"\n\n    See the grid above.\n\n=== "Code"\n\n        {code}\n'
    return markdown.markdown(text, extensions=["pymdownx.tabbed"], extension_configs={"pymdownx.tabbed": {"alternate_style": True}})


TAB_CSS = """
.tabbed-set{display:flex;flex-wrap:wrap}.tabbed-set>input{position:absolute;opacity:0}
.tabbed-labels{display:flex;gap:1em;width:100%}.tabbed-labels label{cursor:pointer;padding:.2em .5em}
.tabbed-content{width:100%}.tabbed-block{display:none}
.tabbed-set>input:first-child:checked~.tabbed-content>:first-child,
.tabbed-set>input:nth-child(2):checked~.tabbed-content>:nth-child(2){display:block}
"""


def page(body: str, head_extra: str = "") -> str:
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>course.js harness</title><link rel="stylesheet" href="assets/course.css">
<style>body{{font-family:sans-serif;max-width:60rem;margin:0 auto;padding:0 1rem}}{TAB_CSS}</style>{head_extra}
</head><body><article>
{body}
</article>
<script src="assets/plotly.min.js"></script>
<script src="assets/colorscale.js"></script>
<script src="assets/course.js"></script>
</body></html>
"""


def copy_assets(root: Path) -> None:
    """What page() loads, into root/assets: Plotly, the generated colour file, course.js/css."""
    from generator.render import format as fmt  # the generated colour file, as the site ships it
    from generator.render.script import course_js  # joined from its parts, as the site ships it

    (root / "assets").mkdir(parents=True, exist_ok=True)
    shutil.copyfile(plotly_js(), root / "assets" / "plotly.min.js")
    shutil.copyfile(ASSETS / "course.css", root / "assets" / "course.css")
    (root / "assets" / "course.js").write_text(course_js(), encoding="utf-8")
    (root / "assets" / "colorscale.js").write_text(fmt.colorscale_js(), encoding="utf-8")


def harness_docs() -> dict[str, dict]:
    """The harness's own sentences, by name, as trace documents for the store."""
    return {
        "lily": make_trace(TOKENS_1, seed=1),
        "xss": make_trace(TOKENS_2, seed=2, uniform_head=(0, 1)),
        "cmpa": make_trace(COMPARE_A, seed=3),
        "cmpb": make_trace(COMPARE_B, seed=4),
    }


def write_store(store_root: Path) -> None:
    """The harness's sentences, the scoring texts and their head scores, in a trace store."""
    from generator import heads
    from generator.store import TraceStore

    store = TraceStore(store_root)
    for doc in [*harness_docs().values(), *scoring_traces()]:
        store.write(doc)
    heads.write_scores(store, "tiny")


def render_figures(store_root: Path) -> tuple[str, list]:
    """(the page body, every trace a figure used) with each figure rendered as the site build does."""
    from generator import render
    from generator.lessons.directives import parse_directive
    from generator.render.context import Ctx
    from generator.store import TraceStore

    used: list = []
    ctx = Ctx(store=TraceStore(store_root), page=PAGE, assets_url="", training_log=training_log(), on_trace=used.append)
    parts = ["<h1>Harness</h1>"]
    for line, (kind, spec) in enumerate(FIGURES, 1):
        if kind == "tabs":
            parts.append(tabs(spec["code"]))
            continue
        d = parse_directive(kind, json.dumps(spec), f"{PAGE}:{line}")
        parts.append(render.render(d, ctx))
    return "\n".join(parts), used


def build(root: Path) -> dict:
    """Write the harness under `root`; return, by name, what the page ships of each harness
    sentence (page_doc), under "traces" the same of every trace on the page by key (the
    scoreboard's examples too), and under "board" the scoreboard's head scores (heads.HeadScores)."""
    from generator import heads
    from generator.render import assets

    root = Path(root)
    copy_assets(root)
    docs = harness_docs()
    with tempfile.TemporaryDirectory(prefix="harness-store-") as tmp:
        write_store(Path(tmp))
        board = heads.load_scores(tmp, "tiny")
        body, used = render_figures(Path(tmp))
        for trace in used:
            assets.write_trace_assets(trace, root)
        by_key = {t["key"]: page_doc(t) for t in used}
    by_text = {d["text"]: d for d in by_key.values()}
    (root / "index.html").write_text(page(body), encoding="utf-8")
    lazy = '<script>window.courseConfig = {idleParts: false};</script>'
    (root / "lazy.html").write_text(page(body, lazy), encoding="utf-8")
    return {**{name: by_text[d["text"]] for name, d in docs.items()}, "traces": by_key, "board": board}


if __name__ == "__main__":  # python tests/browser/harness.py OUTDIR (from the repository root)
    sys.path[:0] = [str(TESTS.parent), str(TESTS)]
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "build/harness")
    build(out)
    print(out / "index.html")
