"""`python -m generator bench` (make bench): figures, not tests.

For the tiny model and for the random 12 × 12 × 768 stand-in of GPT-2 small it prints:

* model load time;
* the tracer's time per sentence (capture + recomputation + self-checks + building the
  document) as a ratio to a bare ``model(ids, output_attentions=True)`` forward; medians of
  several alternating runs after a warm-up, model load excluded, in wall-clock and in CPU time.
  Target: ≤ 1.5×;
* the store's encode time (rounding + JSON), reported apart;
* bytes per trace, raw and gzipped, for "Lily wanted to play with her" on tiny and a 12-token
  sentence on the stand-in;
* the size of the GPT-2 chapter's whole trace set (every gpt2 sentence of the lessons plus the
  head-scoring texts) traced with the stand-in, as the store writes it (schema 3, encoded) and as
  plain JSON with every float a 5-digit number (schema 2's way), raw and gzipped, in MB (10⁶ bytes);
* every GPT-2 figure's first load (its element with its inline JSON, gzipped) rendered from the
  stand-in with GPT-2's committed tokenizer, against the 60 kB budget of issue 14, and the size
  of the heavy parts that load after the first paint, encoded as the site writes them and plain.
"""

from __future__ import annotations

import gzip
import statistics
import time

TINY_SENTENCE = "Lily wanted to play with her"
LONG_SENTENCE = "Lily wanted to play with her ball in the park, but Ben said it was time to go home."
STAND_IN_TOKENS = 12


def _median_time(fn, runs: int, clock=time.perf_counter) -> float:
    fn()  # warm-up
    times = []
    for _ in range(runs):
        t = clock()
        fn()
        times.append(clock() - t)
    return statistics.median(times)


def _paired(fn_a, fn_b, runs: int) -> dict:
    """Wall and CPU medians of fn_a and fn_b, run alternately (a, b, a, b, …) after a warm-up of
    each, so that both see the same load. CPU time (all threads of this process) is the fairer
    figure on a machine that other jobs share; wall time is what a person waits."""
    for _ in range(2):
        fn_a(), fn_b()
    t = {("a", "wall"): [], ("a", "cpu"): [], ("b", "wall"): [], ("b", "cpu"): []}
    for _ in range(runs):
        for name, fn in (("a", fn_a), ("b", fn_b)):
            w, c = time.perf_counter(), time.process_time()
            fn()
            t[(name, "wall")].append(time.perf_counter() - w)
            t[(name, "cpu")].append(time.process_time() - c)
    return {k: statistics.median(v) for k, v in t.items()}


