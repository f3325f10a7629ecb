"""Browser timings of course.js, from file:// (for `make bench`): figures, not tests.

    python -m generator.bench_browser [--page build/site/.../index.html] [--runs 5] [--switches 20]

Prints:

* first paint: navigation start -> the first Plotly heatmap painted (`course.paintedAt`, the
  `performance.now()` of the `course:painted` event that course.js dispatches after the first
  Plotly draw and the frame after it). "cold" is the first load in a fresh browser (no V8 code
  cache), "warm" the median of reloads. Also when the scripts were ready (`course:init` mark)
  and how long the first `Plotly.newPlot` took, since most of the time is Plotly itself;
* head switch: median over `--switches` head changes on the first attention figure, measured
  in the page: `course.setState()` (table, summary, top-3, `Plotly.react`) until its Promise
  resolves, and until the next frame has been produced.

Without --page it benchmarks the first built page that holds an attention figure under
build/site, or else the synthetic harness page of tests/browser/harness.py.

Needs Debian's Chromium (/usr/bin/chromium) and the playwright package (the test extras).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
    "--disable-sync", "--no-first-run", "--disable-quic",
]

SWITCH_JS = """async ([n]) => {
  const f = course.figures.find(f => f.views && f.nLayer);
  const frame = () => new Promise(r => requestAnimationFrame(() => {
    const c = new MessageChannel(); c.port1.onmessage = () => r(); c.port2.postMessage(0); }));
  const script = [], painted = [];
  await frame();
  for (let i = 0; i < n; i++) {
    const layer = (i + 1) % f.nLayer, head = (i * 3 + 1) % f.nHead;
    const t0 = performance.now();
    await course.setState(f.id, {layer, head});
    const t1 = performance.now();
    await frame();
    script.push(t1 - t0); painted.push(performance.now() - t0);
  }
  const med = a => a.slice().sort((x, y) => x - y)[Math.floor(a.length / 2)];
  return {id: f.id, script: med(script), painted: med(painted), max: Math.max(...script),
          tokens: f.nToken, heads: f.nLayer * f.nHead};
}"""

PAINT_JS = """() => {
  const m = name => { const e = performance.getEntriesByName(name)[0]; return e ? e.startTime : null; };
  return {painted: course.paintedAt, init: m('course:init'),
          newplot: m('course:newplot-end') - m('course:newplot-start')};
}"""


def _harness_page(out: Path, plotly: Path | None) -> Path:
    spec = importlib.util.spec_from_file_location("course_harness", REPO / "tests" / "browser" / "harness.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    mod.build(out)
    if plotly:
        (out / "assets" / "plotly.min.js").write_bytes(Path(plotly).read_bytes())
    return out / "index.html"


def find_page(site: Path) -> Path | None:
    if not site.is_dir():
        return None
    for p in sorted(site.rglob("*.html")):
        try:
            if 'data-kind="attention"' in p.read_text(encoding="utf-8", errors="replace"):
                return p
        except OSError:
            continue
    return None


def run(page: Path, runs: int = 5, switches: int = 20) -> dict:
    from playwright.sync_api import sync_playwright

    url = page.resolve().as_uri()
    external: list[str] = []

    def route(r):
        if r.request.url.startswith(("file:", "data:", "blob:")):
            r.continue_()
        else:
            external.append(r.request.url)
            r.abort()

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            ctx = browser.new_context(viewport={"width": 1100, "height": 900})
            ctx.route("**/*", route)
            ctx.set_default_timeout(120000)
            tab = ctx.new_page()
            cdp = ctx.new_cdp_session(tab)
            cdp.send("Performance.enable")

            def cpu() -> float:  # seconds of CPU used by the page's main thread so far
                return {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}["ThreadTime"]

            loads = []
            for _ in range(runs + 1):
                tab.goto("about:blank")
                c0 = cpu()
                tab.goto(url, wait_until="commit")
                tab.wait_for_function("window.course && window.course.paintedAt !== null", timeout=120000)
                c1 = cpu()
                load = tab.evaluate(PAINT_JS)
                load["cpu"] = 1000 * (c1 - c0 if c1 >= c0 else c1)
                loads.append(load)
            c0 = cpu()
            switch = tab.evaluate(SWITCH_JS, [switches])
            switch["cpu"] = 1000 * (cpu() - c0) / switches
        finally:
            browser.close()
    warm = loads[1:]
    return {
        "page": str(page), "cold": loads[0],
        "warm": {k: statistics.median(x[k] for x in warm) for k in ("painted", "init", "newplot", "cpu")},
        "switch": switch, "external": external, "runs": runs, "switches": switches,
        "loadavg": " ".join(f"{x:.1f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "n/a",
    }


def report(r: dict) -> str:
    c, w, s = r["cold"], r["warm"], r["switch"]
    lines = [
        f"course.js in Chromium from file:// — {r['page']}",
        f"  first heatmap painted: cold {c['painted']:.0f} ms, warm {w['painted']:.0f} ms (median of {r['runs']} reloads)"
        f"  [target < 300 ms]",
        f"    scripts ready (plotly.min.js + course.js evaluated): cold {c['init']:.0f} ms, warm {w['init']:.0f} ms",
        f"    first Plotly.newPlot: cold {c['newplot']:.0f} ms, warm {w['newplot']:.0f} ms",
        f"    main-thread CPU until painted: cold {c['cpu']:.0f} ms, warm {w['cpu']:.0f} ms"
        f" (wall minus CPU is time lost to other processes on a shared machine)",
        f"  head switch on #{s['id']} ({s['tokens']} tokens, {s['heads']} heads), median of {r['switches']}:"
        f" {s['script']:.1f} ms to redraw, {s['painted']:.1f} ms to the next frame (max {s['max']:.1f} ms)"
        f"  [target < 50 ms]",
        f"    main-thread CPU per switch: {s['cpu']:.1f} ms (the loop's total over {r['switches']})",
        f"  load average at the end: {r['loadavg']}",
    ]
    if r["external"]:
        lines.append(f"  WARNING: blocked external requests: {r['external']}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m generator.bench_browser", description=__doc__.split("\n\n")[0])
    ap.add_argument("--page", help="an HTML page with an attention figure (default: build/site, else the harness)")
    ap.add_argument("--site", default=str(REPO / "build" / "site"), help="where to look for a built page")
    ap.add_argument("--harness", action="store_true", help="always use the synthetic harness page")
    ap.add_argument("--plotly", help="with the harness: use this Plotly bundle instead of the plotly package's")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--switches", type=int, default=20)
    args = ap.parse_args(argv)
    if not Path(CHROMIUM).exists():
        print(f"bench_browser: {CHROMIUM} is absent (apt-get install -y chromium); skipped", file=sys.stderr)
        return 0
    with tempfile.TemporaryDirectory(prefix="course-bench-") as tmp:
        page = Path(args.page) if args.page else None
        if page is None and not args.harness and not args.plotly:
            page = find_page(Path(args.site))
        if page is None:
            page = _harness_page(Path(tmp), args.plotly)
        print(report(run(page, args.runs, args.switches)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
