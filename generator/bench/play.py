"""The playground's figures, from file:// in Chromium (for `make bench`): figures, not tests.

    python -m generator.bench.play [--page build/site/play.html] [--runs 5]

Prints what play.html loads (its scripts, and the weights it loads after the first paint), how
long the weights take to decode once loaded, and for a 32-token and a 256-token sentence the
forward pass alone (`Model.run`, with and without the top-5 guesses) and the time from the
reader's input event to the drawn figure (the 150 ms typing delay included, and without it), as
medians of `--runs`. Targets (issue 28): decode <= 300 ms; 32 tokens <= 50 ms and 256 tokens
<= 500 ms from typing to figure. On a shared machine read them as a note, not a verdict.
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]
TYPING_DELAY_MS = 150  # generator/assets/play/page.js, TYPING_DELAY
STATE = "document.getElementById('course-play').getAttribute('data-state')"

RUN_JS = """([n, runs]) => {
  const api = document.getElementById('course-play').coursePlay, ids = [api.tokenizer.eotId];
  for (let i = 1; i < n; i++) ids.push(300 + (i * 7919) % 3000);
  const time = (f) => { const t0 = performance.now(); f(); return performance.now() - t0; };
  const bare = [], full = [];
  for (let r = 0; r < runs; r++) {
    bare.push(time(() => api.model.run(ids, {predictions: false})));
    full.push(time(() => api.model.run(ids)));
  }
  return {bare, full};
}"""

TYPE_JS = """([text]) => new Promise((resolve) => {
  const root = document.getElementById('course-play'), box = document.getElementById('play-text');
  const t0 = performance.now();
  root.addEventListener('play:drawn', () => {
    requestAnimationFrame(() => setTimeout(() => resolve(performance.now() - t0), 0));
  }, {once: true});
  box.value = text;
  box.dispatchEvent(new Event('input', {bubbles: true}));
})"""


def loaded_bytes(page: Path) -> dict[str, int]:
    """Every script play.html names, and play-model.js (its data-model, loaded after the first paint)."""
    html = page.read_text(encoding="utf-8")
    out = {}
    for src in re.findall(r'<script[^>]*\ssrc="([^"]+)"', html) + re.findall(r'data-model="([^"]+)"', html):
        path = (page.parent / src.split("?")[0]).resolve()
        if path.is_file():
            out[src] = path.stat().st_size
    return out


def sentence_of(tokens: int) -> str:
    return "Lily" + " and Ben" * ((tokens - 2) // 2) + (" went" if tokens % 2 else "")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m generator.bench.play", description=__doc__.split("\n\n")[0])
    ap.add_argument("--page", default=str(REPO / "build" / "site" / "play.html"))
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args(argv)
    page = Path(args.page)
    if not Path(CHROMIUM).exists() or not page.is_file():
        print(f"bench_play: {CHROMIUM} or {page} is absent; skipped", file=sys.stderr)
        return 0
    sizes = loaded_bytes(page)
    print("playground (play.html from file://): what it loads")
    for src, n in sizes.items():
        print(f"  {src:45} {n:>12,} bytes")
    print(f"  {'total':45} {sum(sizes.values()):>12,} bytes (play-model.js after the first paint)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        tab = browser.new_page(viewport={"width": 1280, "height": 900})
        tab.goto(page.resolve().as_uri())
        tab.wait_for_function(f"{STATE} === 'ok'", timeout=120000)
        decode = tab.evaluate("document.getElementById('course-play').coursePlay.decodeMs")
        print(f"  weights decoded in {decode:.0f} ms once loaded [target <= 300]")
        for n, target in ((32, 50), (256, 500)):
            r = tab.evaluate(RUN_JS, [n, args.runs])
            typed = []
            for i in range(args.runs):
                typed.append(tab.evaluate(TYPE_JS, [sentence_of(n) + ("." if i % 2 else "")]))
            got = tab.evaluate("document.querySelectorAll('#fig-1-token option').length")
            med = statistics.median
            print(f"  {got} tokens: forward pass {med(r['bare']):.0f} ms, with the top-5 guesses {med(r['full']):.0f} ms; "
                  f"input to drawn figure {med(typed):.0f} ms ({med(typed) - TYPING_DELAY_MS:.0f} ms after the typing delay) "
                  f"[target <= {target}]")
        browser.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
