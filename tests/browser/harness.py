"""A small static page that exercises course.js without MkDocs (a fast unit-level harness).

It writes, under a directory: ``index.html`` (one figure of every kind, hand-written from
CONTRACT.md), ``lazy.html`` (the same page with heavy parts loaded only on demand),
``assets/{plotly.min.js,course.js,course.css}`` and the heavy part ``traces/tiny/<key>.js``.

The traces are synthetic (seeded numpy: q, k, v -> masked softmax), rounded to 5 significant
digits like the trace store. The reference text functions below (``summary_text`` ...) are the
tests' own reading of CONTRACT.md, written independently of course.js.
"""

from __future__ import annotations

import html
import json
import math
import shutil
from pathlib import Path

import numpy as np

ASSETS = Path(__file__).resolve().parents[2] / "generator" / "assets"
CIVIDIS = ["#00224e", "#123570", "#3b496c", "#575d6d", "#707173",
           "#8a8678", "#a59c74", "#c3b369", "#e1cc55", "#fee838"]
XSS = "</script><img src=x onerror=window.__pwned=1>"

SENTENCE = "Lily wanted to play with her"
TOKENS_1 = ["Lily", " wanted", " to", " play", " with", " her"]
TOKENS_2 = ["The", " <b>", XSS, " &amp;", " cat", " cat", "\n", " cat"]
COMPARE_A = ["The", " cat", " sat", " down"]
COMPARE_B = ["The", " dog", " sat"]


def plotly_js() -> Path:
    """The bundle the site ships: Plotly's vendored cartesian partial bundle (render/assets.py)."""
    from generator.render import assets

    return assets.VENDOR / assets.PLOTLY_JS


# ------------------------------------------------------------------ synthetic traces


def _r(x: float) -> float:
    return float(f"{x:.5g}")


def _rounded(a) -> list:
    return [[_r(v) for v in row] for row in np.asarray(a).tolist()]


def display(text: str) -> str:
    if text.startswith(" "):
        text = "·" + text[1:]
    return text.replace("\n", "↵").replace("\t", "⇥")


def spoken(text: str) -> str:
    if text.startswith(" "):
        rest = text[1:]
        return f"space {rest}" if rest else "space"
    return "newline" if text == "\n" else text


def make_trace(key: str, tokens: list[str], n_layer=3, n_head=4, head_dim=4, seed=0, uniform_head=None):
    """A full trace document (light + heavy fields). `uniform_head` = (layer, head) whose
    weights are exactly uniform (row i = 1/(i+1): row 8 gives the tie 0.125)."""
    rng = np.random.default_rng(seed)
    n = len(tokens)
    layers = []
    for layer in range(n_layer):
        heads = []
        for head in range(n_head):
            q = rng.normal(size=(n, head_dim)) * 1.6
            k = rng.normal(size=(n, head_dim)) * 1.6
            v = rng.normal(size=(n, head_dim))
            if (layer, head) == uniform_head:
                q = np.zeros_like(q)
            q, k, v = (np.array(_rounded(a)) for a in (q, k, v))
            scores = q @ k.T
            scaled = scores / math.sqrt(head_dim)
            mask = np.triu(np.ones((n, n), bool), 1)
            scaled_m = np.where(mask, -np.inf, scaled)
            e = np.exp(scaled_m - scaled_m.max(-1, keepdims=True))
            w = e / e.sum(-1, keepdims=True)
            out = w @ v
            sm = [[None if j > i else _r(scaled[i, j]) for j in range(n)] for i in range(n)]
            heads.append({
                "q": _rounded(q), "k": _rounded(k), "v": _rounded(v), "scores": _rounded(scores),
                "scaledMasked": sm, "weights": _rounded(w), "out": _rounded(out),
            })
        concat = np.concatenate([np.array(h["out"]) for h in heads], axis=1)
        layers.append({"heads": heads, "attnConcat": _rounded(concat)})
    meta = {"model": "tiny", "hfName": "local/tiny", "revision": "abc123def456", "nLayer": n_layer,
            "nHead": n_head, "width": n_head * head_dim, "headDim": head_dim, "nCtx": 256}
    return {
        "key": key, "model": "tiny", "text": "".join(tokens), "meta": meta,
        "tokens": [{"id": i + 1, "text": t, "display": display(t), "spoken": spoken(t)} for i, t in enumerate(tokens)],
        "layers": layers,
    }


