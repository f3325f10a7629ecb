"""Browser timings of course.js, from file:// (for `make bench`): figures, not tests.

    python -m generator.bench.browser [--page build/site/.../index.html] [--runs 25] [--switches 20]

Prints:

* what a page weighs (only with a built site): script code per page, i.e. every `<script src>`
  the HTML loads plus its inline JavaScript, the heavy trace parts (`data-parts`, which course.js
  loads after the first paint) listed apart and not counted [target <= 1.8 MB]; and the size of
  each one-file chapter, as generator/site/downloads.py makes it [target <= 2.5 MB], with the
  playground's one-file copy (the model's weights inline) listed apart, with no size goal;
* first paint: navigation start -> the first Plotly heatmap painted (`course.paintedAt`, the
  `performance.now()` of the `course:painted` event that course.js dispatches after the first
  Plotly draw and the frame after it). "cold" is the first load in a fresh browser (no V8 code
  cache), "warm" the median of reloads. Split where the time goes: until course.js starts
  (the first `course:init` mark: the HTML up to the first heatmap, the CSS, Plotly's script; the
  course's scripts follow that heatmap), course.js until its
  first `Plotly.newPlot`, that newPlot, and the frame after it;
* Plotly's floor, measured side by side in the same run: a blank page that loads the same Plotly
  bundle as the page and draws one 6 x 6 heatmap, timed the same way (navigation start -> the
  frame after `Plotly.newPlot`); cold in a fresh browser of its own, warm as the median of
  reloads interleaved with the page's, and the ratio page / blank [target <= 1.3]; then each
  warm page load against the mean of the floor loads just before and after it (median, quartiles
  and how many pairs meet the target), which shows the spread that the machine's load gives;
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
import json
import os
import re
import statistics
import sys
import tempfile
from pathlib import Path

from . import met
from .chromium import CHROMIUM, launch_args
from .page_weight import SRC_RE, local_path, site_weights, weights_report
REPO = Path(__file__).resolve().parents[2]

SWITCH_JS = """async ([n]) => {
  const f = course.figures.find(f => f.views && f.nLayer);
  const frame = () => new Promise(r => requestAnimationFrame(() => {
    const c = new MessageChannel(); c.port1.onmessage = () => r(); c.port2.postMessage(0); }));
  const script = [], painted = [];
  await frame();
  for (let i = 0; i < n; i++) {
    const layer = (i + 1) % f.nLayer, head = (i * 3 + 1) % f.nHead;
    // the redraw once the head's part is there (its load is what a first switch adds; page_scripts sizes it)
    await Promise.all(f.views.map(v => v.trace.loadHead(layer, head)));
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
          setup: m('course:newplot-start') - m('course:init'),
          newplot: m('course:newplot-end') - m('course:newplot-start'),
          frame: course.paintedAt - m('course:newplot-end')};
}"""


BLANK_HTML = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Plotly floor: one 6 x 6 heatmap</title></head>
<body><div id="plot"></div>
<script src="{bundle}"></script>
<script>
(function () {{
  var n = 6, idx = [], z = [], text = [];
  for (var i = 0; i < n; i++) idx.push(i);
  for (var q = 0; q < n; q++) {{
    var row = [], tr = [];
    for (var k = 0; k < n; k++) {{ var w = k <= q ? 1 / (q + 1) : null; row.push(w); tr.push(w === null ? '' : w.toFixed(2)); }}
    z.push(row); text.push(tr);
  }}
  var ticks = ['Lily', ' wanted', ' to', ' play', ' with', ' her'];
  window.floorPaintedAt = null;
  Plotly.newPlot('plot', [{{type: 'heatmap', x: idx, y: idx, z: z, text: text, texttemplate: '%{{text}}',
    zmin: 0, zmax: 1, colorscale: 'Cividis', xgap: 1, ygap: 1}}],
    {{height: 420, margin: {{l: 90, r: 20, t: 110, b: 10}},
     xaxis: {{tickmode: 'array', tickvals: idx, ticktext: ticks, side: 'top'}},
     yaxis: {{tickmode: 'array', tickvals: idx, ticktext: ticks, autorange: 'reversed'}}}},
    {{displayModeBar: false, responsive: true}}).then(function () {{
      requestAnimationFrame(function () {{
        var ch = new MessageChannel();
        ch.port1.onmessage = function () {{ window.floorPaintedAt = performance.now(); }};
        ch.port2.postMessage(0);
      }});
    }});
}})();
</script>
</body></html>
"""

