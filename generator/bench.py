"""`python -m generator bench` (make bench): figures, not tests.

For the tiny model and for the random 12 × 12 × 768 stand-in of GPT-2 small it prints:

* model load time;
* the tracer's time per sentence (capture + recomputation + self-checks + building the
  document) as a ratio to a bare ``model(ids, output_attentions=True)`` forward; medians of
  several runs after a warm-up, model load excluded. Target: ≤ 1.5×;
* the store's encode time (rounding + JSON), reported apart;
* bytes per trace, raw and gzipped, for "Lily wanted to play with her" on tiny and a 12-token
  sentence on the stand-in.
"""

from __future__ import annotations

import gzip
import statistics
import time

TINY_SENTENCE = "Lily wanted to play with her"
LONG_SENTENCE = "Lily wanted to play with her ball in the park, but Ben said it was time to go home."
STAND_IN_TOKENS = 12


def _median_time(fn, runs: int) -> float:
    fn()  # warm-up
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def bench_one(label: str, load, text: str, ids=None, runs: int = 7) -> dict:
    import torch

    from . import tracing
    from .store import TraceStore

    t = time.perf_counter()
    lm = load()
    load_s = time.perf_counter() - t
    tid = tracing.token_ids(lm, text, ids)
    x = torch.tensor([tid])  # (1, token)

    def bare():
        with torch.inference_mode():
            lm.model(x, output_attentions=True, use_cache=False)

    bare_s = _median_time(bare, runs)
    trace_s = _median_time(lambda: tracing.trace(lm, text, ids), runs)
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
        "encode_ms": encode_s * 1e3,
        "bytes": len(data),
        "gzip_bytes": len(gz),
        "rev": lm.revision,
    }


def run_bench(runs: int = 7, out=print) -> list[dict]:
    import torch

    from . import models

    results = []
    tok = None
    try:
        tok = models.tiny_tokenizer()
        results.append(bench_one("tiny", models.load_tiny, TINY_SENTENCE, runs=runs))
    except models.ModelUnavailable as e:
        out(f"tiny: skipped ({e})")
    if tok is None:  # no committed tokenizer yet: a throwaway one so the stand-in still runs
        from .training import train_tokenizer

        tok = train_tokenizer([LONG_SENTENCE] * 50, 500)
        out("stand-in: using a throwaway tokenizer (tiny_model/tokenizer.json is missing)")
    ids = tok.encode(LONG_SENTENCE).ids[:STAND_IN_TOKENS]
    text = tok.decode(ids)
    results.append(bench_one("stand-in 12×12×768", lambda: models.load_stand_in(tok), text, ids=ids, runs=runs))

    out(f"torch {torch.__version__}, {torch.get_num_threads()} threads; medians of {runs} runs")
    out(f"{'model':<20}{'tokens':>7}{'load s':>8}{'bare ms':>9}{'trace ms':>10}{'ratio':>7}{'encode ms':>11}{'bytes':>10}{'gzip':>9}")
    for r in results:
        out(
            f"{r['label']:<20}{r['tokens']:>7}{r['load_s']:>8.2f}{r['bare_ms']:>9.1f}{r['trace_ms']:>10.1f}"
            f"{r['ratio']:>6.2f}×{r['encode_ms']:>11.1f}{r['bytes']:>10,}{r['gzip_bytes']:>9,}"
        )
    out("ratio = tracer (forward with hooks + recomputation + self-checks + document) / bare forward "
        "with output_attentions; target ≤ 1.5×. encode = rounding + JSON, done once per written trace.")
    return results


def main_bench(args) -> int:
    run_bench(runs=args.runs)
    return 0


def add_parser(sub) -> None:
    p = sub.add_parser("bench", help="print tracer speed and trace sizes (figures, not tests)")
    p.add_argument("--runs", type=int, default=7, help="timed runs per figure (median)")
    p.set_defaults(func=main_bench)