def light(doc: dict) -> dict:
    """The course-data JSON of an attention figure."""
    return {k: doc[k] for k in ("key", "model", "text", "meta", "tokens")} | {
        "weights": [[h["weights"] for h in layer["heads"]] for layer in doc["layers"]]
    }


def heavy_js(doc: dict) -> str:
    part = {"layers": [
        {"heads": [{k: h[k] for k in ("q", "k", "v", "scores", "scaledMasked", "out")} for h in layer["heads"]],
         "attnConcat": layer["attnConcat"]}
        for layer in doc["layers"]
    ]}
    return (f"window.courseTraceParts = window.courseTraceParts || {{}};\n"
            f"window.courseTraceParts[{json.dumps(doc['key'])}] = {json.dumps(part, separators=(',', ':'))};\n")


# ------------------------------------------------------------------ reference text (CONTRACT.md)


def ranked(row: list[float], i: int) -> list[int]:
    idx = sorted(range(i + 1), key=lambda j: -row[j])[:3]
    return [j for n, j in enumerate(idx) if n == 0 or f"{row[j]:.2f}" != "0.00"]


def entries(tokens, row, i) -> str:
    return ", ".join(f"{tokens[j]['display']} {row[j]:.2f}" for j in ranked(row, i))


def summary_text(doc: dict, layer: int, head: int, i: int) -> str:
    row = doc["layers"][layer]["heads"][head]["weights"][i]
    tokens = doc["tokens"]
    return f"In layer {layer + 1}, head {head + 1}, {tokens[i]['display']} looks most at {entries(tokens, row, i)}."


def top3_texts(doc: dict, layer: int, head: int) -> list[str]:
    grid = doc["layers"][layer]["heads"][head]["weights"]
    tokens = doc["tokens"]
    return [f"{tokens[i]['display']} looks at {entries(tokens, grid[i], i)}." for i in range(len(tokens))]


def mini_label(doc: dict, layer: int, head: int, i: int) -> str:
    row = doc["layers"][layer]["heads"][head]["weights"][i]
    tokens = doc["tokens"]
    return (f"L{layer + 1} H{head + 1} (layer {layer + 1}, head {head + 1}): "
            f"{tokens[i]['display']} looks most at {entries(tokens, row, i)}")


def cell_texts(doc: dict, layer: int, head: int) -> list[list[str]]:
    grid = doc["layers"][layer]["heads"][head]["weights"]
    return [[f"{w:.2f}" if j <= i else "hidden" for j, w in enumerate(row)] for i, row in enumerate(grid)]


def colour(w: float) -> tuple[str, str]:
    p = min(1.0, max(0.0, w)) * 9
    i = min(math.floor(p), 8)
    f = p - i
    a = [int(CIVIDIS[i][k:k + 2], 16) for k in (1, 3, 5)]
    b = [int(CIVIDIS[i + 1][k:k + 2], 16) for k in (1, 3, 5)]
    c = [round(a[j] + (b[j] - a[j]) * f) for j in range(3)]
    return f"rgb({c[0]}, {c[1]}, {c[2]})", "#000" if w >= 0.47 else "#fff"


def softmax(xs: list[float]) -> list[float]:
    m = max(xs)
    e = [math.exp(x - m) for x in xs]
    s = sum(e)
    return [v / s for v in e]


# ------------------------------------------------------------------ HTML (what the renderer writes)

E = html.escape


def script_json(data) -> str:
    s = json.dumps(data, ensure_ascii=True).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return f'<script type="application/json" class="course-data">{s}</script>'


def tok_html(t: dict) -> str:
    return f'<span class="course-tok" aria-label="{E(t["spoken"])}">{E(t["display"])}</span>'