NETWORK_URLS = ("http://**/*", "https://**/*")  # what a page from file:// must not fetch
RATIO_TARGET, PAINT_TARGET_MS, SWITCH_TARGET_MS = 1.3, 300, 50

# Every plot drawn (course.js draws a figure as it nears the screen), skipped blocks rendered for
# their real height (course.css content-visibility), back at the top.
DRAW_ALL_JS = """async () => {
  const s = document.createElement('style');
  s.textContent = '.md-typeset > * { content-visibility: visible !important; }';
  document.head.appendChild(s);
  for (const p of document.querySelectorAll('.course-plot')) {
    if (!p.getClientRects().length) continue;
    p.scrollIntoView({block: 'center'});
    for (let i = 0; i < 100 && !p.querySelector('.main-svg'); i++) await new Promise(r => setTimeout(r, 50));
  }
  window.scrollTo(0, 0);
  await new Promise(r => setTimeout(r, 300));
  return {height: document.documentElement.scrollHeight, width: document.documentElement.scrollWidth};
}"""
HEIGHT_TARGET = 8000  # attention.html at 1280 px, every tab on its first panel, tables and "All heads" closed
SHOT_WIDTHS, SHOT_SCHEMES = (1280, 375), ("light", "dark")


def reader_pages(site: Path) -> list[str]:
    from ..site import downloads

    return ["index.html"] + [p for p in downloads.chapter_pages(site) if p != "index.html"]


def reader_views(site: Path, shots: Path | None) -> dict:
    """Each reader page at 1280 and 375 px, light and dark: its height and width as a reader
    first sees it (plots drawn), and a full-page screenshot into `shots` when given."""
    from playwright.sync_api import sync_playwright

    out: dict = {}
    if shots is not None:
        shots.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=launch_args())
        try:
            for width in SHOT_WIDTHS:
                for scheme in SHOT_SCHEMES:
                    ctx = browser.new_context(viewport={"width": width, "height": 900}, color_scheme=scheme)
                    ctx.route("**/*", lambda r: r.continue_() if r.request.url.startswith(("file:", "data:", "blob:")) else r.abort())
                    ctx.set_default_timeout(120000)
                    tab = ctx.new_page()
                    for rel in reader_pages(site):
                        tab.goto((site / rel).as_uri())
                        tab.wait_for_load_state("load")
                        size = tab.evaluate(DRAW_ALL_JS)
                        out[(rel, width, scheme)] = size
                        if shots is not None:
                            name = f"{Path(rel).stem}-{width}-{scheme}.png"
                            tab.screenshot(path=str(shots / name), full_page=True)
                    ctx.close()
        finally:
            browser.close()
    return out


def views_report(views: dict, shots: Path | None) -> str:
    lines = ["pages as a reader first sees them (plots drawn, tabs on their first panel, tables and \"All heads\" closed)"]
    for (rel, width, scheme), v in views.items():
        if scheme != "light":
            continue
        target = f"  [target <= {HEIGHT_TARGET} px: {met(v['height'] <= HEIGHT_TARGET)}]" if (
            rel == "attention.html" and width == 1280) else ""
        wide = f", WIDER than the screen: {v['width']} px" if v["width"] > width else ""
        lines.append(f"  {rel} at {width} px: {v['height']:,} px tall{wide}{target}")
    if shots is not None:
        lines.append(f"  screenshots ({len(views)}: {', '.join(map(str, SHOT_WIDTHS))} px, light and dark): {shots}")
    return "\n".join(lines)


def plotly_bundle_of(page: Path) -> Path | None:
    """The Plotly bundle a page loads (the first <script src> named plotly*.js)."""
    for m in SRC_RE.finditer(page.read_text(encoding="utf-8")):
        path = local_path(page, m.group(1))
        if path is not None and re.match(r"plotly[^/]*\.js$", path.name) and path.is_file():
            return path
    return None


def blank_page(out: Path, bundle: Path) -> Path:
    p = out / "plotly-floor.html"
    p.write_text(BLANK_HTML.format(bundle=bundle.resolve().as_uri()), encoding="utf-8")
    return p


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


def paired_ratios(page: list[float], floor: list[float]) -> dict | None:
    """Each warm page load (page[i]) against the mean of the floor loads just before (floor[i]) and
    just after it (floor[i + 1]): the load on a shared machine drifts over a run, and a pair sees
    nearly the same load. Median, quartiles and how many pairs meet the target; None under 4 pairs."""
    pairs = [p / statistics.fmean(floor[i:i + 2]) for i, p in enumerate(page) if floor[i:i + 2]]
    if len(pairs) < 4:
        return None
    q1, _, q3 = statistics.quantiles(pairs, n=4)
    return {"n": len(pairs), "median": statistics.median(pairs), "q1": q1, "q3": q3,
            "met": sum(p <= RATIO_TARGET for p in pairs)}