def bench_one(label: str, load, text: str, ids=None, runs: int = 7) -> dict:
    from ..model import load as models, tracing
    from ..store import TraceStore

    t = time.perf_counter()
    lm = load()
    load_s = time.perf_counter() - t
    tid = tracing.token_ids(lm, text, ids)
    bare = models.bare_forward(lm, tid)
    m = _paired(bare, lambda: tracing.trace(lm, text, ids), runs)
    bare_s, bare_cpu, trace_s, trace_cpu = m["a", "wall"], m["a", "cpu"], m["b", "wall"], m["b", "cpu"]
    doc = tracing.trace(lm, text, ids)
    store = TraceStore("/nonexistent")  # encode only, nothing is written
    encode_s = _median_time(lambda: store.encode(doc), max(3, runs // 2))
    _, data = store.encode(doc)
    gz = gzip.compress(data, compresslevel=9, mtime=0)
    return {
        "label": label,
        "tokens": len(tid),
        "load_s": load_s,
        "bare_ms": bare_s * 1e3,
        "trace_ms": trace_s * 1e3,
        "ratio": trace_s / bare_s,
        "cpu_ratio": trace_cpu / bare_cpu,
        "encode_ms": encode_s * 1e3,
        "bytes": len(data),
        "gzip_bytes": len(gz),
        "rev": lm.revision,
    }


def chapter_set_size(lm, content_dir=None) -> dict:
    """Bytes of the GPT-2 chapter's trace set made with `lm` (the stand-in): every gpt2 sentence
    the lessons use plus heads.scoring_requests, encoded as the store writes them and as plain
    rounded JSON. Nothing is written."""
    from pathlib import Path

    from .. import heads
    from ..store import traces as store
    from ..model import tracing
    from ..lessons import pages

    content_dir = Path(content_dir or Path(__file__).resolve().parents[2] / "content")
    reqs = [it.request for it in pages.collect(content_dir) if it.request.model == "gpt2"]
    reqs += heads.scoring_requests("gpt2", lm.meta)
    reqs = list(dict.fromkeys(reqs))
    enc = store.TraceStore("/nonexistent")
    r = {"traces": len(reqs), "tokens": 0, "bytes": 0, "gzip_bytes": 0, "plain_bytes": 0, "plain_gzip_bytes": 0}
    for req in reqs:
        doc = tracing.trace(lm, req.text, req.ids)
        _, data = enc.encode(doc)
        plain = store.dumps(store.round_floats(doc))
        r["tokens"] += len(doc["tokens"])
        r["bytes"] += len(data)
        r["gzip_bytes"] += len(gzip.compress(data, compresslevel=9, mtime=0))
        r["plain_bytes"] += len(plain)
        r["plain_gzip_bytes"] += len(gzip.compress(plain, compresslevel=6, mtime=0))
    return r


def print_chapter_set(r: dict, out=print) -> None:
    n, mb = r["traces"], 1e6
    out(f"GPT-2 chapter trace set on the stand-in: {n} traces, {r['tokens']} tokens")
    out(f"  stored (schema 4, encoded): {r['bytes'] / mb:.2f} MB raw, {r['gzip_bytes'] / mb:.2f} MB gzipped; "
        f"per trace {r['bytes'] / n / mb:.2f} MB raw, {r['gzip_bytes'] / n / mb:.2f} MB gzipped")
    out(f"  plain JSON (5 digits):      {r['plain_bytes'] / mb:.2f} MB raw, {r['plain_gzip_bytes'] / mb:.2f} MB gzipped (level 6); "
        f"per trace {r['plain_bytes'] / n / mb:.2f} MB raw")


# ---------------------------------------------------------------- the causal block's budgets

TRACER_RATIO_TARGET = 1.5  # the tracer's forward pass against a bare one with output_attentions
TRACE_GROWTH_BUDGET = 0.40  # a tiny trace file grows by at most this with its causal block
TRACING_TIME_BUDGET = 3.0  # `make traces` for the tiny model takes at most this many times as long
GPT2_SET_BUDGET = 35e6  # bytes: the GPT-2 chapter's trace set on the stand-in
TINY_TRACING_SECONDS = 120  # the tiny course's whole tracing step, robust test included (issue 47), on 2 cores
CIRCUITS_GROWTH_BUDGET = 0.50  # tiny circuits.json grows by at most this with its robust block (issue 47)


from . import met  # noqa: E402 ("met" / "missed", as every bench module says it)


def causal_budgets(traces_dir=None, runs: int = 3, out=print) -> dict:
    """The causal block against its budgets: each committed tiny trace's bytes with and without
    it; the tracer's time per sentence with and without it; and the time of the tiny model's whole
    tracing step (load, every lesson and scoring text, heads.json, circuits.json) with the causal
    measurements and without, from an empty store each time."""
    import json
    from pathlib import Path

    from ..model import causal, circuits, load as models, tracing
    from .. import heads
    from ..lessons import pages

    root = Path(traces_dir or Path(__file__).resolve().parents[2] / "traces") / "tiny"
    growth = []
    for p in sorted(root.glob("*.json")):
        raw = p.read_bytes()
        doc = json.loads(raw)
        if not isinstance(doc, dict) or "causal" not in doc:
            continue
        doc.pop("causal")
        without = len((json.dumps(doc, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8"))
        growth.append((len(raw) / without - 1, p.name, len(raw)))
    worst = max(growth) if growth else (0.0, "-", 0)
    out(f"tiny trace files with the causal block: {len(growth)} files, growth {min(g for g, *_ in growth):.0%} to "
        f"{worst[0]:.0%} ({worst[1]}); budget ≤ {TRACE_GROWTH_BUDGET:.0%}: {met(worst[0] <= TRACE_GROWTH_BUDGET)}")

    models.set_threads(1)
    t = time.perf_counter()
    lm = models.load_tiny()
    load_s = time.perf_counter() - t
    reqs = [it.request for it in pages.collect(Path(__file__).resolve().parents[2] / "content") if it.request.model == "tiny"]
    reqs = list(dict.fromkeys(reqs + heads.scoring_requests("tiny", dict(lm.meta))))

    def plain(req):
        ids = tracing.token_ids(lm, req.text, req.ids)
        cap = tracing.capture(lm, ids)
        tracing.self_check(cap, lm.name)
        return tracing.to_document(lm, req.text, cap, ids_given=req.ids is not None)

    def whole(with_causal: bool) -> float:
        """Every text traced (and, with the causal measurements, circuits.json computed), from a
        model with nothing cached; the store's writing is left out of both."""
        lm.__dict__.pop("_circuit_parts", None)
        lm.__dict__.pop("_causal_reference", None)
        t0 = time.perf_counter()
        for req in reqs:
            tracing.trace(lm, req.text, req.ids) if with_causal else plain(req)
        if with_causal:  # the robust test is timed on its own below: it is not per sentence
            circuits.circuits(lm, causal.reference(lm), with_robust=False)
        return time.perf_counter() - t0

    a = statistics.median([whole(False) for _ in range(runs)])
    b = statistics.median([whole(True) for _ in range(runs)])
    step_ratio = (load_s + b) / (load_s + a)
    one = reqs[0]
    per_plain = _median_time(lambda: plain(one), 5)
    per_full = _median_time(lambda: tracing.trace(lm, one.text, one.ids), 5)
    out(f"tiny tracing step ({len(reqs)} texts, model load {load_s:.2f} s included): {load_s + a:.2f} s without the "
        f"causal measurements, {load_s + b:.2f} s with them (and circuits.json): {step_ratio:.2f}×; budget ≤ "
        f"{TRACING_TIME_BUDGET:.0f}×: {met(step_ratio <= TRACING_TIME_BUDGET)}")
    out(f"  per sentence ({len(tracing.token_ids(lm, one.text, one.ids))} tokens): {per_plain * 1e3:.1f} ms without, "
        f"{per_full * 1e3:.1f} ms with ({per_full / per_plain:.1f}×: 2 ablations × {int(lm.meta['nLayer']) * int(lm.meta['nHead'])} "
        f"heads, each run from the removed head's block on)")
    from ..model import robust

    models.set_threads(2)
    t0 = time.perf_counter()
    robust.robust(lm, causal.reference(lm))
    robust_s = time.perf_counter() - t0
    total = load_s + b + robust_s
    out(f"  robust copying test (4 methods × {int(lm.meta['nLayer']) * int(lm.meta['nHead'])} heads × lengths "
        f"{', '.join(map(str, robust.RobustConfig().lengths))}, {robust.RobustConfig().n_texts} texts each, 2 threads): "
        f"{robust_s:.1f} s; whole step {total:.1f} s, budget ≤ {TINY_TRACING_SECONDS} s: {met(total <= TINY_TRACING_SECONDS)}")
    circ = root / "circuits.json"
    if circ.is_file():
        doc = json.loads(circ.read_bytes())
        size = circ.stat().st_size
        doc.pop("robust", None)
        without = len((json.dumps(doc, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8"))
        out(f"  tiny circuits.json: {size / 1e6:.2f} MB, {size / without - 1:.0%} more than without its robust block; "
            f"budget ≤ {CIRCUITS_GROWTH_BUDGET:.0%}: {met(size / without - 1 <= CIRCUITS_GROWTH_BUDGET)}")
    return {"growth": worst[0], "step_ratio": step_ratio, "per_sentence_ratio": per_full / per_plain, "robust_s": robust_s}


FIRST_LOAD_BUDGET = 60_000  # bytes gzipped per figure (issue 14 item 4)
FIGURE_RE = r'<figure class="course-fig" id="(fig-\d+)" data-kind="(\w+)".*?</figure>'


HEAD_SWITCH_BUDGET = 60_000  # bytes gzipped one head switch may load on GPT-2 (issue 29 item 12)


def figure_first_loads(lm, content_dir=None) -> tuple[list[dict], dict]:
    """Every GPT-2 figure of the lessons rendered from `lm`'s traces (the stand-in with GPT-2's
    committed tokenizer), each figure element gzipped at level 9 as tests/test_gpt2_e2e.py
    measures it: the page's first load for that figure, its inline JSON included (the heavy parts
    load as their heads are shown). Also every head's parts of those traces (render.assets.heavy_part_js), encoded
    as the site writes them and plain as it wrote them before, in bytes and gzipped. Traces and
    heads.json go to a temporary store; nothing else is written."""
    import re
    import tempfile
    from pathlib import Path

    from .. import heads, render
    from ..render import assets
    from ..model import tracing
    from ..lessons import pages
    from ..lessons.source import iter_markdown
    from ..render.context import Ctx
    from ..store import TraceStore

    content_dir = Path(content_dir or Path(__file__).resolve().parents[2] / "content")
    reqs = [it.request for it in pages.collect(content_dir) if it.request.model == "gpt2"]
    reqs += heads.scoring_requests("gpt2", lm.meta)
    rows = []
    parts = {"parts": 0, "bytes": 0, "gzip_bytes": 0, "plain_bytes": 0, "plain_gzip_bytes": 0}
    with tempfile.TemporaryDirectory() as tmp:
        store = TraceStore(tmp)
        for req in dict.fromkeys(reqs):
            path = store.write(tracing.trace(lm, req.text, req.ids))
            trace = store.load(req.model, req.text, req.ids)
            for name, js in (("", assets.heavy_part_js(trace)), ("plain_", assets.heavy_part_js(dict(trace)))):
                parts[f"{name}bytes"] += len(js)
                parts[f"{name}gzip_bytes"] += len(gzip.compress(js, 6, mtime=0))
            parts["parts"] += 1
            for fname, js in assets.head_parts(trace).items():  # what one head switch, or "All heads", loads
                field = "weights_gzip_max" if fname == "weights.js" else "head_gzip_max"
                parts[field] = max(parts.get(field, 0), len(gzip.compress(js, 6, mtime=0)))
        heads.write_scores(store, "gpt2")
        for path in iter_markdown(content_dir):
            ctx = Ctx(store=store, page=str(path), assets_url="assets/generated/", allow_standin=True)
            for d in pages.parse_file(path):
                if getattr(d, "model", None) != "gpt2" or d.kind not in ("attention", "compare", "scoreboard"):
                    continue
                for m in re.finditer(FIGURE_RE, render.render(d, ctx), flags=re.S):
                    rows.append({"page": path.name, "figure": m.group(1), "kind": m.group(2),
                                 "gzip_bytes": len(gzip.compress(m.group(0).encode("utf-8"), 9, mtime=0))})
    return rows, parts


def print_first_loads(rows: list[dict], parts: dict, out=print) -> None:
    out(f"GPT-2 figures' first load on the stand-in (figure element with its inline JSON, gzip -9; budget {FIRST_LOAD_BUDGET / 1000:.0f} kB each):")
    for r in rows:
        out(f"  {r['page']} {r['figure']} {r['kind']:<11} {r['gzip_bytes'] / 1000:6.1f} kB")
    if rows:
        worst = max(rows, key=lambda r: r["gzip_bytes"])
        out(f"  largest {worst['gzip_bytes'] / 1000:.1f} kB ({worst['page']} {worst['figure']}): "
            f"budget {FIRST_LOAD_BUDGET / 1000:.0f} kB: {met(worst['gzip_bytes'] <= FIRST_LOAD_BUDGET)}")
    n, mb = max(parts["parts"], 1), 1e6
    out(f"  every head's parts (loaded as heads are shown; all on courseReady()) of the chapter's {parts['parts']} traces, scoring texts included: encoded {parts['bytes'] / mb:.2f} MB "
        f"({parts['gzip_bytes'] / mb:.2f} MB gzipped, {parts['bytes'] / n / mb:.2f} MB per trace); "
        f"plain {parts['plain_bytes'] / mb:.2f} MB ({parts['plain_gzip_bytes'] / mb:.2f} MB gzipped)")
    if "head_gzip_max" in parts:
        out(f"  loaded per head switch: one head's part, at most {parts['head_gzip_max'] / 1000:.1f} kB gzipped "
            f"[target <= {HEAD_SWITCH_BUDGET / 1000:.0f} kB: {met(parts['head_gzip_max'] <= HEAD_SWITCH_BUDGET)}]; "
            f"\"All heads\": weights.js, at most {parts['weights_gzip_max'] / 1000:.1f} kB gzipped")


def gpt2_stand_in():
    """The stand-in with GPT-2's committed tokenizer, so the lessons' GPT-2 sentences and token
    references resolve as they will on real GPT-2."""
    from ..model import load as models
    from .. import tokens

    return models.from_parts("gpt2", models.random_model(**models.GPT2_SMALL_SHAPE, seed=0), tokens.tokenizer("gpt2"),
                             models.STAND_IN_REVISION, stand_in=True, tokenizer_name="GPT-2's committed tokenizer (stand-in)")


def run_bench(runs: int = 7, out=print) -> list[dict]:
    from ..model import load as models

    results = []
    tok = None
    try:
        tok = models.tiny_tokenizer()
        results.append(bench_one("tiny", models.load_tiny, TINY_SENTENCE, runs=runs))
    except models.ModelUnavailable as e:
        out(f"tiny: skipped ({e})")
    if tok is None:  # no committed tokenizer yet: a throwaway one so the stand-in still runs
        from ..model.training import train_tokenizer

        tok = train_tokenizer([LONG_SENTENCE] * 50, 500)
        out("stand-in: using a throwaway tokenizer (tiny_model/tokenizer.json is missing)")
    ids = tok.encode(LONG_SENTENCE).ids[:STAND_IN_TOKENS]
    text = tok.decode(ids)
    results.append(bench_one("stand-in 12×12×768", lambda: models.load_stand_in(tok), text, ids=ids, runs=runs))
    chapter = chapter_set_size(models.load_stand_in(tok))

    out(f"{models.torch_summary()}; medians of {runs} runs")
    out(f"{'model':<20}{'tokens':>7}{'load s':>8}{'bare ms':>9}{'trace ms':>10}{'ratio':>7}{'cpu ratio':>10}"
        f"{'encode ms':>11}{'bytes':>12}{'gzip':>11}")
    for r in results:
        out(
            f"{r['label']:<20}{r['tokens']:>7}{r['load_s']:>8.2f}{r['bare_ms']:>9.1f}{r['trace_ms']:>10.1f}"
            f"{r['ratio']:>6.2f}×{r['cpu_ratio']:>9.2f}×{r['encode_ms']:>11.1f}{r['bytes']:>12,}{r['gzip_bytes']:>11,}"
            f"  ratio target ≤ {TRACER_RATIO_TARGET}×: {met(r['ratio'] <= TRACER_RATIO_TARGET)}"
        )
    out("ratio = tracer (forward with hooks + recomputation + self-checks + document) / bare forward "
        "with output_attentions, wall-clock medians (cpu ratio: the same in this process's CPU time); "
        f"target ≤ {TRACER_RATIO_TARGET}×. encode = rounding + JSON, once per written trace; gzip at level 9.")
    print_chapter_set(chapter, out)
    out(f"  budget ≤ {GPT2_SET_BUDGET / 1e6:.0f} MB raw (with the causal block): {met(chapter['bytes'] <= GPT2_SET_BUDGET)}")
    print_first_loads(*figure_first_loads(gpt2_stand_in()), out=out)
    causal_budgets(out=out)
    return results


def main_bench(args) -> int:
    if args.threads:
        from ..model import load as models

        models.set_threads(args.threads)
    run_bench(runs=args.runs)
    return 0


def add_parser(sub) -> None:
    p = sub.add_parser("bench", help="print tracer speed and trace sizes (figures, not tests)")
    p.add_argument("--runs", type=int, default=7, help="timed runs per figure (median)")
    p.add_argument("--threads", type=int, default=0, help="torch CPU threads (default: torch's own choice)")
    p.set_defaults(func=main_bench)