def sentence_html(tokens, row, i, prefix, middle) -> str:
    parts = [f"{tok_html(tokens[j])} {row[j]:.2f}" for j in ranked(row, i)]
    return f"{prefix}{tok_html(tokens[i])}{middle}{', '.join(parts)}."


def panel_children(fig_id: str, doc: dict, layer: int, head: int, token: int, controls: bool) -> str:
    tokens = doc["tokens"]
    n = len(tokens)
    grid = doc["layers"][layer]["heads"][head]["weights"]
    nl, nh = len(doc["layers"]), len(doc["layers"][0]["heads"])
    out = [f'<p class="course-summary" aria-live="polite">'
           f'{sentence_html(tokens, grid[token], token, f"In layer {layer + 1}, head {head + 1}, ", " looks most at ")}</p>']
    if controls:
        def sel(what, options, value):
            opts = "".join(f'<option value="{v}"{" selected" if v == value else ""}>{E(lab)}</option>' for v, lab in options)
            return (f'<label for="{fig_id}-{what}">{what.capitalize()}</label>'
                    f'<select id="{fig_id}-{what}" data-control="{what}">{opts}</select>')
        out.append('<div class="course-controls">'
                   + sel("token", [(i, f"{i + 1}: {t['display']}") for i, t in enumerate(tokens)], token)
                   + sel("layer", [(i, f"Layer {i + 1}") for i in range(nl)], layer)
                   + sel("head", [(i, f"Head {i + 1}") for i in range(nh)], head)
                   + f'<button type="button" data-action="heads" aria-expanded="false" aria-controls="{fig_id}-heads">'
                   'All heads</button></div>')
        out.append(f'<div class="course-heads" id="{fig_id}-heads" hidden></div>')  # under the pickers
    out.append('<div class="course-plot" aria-hidden="true"></div>')
    out.append('<div class="course-view-foot"><p class="course-note">0.00 means less than 0.005. Hidden cells are later tokens that this token cannot see.</p></div>')
    head_row = "".join(f'<th scope="col">{tok_html(t)}</th>' for t in tokens)
    rows = []
    for i in range(n):
        cells = []
        for j in range(n):
            if j > i:
                cells.append(f'<td class="course-masked" data-q="{i}" data-k="{j}">hidden</td>')
            else:
                bg, fg = colour(grid[i][j])
                cells.append(f'<td data-q="{i}" data-k="{j}" style="background:{bg};color:{fg}">{grid[i][j]:.2f}</td>')
        cls = ' class="course-focus"' if i == token else ""
        rows.append(f'<tr{cls}><th scope="row">{tok_html(tokens[i])}</th>{"".join(cells)}</tr>')
    out.append(f'<div class="course-table-wrap"><table class="course-table"><caption>Attention weights, '
               f'layer {layer + 1}, head {head + 1}</caption><thead><tr><td></td>{head_row}</tr></thead>'
               f'<tbody>{"".join(rows)}</tbody></table></div>')
    lis = "".join(f"<li>{sentence_html(tokens, grid[i], i, '', ' looks at ')}</li>" for i in range(n))
    out.append(f'<div class="course-top3"><ol>{lis}</ol></div>')
    return "\n".join(out)


def attention_fig(n: int, doc: dict, layer=0, head=0, token=None, show_heads=False) -> str:
    token = len(doc["tokens"]) - 1 if token is None else token
    fid = f"fig-{n}"
    return (f'<figure class="course-fig" id="{fid}" data-kind="attention" data-trace-key="{doc["key"]}" '
            f'data-model="tiny" data-parts="traces/tiny/{doc["key"]}.js" data-layer="{layer}" data-head="{head}" '
            f'data-token="{token}" data-show-heads="{str(show_heads).lower()}">\n'
            + panel_children(fid, doc, layer, head, token, True)
            + f'\n<figcaption class="course-prov">Model tiny (revision abc123def456) · '
              f'<a href="traces/tiny/{doc["key"]}.json" download>trace JSON</a></figcaption>\n'
            + script_json(light(doc)) + "\n</figure>")