def run(page: Path, runs: int = 5, switches: int = 20, blank: Path | None = None) -> dict:
    """Cold and warm first paint of `page` (and of `blank`, Plotly's floor, when given: cold in a
    browser of its own, warm reloads interleaved with the page's), then head switches."""
    from playwright.sync_api import sync_playwright

    url = page.resolve().as_uri()
    blank_url = blank.resolve().as_uri() if blank else None
    external: list[str] = []

    def route(r):  # only network URLs come here: routing every file: request through Python too
        external.append(r.request.url)  # added a round trip per file, a dozen for the page, one for the floor
        r.abort()

    def block_network(ctx) -> None:
        for pattern in NETWORK_URLS:
            ctx.route(pattern, route)

    floor: list[float] = []
    floor_cpu: list[float] = []  # main-thread CPU of the warm floor loads (load on the machine does not add to it)

    def floor_load(tab) -> float:
        tab.goto("about:blank")
        tab.goto(blank_url, wait_until="commit")
        tab.wait_for_function("window.floorPaintedAt !== undefined && window.floorPaintedAt !== null", timeout=120000)
        return tab.evaluate("window.floorPaintedAt")

    with sync_playwright() as pw:
        if blank_url:  # the floor's cold load, in a fresh browser of its own
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=launch_args())
            try:
                ctx = browser.new_context(viewport={"width": 1100, "height": 900})
                block_network(ctx)
                ctx.set_default_timeout(120000)
                floor.append(floor_load(ctx.new_page()))
            finally:
                browser.close()
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=launch_args())
        try:
            ctx = browser.new_context(viewport={"width": 1100, "height": 900})
            block_network(ctx)
            ctx.set_default_timeout(120000)
            tab = ctx.new_page()
            cdp = ctx.new_cdp_session(tab)
            cdp.send("Performance.enable")

            def cpu() -> float:  # seconds of CPU used by the page's main thread so far
                return {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}["ThreadTime"]

            loads = []
            for i in range(runs + 1):
                if blank_url and i > 0:  # warm: floor, page, floor, page, ... (the tab ends on the page)
                    c0 = cpu()
                    floor.append(floor_load(tab))
                    c1 = cpu()
                    floor_cpu.append(1000 * (c1 - c0 if c1 >= c0 else c1))  # a new renderer process counts from 0
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
    w = {k: statistics.median(x[k] for x in warm) for k in ("painted", "init", "setup", "newplot", "frame", "cpu")}
    fl = None
    if floor:
        fl = {"bundle": None, "cold": floor[0], "warm": statistics.median(floor[1:]) if len(floor) > 1 else None}
        fl["coldRatio"] = loads[0]["painted"] / fl["cold"]
        fl["warmRatio"] = w["painted"] / fl["warm"] if fl["warm"] else None
        fl["cpu"] = statistics.median(floor_cpu) if floor_cpu else None
        fl["cpuRatio"] = w["cpu"] / fl["cpu"] if fl["cpu"] else None
        fl["pairs"] = paired_ratios([x["painted"] for x in warm], floor[1:])
    return {
        "page": str(page), "cold": loads[0], "warm": w, "floor": fl,
        "switch": switch, "external": external, "runs": runs, "switches": switches,
        "loadavg": " ".join(f"{x:.1f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "n/a",
    }


def report(r: dict) -> str:
    c, w, s = r["cold"], r["warm"], r["switch"]
    lines = [
        f"course.js in Chromium from file:// — {r['page']}",
        f"  first heatmap painted: cold {c['painted']:.0f} ms, warm {w['painted']:.0f} ms (median of {r['runs']} reloads)"
        f"  [target < {PAINT_TARGET_MS} ms: cold {met(c['painted'] < PAINT_TARGET_MS)}, warm {met(w['painted'] < PAINT_TARGET_MS)}]",
        f"    where the time goes (cold / warm): until course.js starts (the HTML up to the first heatmap, CSS, Plotly's script)"
        f" {c['init']:.0f} / {w['init']:.0f} ms; course.js until its first Plotly.newPlot (figures, tables, layout)"
        f" {c['setup']:.0f} / {w['setup']:.0f} ms; the first Plotly.newPlot {c['newplot']:.0f} / {w['newplot']:.0f} ms;"
        f" then the frame {c['frame']:.0f} / {w['frame']:.0f} ms",
        f"    main-thread CPU until painted: cold {c['cpu']:.0f} ms, warm {w['cpu']:.0f} ms"
        f" (wall minus CPU is time lost to other processes on a shared machine)",
    ]
    fl = r.get("floor")
    if fl:
        ok = fl["warmRatio"] is not None and fl["warmRatio"] <= RATIO_TARGET
        lines += [
            f"  Plotly's floor (a blank page: {fl.get('bundle') or 'the same bundle'} + one 6x6 heatmap), side by side:"
            f" cold {fl['cold']:.0f} ms, warm {fl['warm']:.0f} ms",
            f"    ratio first heatmap / floor: warm {fl['warmRatio']:.2f}, cold {fl['coldRatio']:.2f}"
            f"  [target <= {RATIO_TARGET}: {met(ok)} (warm)]",
        ]
        if fl.get("pairs"):
            pr = fl["pairs"]
            lines.append(
                f"    each warm load against the floor loads either side of it: median {pr['median']:.2f},"
                f" quartiles {pr['q1']:.2f}-{pr['q3']:.2f}, {pr['met']} of {pr['n']} at or under {RATIO_TARGET}")
        lines += [
            f"    main-thread CPU until painted, warm medians: page {w['cpu']:.0f} ms, floor {fl['cpu']:.0f} ms,"
            f" ratio {fl['cpuRatio']:.2f} (what other processes' load cannot inflate)",
        ]
    lines += [
        f"  head switch on #{s['id']} ({s['tokens']} tokens, {s['heads']} heads), median of {r['switches']}:"
        f" {s['script']:.1f} ms to redraw, {s['painted']:.1f} ms to the next frame (max {s['max']:.1f} ms)"
        f"  [target < {SWITCH_TARGET_MS} ms: {met(s['painted'] < SWITCH_TARGET_MS)}]",
        f"    main-thread CPU per switch: {s['cpu']:.1f} ms (the loop's total over {r['switches']})",
        f"  load average at the end: {r['loadavg']}",
    ]
    if r["external"]:
        lines.append(f"  WARNING: blocked external requests: {r['external']}")
    return "\n".join(lines)


def positive_int(text: str) -> int:
    """A count of at least 1 (argparse turns the ValueError into its one-line usage error)."""
    n = int(text)
    if n < 1:
        raise ValueError(text)
    return n


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m generator.bench.browser", description=__doc__.split("\n\n")[0])
    ap.add_argument("--page", help="an HTML page with an attention figure (default: build/site, else the harness)")
    ap.add_argument("--site", default=str(REPO / "build" / "site"), help="where to look for a built page")
    ap.add_argument("--harness", action="store_true", help="always use the synthetic harness page")
    ap.add_argument("--plotly", help="with the harness: use this Plotly bundle instead of the plotly package's")
    ap.add_argument("--no-floor", action="store_true", help="skip the blank-page Plotly floor")
    ap.add_argument("--no-weights", action="store_true", help="skip script bytes and one-file chapter sizes")
    ap.add_argument("--json", help="also write every figure to this JSON file")
    ap.add_argument("--shots", default=str(REPO / "build" / "shots"), help="screenshots of every reader page go here")
    ap.add_argument("--no-views", action="store_true", help="skip page heights and screenshots")
    ap.add_argument("--runs", type=positive_int, default=25, help="warm reloads, each page load interleaved with a floor load")
    ap.add_argument("--switches", type=positive_int, default=20)
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
        out: dict = {}
        site = Path(args.site).resolve()  # file:// addresses need an absolute path
        if not args.no_weights and (site / "index.html").is_file():
            out["weights"] = site_weights(site)
            print(weights_report(out["weights"]), flush=True)
        if not args.no_views and (site / "index.html").is_file():
            views = reader_views(site, Path(args.shots) if args.shots else None)
            out["views"] = {f"{rel} {w} {sch}": v for (rel, w, sch), v in views.items()}
            print(views_report(views, Path(args.shots) if args.shots else None), flush=True)
        bundle = None if args.no_floor else plotly_bundle_of(page)
        blank = blank_page(Path(tmp), bundle) if bundle else None
        r = run(page, args.runs, args.switches, blank=blank)
        if r.get("floor"):
            r["floor"]["bundle"] = f"{bundle.name}, {bundle.stat().st_size / 1e6:.2f} MB"
        out["timings"] = r
        print(report(r))
        if args.json:
            Path(args.json).write_text(json.dumps(out, indent=1, default=str) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