def compare_fig(n: int, a: dict, b: dict, layer=0, head=0, token=2) -> str:
    fid = f"fig-{n}"
    panels = "".join(
        f'<div class="course-panel" data-trace-key="{d["key"]}" data-parts="traces/tiny/{d["key"]}.js">'
        + panel_children(fid, d, layer, head, min(token, len(d["tokens"]) - 1), i == 0) + "</div>"
        for i, d in enumerate((a, b)))
    return (f'<figure class="course-fig" id="{fid}" data-kind="compare" data-layer="{layer}" data-head="{head}" '
            f'data-token="{token}"><div class="course-pair">{panels}</div>'
            '<div class="course-diff"><table class="course-diff-table"><thead><tr><th>Position</th><th>Token A</th>'
            '<th>Weight A</th><th>Token B</th><th>Weight B</th><th>B − A</th></tr></thead><tbody></tbody></table></div>'
            + script_json({"panels": [light(a), light(b)], "align": align_json(a, b)}) + "</figure>")


def align_json(a: dict, b: dict) -> dict:
    """The compare figure's alignment, as generator/render/compare.py ships it."""
    from generator.render.compare import align
    return align(a["tokens"], b["tokens"]).payload()


STEPS = ["Queries: each token asks a question.", "Keys: each token offers an answer.",
         "Scores: q · k for every pair.", "Softmax turns scores into weights.", "Values: the weighted sum."]


def stepper_fig(n: int) -> str:
    lis = "".join(f'<li class="course-step"><p>{E(s)}</p></li>' for s in STEPS)
    return (f'<figure class="course-fig" id="fig-{n}" data-kind="stepper"><ol class="course-steps">{lis}</ol>'
            + script_json({"steps": len(STEPS)}) + "</figure>")


SOFTMAX_SCORES = [2.0, 1.0, 0.1]


def softmax_fig(n: int, scores=SOFTMAX_SCORES, labels=("Lily", "play", "her")) -> str:
    ws = softmax(scores)
    rows = "".join(
        f'<tr><td><label for="sm-{i}">{E(lab)}</label></td>'
        f'<td><input id="sm-{i}" type="number" step="0.1" data-score="{i}" value="{s}"></td>'
        f'<td><output class="course-weight" data-i="{i}" for="sm-{i}">{w:.3f}</output></td>'
        f'<td style="width:12em"><div class="course-bar" data-i="{i}" style="width:{w * 100:.1f}%"></div></td></tr>'
        for i, (s, w, lab) in enumerate(zip(scores, ws, labels)))
    return (f'<figure class="course-fig" id="fig-{n}" data-kind="softmax"><table><thead><tr><th>Token</th>'
            f'<th>Score</th><th>Weight</th><th></th></tr></thead><tbody>{rows}</tbody></table>'
            + script_json({"scores": scores, "labels": list(labels)}) + "</figure>")


SCORES = [(1, 1, 0.12), (1, 2, 0.91), (2, 3, 0.45), (3, 4, 0.67), (2, 1, 0.05)]


def scoreboard_fig(n: int, example: int) -> str:
    rows = "".join(
        f'<tr><td data-value="{l}">{l}</td><td data-value="{h}">{h}</td><td data-value="{s}">{s:.2f}</td>'
        f'<td><a href="#fig-{example}:layer={l},head={h}">see it</a></td></tr>' for l, h, s in SCORES)
    head = "".join(f'<th scope="col"><button type="button" data-sort="{k}">{k.capitalize()}</button></th>'
                   for k in ("layer", "head", "score"))
    return (f'<figure class="course-fig" id="fig-{n}" data-kind="scoreboard"><section><h3>previous-token</h3>'
            f'<table class="course-sortable"><thead><tr>{head}<th scope="col">Example</th></tr></thead>'
            f'<tbody>{rows}</tbody></table></section>' + script_json({}) + "</figure>")


def training_fig(n: int) -> str:
    steps = [{"step": s, "loss": round(6 * math.exp(-s / 40) + 1.5, 4)} for s in range(1, 201, 5)]
    val = [{"step": s, "loss": round(6 * math.exp(-s / 40) + 1.7, 4)} for s in (50, 100, 150, 200)]
    rows = "".join(f"<tr><td>{p['step']}</td><td>{p['loss']:.3f}</td></tr>" for p in val)
    return (f'<figure class="course-fig" id="fig-{n}" data-kind="training"><div class="course-plot" aria-hidden="true"></div>'
            f'<table><thead><tr><th>Step</th><th>Validation loss</th></tr></thead><tbody>{rows}</tbody></table>'
            + script_json({"steps": steps, "validation": val}) + "</figure>")


def pending_fig(n: int) -> str:
    return (f'<figure class="course-fig course-pending" id="fig-{n}" data-kind="attention" data-model="gpt2" '
            'data-pending="true"><div class="course-pending-box" role="note"><p><strong>Not traced in this copy of the course.</strong>'
            '</p></div></figure>')


def tabs(code: str) -> str:
    """pymdownx.tabbed (alternate style) markup: a Picture tab and a Code tab."""
    return ('<div class="tabbed-set tabbed-alternate" data-tabs="1:2">'
            '<input checked="checked" id="__tabbed_1_1" name="__tabbed_1" type="radio">'
            '<input id="__tabbed_1_2" name="__tabbed_1" type="radio">'
            '<div class="tabbed-labels"><label for="__tabbed_1_1">Picture</label><label for="__tabbed_1_2">Code</label></div>'
            '<div class="tabbed-content"><div class="tabbed-block"><p>See the grid above.</p></div>'
            f'<div class="tabbed-block"><pre><code>{E(code)}</code></pre></div></div></div>')


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

    (root / "assets").mkdir(parents=True, exist_ok=True)
    shutil.copyfile(plotly_js(), root / "assets" / "plotly.min.js")
    from generator.render.script import course_js  # joined from its parts, as the site ships it

    shutil.copyfile(ASSETS / "course.css", root / "assets" / "course.css")
    (root / "assets" / "course.js").write_text(course_js(), encoding="utf-8")
    (root / "assets" / "colorscale.js").write_text(fmt.colorscale_js(), encoding="utf-8")


def build(root: Path) -> dict:
    """Write the harness under `root`; return the trace documents by name."""
    root = Path(root)
    (root / "assets").mkdir(parents=True, exist_ok=True)
    (root / "traces" / "tiny").mkdir(parents=True, exist_ok=True)
    copy_assets(root)
    docs = {
        "lily": make_trace("lily0001", TOKENS_1, seed=1),
        "xss": make_trace("xss00002", TOKENS_2, seed=2, uniform_head=(0, 1)),
        "cmpa": make_trace("cmpa0003", COMPARE_A, seed=3),
        "cmpb": make_trace("cmpb0004", COMPARE_B, seed=4),
    }
    for d in docs.values():
        (root / "traces" / "tiny" / f"{d['key']}.js").write_text(heavy_js(d), encoding="utf-8")
        (root / "traces" / "tiny" / f"{d['key']}.json").write_text(json.dumps(d), encoding="utf-8")
    body = "\n".join([
        "<h1>Harness</h1>",
        attention_fig(1, docs["lily"], layer=0, head=0),
        tabs("trace.layers[2].heads[2].weights"),
        attention_fig(2, docs["xss"], layer=0, head=1, show_heads=False),
        compare_fig(3, docs["cmpa"], docs["cmpb"]),
        stepper_fig(4),
        softmax_fig(5),
        scoreboard_fig(6, example=1),
        training_fig(7),
        pending_fig(8),
    ])
    (root / "index.html").write_text(page(body), encoding="utf-8")
    lazy = '<script>window.courseConfig = {idleParts: false};</script>'
    (root / "lazy.html").write_text(page(body, lazy), encoding="utf-8")
    return docs


if __name__ == "__main__":  # python tests/browser/harness.py OUTDIR
    import sys

    out = Path(sys.argv[1] if len(sys.argv) > 1 else "build/harness")
    build(out)
    print(out / "index.html")
