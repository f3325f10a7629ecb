"""The playground (play.html) in Chromium, on the session's shared course build, with every
request off the machine refused: the page's own numbers against every committed tiny trace
(q, k, v, scores, weights and head outputs to 1e-4, plus half the trace file's own int16 step;
the top 5 guesses; each head's zero- and mean-ablation effects on the traced tokens), its tokens,
typing and editing, the pickers and "All heads", deep links, each bad input, no text ever
becoming HTML, the attention and ablation figures' markup against frozen ones, and axe.

From file:// one page load does most of it; the one-file download opens alone from a folder of
its own; a last context opens a deep link at 375 px in dark mode. Served over http (the hosted
site), at 1280 and 375 px, light and dark, with the ablation grid, the table view and "All
heads" open: axe 0 on each."""

from __future__ import annotations

import base64
import json
import re
import shutil

import numpy as np
import pytest

from course_builds import REPO, quiet

from .conftest import page_opener
from .test_a11y import axe

pytestmark = [pytest.mark.browser]

FIELDS = ("q", "k", "v", "scores", "out")
API = "document.getElementById('course-play').coursePlay"
ABLATED = "document.querySelector('.course-play-ablation #fig-2') !== null"
XSS = "</script><img src=x onerror=window.__pwned=1> & <b>bold</b>"
STATE = "document.getElementById('course-play').getAttribute('data-state')"
RUNS = "document.getElementById('course-play').coursePlay.runs"
# the shown sentence's numbers (from the worker, when there is one) against the page's own model
SAME_AS_PAGE_MODEL = """() => { const api = document.getElementById('course-play').coursePlay, shown = api.trace, now = api.shown();
  const same = (a, b) => a.length === b.length && a.every((x, i) => Object.is(x, b[i]));
  const mine = api.model.run(now.ids, {predictions: false}), flat = (t) => t.layers.flatMap(l => l.heads.flatMap(h => Object.values(h).flat(2)));
  return same(flat(shown), flat(api.runIds(now.ids))) && same(now.final, Array.from(mine.final)); }"""
# the shown ablation grid's numbers (from the worker, when there is one) against the page's own model's
SAME_GRID_AS_PAGE_MODEL = """() => { const api = document.getElementById('course-play').coursePlay, now = api.shown(), g = now.ablation;
  const mine = api.ablationFor(now.ids, g.pos, g.follow), flat = (r) => ['dLogit', 'dLogprob', 'kl'].flatMap(k => r[k].flat(3));
  return g.pos === now.ablationAt.token && flat(g).length === 16 * 2 * (2 * g.follow.length + 1)
    && flat(g).every((x, i) => Object.is(x, flat(mine)[i])); }"""


def committed_traces():
    from generator.store.traces import TraceStore

    store = TraceStore(REPO / "traces")
    return [store.load("tiny", e["text"], e.get("ids")) for e in store.entries("tiny")]


def enc(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode("utf-8")).decode("ascii").rstrip("=")


def typed(page, text: str, timeout: float = 60000) -> None:
    """Set the text as a paste would (one input event) and wait until the page has answered it."""
    before = page.evaluate(RUNS)
    page.evaluate("""([text]) => { const t = document.getElementById('play-text');
        document.getElementById('course-play').removeAttribute('data-state');
        t.value = text; t.dispatchEvent(new Event('input', {bubbles: true})); }""", [text])
    page.wait_for_function(f"{STATE} !== null", timeout=timeout)
    assert page.evaluate(RUNS) >= before


def status(page) -> str:
    return page.inner_text(".course-play-status")


def figure_signature(page, selector: str) -> list[str]:
    """The figure's markup as course.js left it, less what differs by nature (its number, the
    plot, the small multiples, the provenance line, the data): tag, classes, the attributes the
    scripts and readers use, and each leaf's text with its 2-decimal numbers as #.## (a weight
    the trace stores as 0.0250 and the page computes as 0.02500001 rounds to 0.02 and 0.03; the
    numbers are compared above, to 1e-4)."""
    return page.evaluate(r"""([sel]) => {
      const fig = document.querySelector(sel), out = [];
      fig.querySelectorAll('*').forEach(e => {
        if (e.closest('.course-plot, .course-heads, figcaption, script')) return;
        const attrs = ['data-q', 'data-k', 'data-control', 'scope', 'aria-label', 'for', 'aria-controls', 'aria-expanded', 'value']
          .map(a => (e.getAttribute(a) || '').replace(/fig-\\d+/, 'fig'));
        const text = e.children.length ? '' : e.textContent.replace(/\d\.\d\d/g, '#.##');
        out.push(e.tagName + '.' + e.className + '[' + attrs.join('|') + ']' + text);
      });
      return out;
    }""", [selector])


@pytest.fixture(scope="module")
def play_url(course) -> str:
    return (course / "build" / "site" / "play.html").as_uri()


def ablation_signature(page, selector: str) -> list[str]:
    """The ablation figure's markup, less its number and its provenance line: tag, classes, the
    attributes readers and styles use (cell colours among them), each leaf's text."""
    return page.locator(selector).evaluate(r"""(fig) => {
      const out = [];
      fig.querySelectorAll('*').forEach(e => {
        if (e.closest('figcaption')) return;
        const attrs = ['style', 'scope', 'aria-label', 'href'].map(a => e.getAttribute(a) || '');
        out.push(e.tagName + '.' + e.className + '[' + attrs.join('|') + ']' + (e.children.length ? '' : e.textContent));
      });
      return out;
    }""")


def test_the_playground(browser, course, play_url, tmp_path):
    with page_opener(browser, set(), width=1280) as open_:
        w = open_()
        page = w.page
        page.goto(play_url)
        page.wait_for_function(f"{STATE} === 'ok'", timeout=60000)
        page.locator("#fig-1 .course-plot .main-svg").first.wait_for(state="attached")
        assert "read 7 tokens" in status(page)
        page.wait_for_function("document.querySelectorAll('.course-play-guesses tbody tr').length === 7")
        assert page.inner_text(".course-play-guesses tbody tr:last-child th") == "·her"
        assert page.inner_text(".course-play-tokens").startswith("7 tokens: ‹eot› Lily ·wanted")
        # the shown sentence ran in a worker (runner.js), past Material's file:// Worker shim, and
        # its numbers are the page's own model's, bit for bit
        assert page.evaluate(f"{API}.worker") is True
        assert page.evaluate(SAME_AS_PAGE_MODEL) is True

        # -- exactness: every committed tiny trace, computed by the page from its token ids
        for trace in committed_traces():
            ids = [t["id"] for t in trace["tokens"]]
            got = page.evaluate("([ids]) => document.getElementById('course-play').coursePlay.runIds(ids)", [ids])
            name = trace["text"]
            if not trace.get("ids"):
                assert [t["text"] for t in got["tokens"]] == [t["text"] for t in trace["tokens"]], name
                page_ids = page.evaluate("([s]) => document.getElementById('course-play').coursePlay.tokenizer.encode(s)", [name])
                assert [ids[0]] + page_ids == ids, name
            for l, layer in enumerate(trace["layers"]):
                for h, head in enumerate(layer["heads"]):
                    mine = got["layers"][l]["heads"][h]
                    w_err = np.abs(np.array(mine["weights"]) - np.array(head["weights"])).max()
                    assert w_err <= 1e-4, f"{name}: L{l + 1}H{h + 1} weights off by {w_err:.1e}"
                    stored = trace.stored_layers[l]
                    group = stored["kvHeads"][h * len(stored["kvHeads"]) // len(stored["heads"])]  # k, v: per key/value head
                    for f in FIELDS:  # the file stores int16 x scale: its own step is scale / 2
                        step = (group if f in ("k", "v") else stored["heads"][h])[f]["scale"] / 2
                        err = np.abs(np.array(mine[f]) - np.array(head[f])).max()
                        assert err <= 1e-4 + step, f"{name}: L{l + 1}H{h + 1} {f} off by {err:.1e} (trace step {step:.1e})"
            for t, (mine, want) in enumerate(zip(got["predictions"], trace["predictions"])):
                assert [g["id"] for g in mine] == [g["id"] for g in want], f"{name}: top 5 after token {t}"
                assert np.allclose([g["prob"] for g in mine], [g["prob"] for g in want], rtol=1e-4, atol=1e-5), name

        # -- ablation: each head zeroed, or set to its mean output over the reference texts (the
        # model asset's headMeans), at every position; the change in the logit and log-probability
        # of every token the trace follows, and the KL divergence, at its last position and one in
        # the middle: to 1e-4 plus half the file's int16 step (the trace's float32 runs against the
        # page's float64 sums of the same float32 weights differ by about 1e-4 on the random tokens)
        record = page.evaluate(f"{API}.model.meanReference")
        for trace in committed_traces():
            c, ids, name = trace["causal"], [t["id"] for t in trace["tokens"]], trace["text"]
            assert record == c["meanReference"], name  # the means are over the traces' own reference texts
            stored = json.loads(trace.raw)["causal"]
            assert c["ablations"] == ["zero", "mean"]
            for pos in sorted({len(ids) - 1, len(ids) // 2}):
                follow = [int(i) for i in c["followed"][pos]]
                got = page.evaluate(f"([ids, pos, follow]) => {API}.ablationFor(ids, pos, follow)", [ids, pos, follow])
                assert got["modes"] == c["ablations"]
                for f in ("dLogit", "dLogprob", "kl"):
                    want = c[f][:, :, :, pos]  # (mode, layer, head[, followed])
                    err = np.abs(np.array(got[f]) - want).max()
                    assert err <= 1e-4 + stored[f]["scale"] / 2, f"{name}: {f} at token {pos} off by {err:.1e}"
                for f, key in (("cleanLogit", "cleanLogit"), ("cleanLogprob", "cleanLogprob")):
                    err = np.abs(np.array(got[f]) - c[key][pos]).max()
                    assert err <= 1e-4 + stored[key]["scale"] / 2, f"{name}: {f} at token {pos} off by {err:.1e}"

        # -- head-type scores on one sentence, as generator/heads.py scores it
        from generator import heads

        traces = committed_traces()
        for trace in (next(t for t in traces if t["text"].startswith("Tom had")), next(t for t in traces if t.get("ids"))):
            ids = [t["id"] for t in trace["tokens"]]
            got = page.evaluate("([ids]) => document.getElementById('course-play').coursePlay.scoresFor(ids)", [ids])
            weights = np.array([[h["weights"] for h in layer["heads"]] for layer in trace["layers"]])  # (layer, head, q, k)
            for kind in heads.KINDS:
                try:
                    want = heads.score(kind, [(weights, ids)])
                except ValueError:  # no row has the pattern
                    assert got["scores"][kind] is None, kind
                    continue
                assert np.abs(np.array(got["scores"][kind]) - want).max() <= 1e-4, (trace["text"], kind)
                assert abs(got["chance"][kind] - heads.chance(kind, [ids])) <= 1e-12, kind
        assert page.locator(".course-play-scoretable tbody tr").count() == 17

        # -- the figure is course.js's own: its markup as the frozen chapter 3 figure has it
        typed(page, "Lily wanted to play with her")
        other = w.context.new_page()
        other.goto((course / "build" / "site" / "attention.html").as_uri())
        other.wait_for_function("window.course && window.course.paintedAt !== null")
        frozen = other.evaluate("document.querySelector('#fig-1').dataset")
        link = other.get_attribute("#fig-1 a.course-play-link", "href")  # "Try it with your own sentence"
        assert link == "play.html#s=" + enc("Lily wanted to play with her") + "&layer={}&head={}&token={}".format(
            int(frozen["layer"]) + 1, int(frozen["head"]) + 1, int(frozen["token"]))  # the token from 0, as its menu
        page.evaluate("([s]) => window.course.setState('fig-1', s)",
                      [{k: int(frozen[k]) for k in ("layer", "head", "token")}])
        quiet(page)
        assert figure_signature(page, "#fig-1") == figure_signature(other, "#fig-1")
        other.close()

        # -- the ablation figure is ablation.html's own: the page's, for the causal chapter's
        # sentence, position and targets, is the frozen one cell by cell (numbers and colours)
        typed(page, "Lily wanted to play with")
        page.wait_for_function(ABLATED)
        other = w.context.new_page()
        other.goto((course / "build" / "site" / "causal.html").as_uri())
        other.wait_for_function("window.course && window.course.paintedAt !== null")
        frozen = other.evaluate("[...document.querySelectorAll('figure[data-kind=ablation]')].findIndex(f => f.querySelector('.course-summary').textContent.includes('logit(·her) − logit(·his)'))")
        assert frozen >= 0
        her, his = (page.evaluate(f"{API}.tokenizer.encode(' ' + {json.dumps(w_)})")[0] for w_ in ("her", "his"))
        page.evaluate("""([t]) => new Promise((resolve) => {
          document.getElementById('course-play').addEventListener('play:ablation', resolve, {once: true});
          document.getElementById('course-play').coursePlay.showAblation({token: 5, targets: t}); })""", [[her, his]])
        mine = ablation_signature(page, ".course-play-ablation figure")
        theirs = ablation_signature(other, f"figure[data-kind=ablation] >> nth={frozen}")
        assert len(mine) > 40 and mine == theirs
        assert page.input_value("#play-ab-target") == str(her) and page.input_value("#play-ab-against") == str(his)
        # the colours are causal_data.signed_style's at every strength, both signs
        from generator.render.causal_data import signed_style

        xs = [float(x) for x in np.linspace(-1.25, 1.25, 201)] + [0.0, -0.0, 0.5, -0.5, 0.49999, 1e-12]
        assert page.evaluate(f"([xs]) => xs.map(x => {API}.signedStyle(x, 1))", [xs]) == [signed_style(x, 1.0) for x in xs]
        # a cell opens its head in the attention figure above
        page.click(".course-play-ablation figure table tbody tr:nth-child(2) td:nth-child(4) a")
        page.wait_for_function("document.getElementById('fig-1-layer').value === '1' && document.getElementById('fig-1-head').value === '2'")
        # the pickers: another target, then no second token (a log-probability)
        page.focus("#play-ab-against")
        page.select_option("#play-ab-against", "-1")
        page.wait_for_function("(document.querySelector('.course-play-ablation .course-summary') || {}).textContent?.startsWith('At ·with, log P(·her) is')")
        assert page.evaluate("document.activeElement.id") == "play-ab-against"
        other.close()

        # -- typing, the pickers, "All heads", the hash
        page.fill("#play-text", "Ben and Lily went to the park. Ben saw a dog and")
        page.wait_for_function(f"{STATE} === 'ok' && {RUNS} >= 1 && document.querySelectorAll('#fig-1-token option').length === 14")
        assert "·and₁₃ looks most at" in page.inner_text("#fig-1 .course-summary")
        page.select_option("#fig-1-layer", "2")
        page.wait_for_function("location.hash.includes('layer=3')")
        s = re.search(r"#s=([^&]+)", page.url).group(1)
        assert base64.urlsafe_b64decode(s + "=" * (-len(s) % 4)).decode() == "Ben and Lily went to the park. Ben saw a dog and"
        page.click("#fig-1 button[data-action=heads]")
        page.wait_for_function("document.querySelectorAll('#fig-1-heads button').length === 16")
        page.click("#fig-1 button.course-table-toggle")
        page.click("#fig-1 table.course-table tbody tr:nth-child(2) th button")
        page.wait_for_function("document.getElementById('fig-1-token').value === '1'")

        # -- a burst of edits in one task runs once, on its last text (the first would have run at once)
        before = page.evaluate(RUNS)
        page.evaluate("""() => { const t = document.getElementById('play-text');
            ['Ben', 'Ben saw', 'Ben saw a', 'Ben saw a dog'].forEach(s => {
              t.value = s; t.dispatchEvent(new Event('input', {bubbles: true})); }); }""")
        page.wait_for_function(f"{RUNS} > {before} && document.querySelectorAll('.course-play-guesses tbody tr').length === 5")
        assert page.evaluate(RUNS) == before + 1
        assert page.inner_text(".course-play-tokens").startswith("5 tokens:")
        # "All heads" and the table, opened on the last sentence's figure, open again on this one's
        page.wait_for_function(OPEN_VIEWS, arg=[True, True, "grid"])
        page.click("#fig-1 button[data-action=heads]")
        page.click("#fig-1 button.course-table-toggle")

        # -- stale results are dropped: an edit made as a sentence's figures are drawn drops its
        # guesses; only the newer sentence's are drawn
        got = page.evaluate("""() => new Promise((resolve) => {
          const root = document.getElementById('course-play'), t = document.getElementById('play-text');
          const api = root.coursePlay, dropped = api.dropped, guessed = [];
          let first = null;
          root.addEventListener('play:guesses', (e) => {
            guessed.push(e.detail.runs);
            if (e.detail.runs > first) resolve({first, guessed, dropped: api.dropped - dropped,
              rows: document.querySelectorAll('.course-play-guesses tbody tr').length});
          });
          root.addEventListener('play:drawn', (e) => {
            first = e.detail.runs;
            t.value = 'Lily and Ben went home'; t.dispatchEvent(new Event('input', {bubbles: true}));
          }, {once: true});
          t.value = 'Tom had a red ball'; t.dispatchEvent(new Event('input', {bubbles: true}));
        })""")
        assert got["first"] not in got["guessed"] and got["dropped"] >= 1, got
        assert got["rows"] == 6, got  # <|endoftext|> Lily and Ben went home

        # -- a long sentence's table (hidden at first) is written after its figures, by course.js's code
        long = " ".join(["Lily saw Ben and the dog."] * 14)
        typed(page, long)
        n = page.evaluate("document.querySelectorAll('#fig-1-token option').length")
        assert n > 64
        # written and filled in parts, 32 rows a task, the table busy (aria-busy) until then
        page.wait_for_function(f"document.querySelectorAll('#fig-1 table.course-table tbody tr').length === {n}"
                               " && !document.querySelector('#fig-1 table.course-table').hasAttribute('aria-busy')")
        cells = page.evaluate("""() => {
          const api = document.getElementById('course-play').coursePlay;
          const l = +document.getElementById('fig-1-layer').value, h = +document.getElementById('fig-1-head').value;
          const w = api.trace.layers[l].heads[h].weights; // the shown head's, from the model's own numbers
          return [...document.querySelectorAll('#fig-1 table.course-table tbody td')].filter((td, i) => i % 97 === 0)
            .map(td => [td.textContent, +td.dataset.q, +td.dataset.k, window.course.fmt(w[+td.dataset.q][+td.dataset.k], 2)]);
        }""")
        assert len(cells) > 20 and any(q >= k for _, q, k, _ in cells)
        for text, q, k, want in cells:
            assert text == ("hidden" if k > q else want), (text, q, k, want)
        page.click("#fig-1 button.course-table-toggle")
        page.click("#fig-1 table.course-table tbody tr:nth-child(3) th button")
        page.wait_for_function("document.getElementById('fig-1-token').value === '2'")
        # opened as its figures are drawn, before any row was written: all written and filled at once
        got = page.evaluate("""([text]) => new Promise((resolve) => {
          const root = document.getElementById('course-play'), t = document.getElementById('play-text');
          root.addEventListener('play:drawn', () => {
            const table = document.querySelector('#fig-1 table.course-table'), before = table.tBodies[0].rows.length;
            const busy = table.getAttribute('aria-busy');
            document.querySelector('#fig-1 button.course-table-toggle').click();
            resolve({before, busy, rows: table.tBodies[0].rows.length, n: document.querySelectorAll('#fig-1-token option').length,
                     busyAfter: table.hasAttribute('aria-busy'), shown: table.getClientRects().length > 0,
                     empty: [...table.querySelectorAll('tbody td:not(.course-masked)')].filter(td => !td.textContent).length});
          }, {once: true});
          t.value = text; t.dispatchEvent(new Event('input', {bubbles: true}));
        })""", [long + " The end."])
        assert got["before"] == 0 and got["busy"] == "true" and got["n"] > n, got
        assert got["rows"] == got["n"] and not got["busyAfter"] and got["shown"] and got["empty"] == 0, got

        # -- bad input: a clear message, never a hang; no text becomes HTML
        typed(page, "")
        assert page.evaluate(STATE) == "empty" and "Type a sentence" in status(page)
        assert page.locator("#fig-1").count() == 0
        typed(page, "<|endoftext|><|endoftext|>")
        assert page.evaluate(STATE) == "empty" and "only <|endoftext|>" in status(page)
        typed(page, "Lily\u0007 wanted\u001b to\u0000 play")
        assert "Left out 3 control characters" in status(page)
        assert page.inner_text(".course-play-tokens").startswith("5 tokens:")
        typed(page, "word " * 400)
        assert "at most 256 tokens" in status(page) and "only the first 256 are shown" in status(page)
        assert page.evaluate("document.querySelectorAll('#fig-1-token option').length") == 256
        typed(page, "x" * 1_000_000)
        assert "Only the first 2,000 of your 1,000,000 characters" in status(page)
        typed(page, XSS)
        page.wait_for_function(ABLATED)  # its tokens in the pickers and the ablation figure too
        assert "logit(" in page.inner_text(".course-play-ablation .course-summary")
        assert page.evaluate("window.__pwned") is None
        assert page.locator(".course-play img, .course-play b").count() == 0
        assert "<₁ /₂ sc ri pt >₆ <₇ im g" in page.inner_text(".course-play-tokens")  # shown as text, token by token
        assert w.errors == [], "\n".join(w.errors)  # before axe, whose own stylesheet reads file:// refuses

        violations = axe(page)
        assert violations == [], json.dumps(violations, indent=1)

        # -- the one-file download, alone in a folder: its weights and scripts inline, nothing fetched
        alone = tmp_path / "play.html"
        shutil.copy(course / "build" / "site" / "downloads" / "play.html", alone)
        w3 = open_()
        w3.page.goto(alone.as_uri())
        w3.page.wait_for_function(f"{STATE} === 'ok'", timeout=60000)
        assert "·her looks most at" in w3.page.inner_text("#fig-1 .course-summary")
        w3.page.wait_for_function(ABLATED)
        assert w3.requests == [alone.as_uri()] and w3.errors == [], (w3.requests, w3.errors)
        assert w3.page.evaluate(f"{API}.worker") is True and w3.page.evaluate(SAME_AS_PAGE_MODEL) is True
        assert w3.page.evaluate(SAME_GRID_AS_PAGE_MODEL) is True
        # one run in the worker at a time: of three sentences asked for at once, the first runs,
        # the second waits and the third takes its place; the second is never computed
        got = w3.page.evaluate("""() => new Promise((resolve) => {
          const api = document.getElementById('course-play').coursePlay, r = api.runner, before = r.posted, done = [];
          const ids = [[0, 300, 301], [0, 302, 303, 304], [0, 305]];
          ids.forEach((x, i) => r.run(x, (run) => { done.push([i, run.n]); if (i === 2) setTimeout(() => resolve({done, posted: r.posted - before}), 200); }));
        })""")
        assert got == {"done": [[0, 3], [2, 2]], "posted": 2}, got

        # -- a deep link, at 375 px in dark mode
        w2 = open_(viewport={"width": 375, "height": 800}, color_scheme="dark")
        link = play_url + f"#s={enc('The dog saw Lily and wanted to play with her')}&layer=3&head=2&token=4"
        w2.page.goto(link)
        w2.page.wait_for_function(f"{STATE} === 'ok'", timeout=60000)
        assert w2.page.input_value("#play-text") == "The dog saw Lily and wanted to play with her"
        assert [w2.page.input_value(f"#fig-1-{k}") for k in ("layer", "head", "token")] == ["2", "1", "4"]
        assert w2.page.evaluate("document.body.scrollWidth <= window.innerWidth")
        assert w2.errors == [], "\n".join(w2.errors)  # before axe, whose own stylesheet reads file:// refuses
        violations = axe(w2.page)
        assert violations == [], json.dumps(violations, indent=1)


@pytest.mark.parametrize("width,scheme", [(1280, "light"), (1280, "dark"), (375, "light"), (375, "dark")])
def test_served_over_http_with_everything_open(browser, server, width, scheme):
    """The hosted site: play.html and its weights over http, the ablation grid drawn, then with
    "All heads", the table view and the ablation's second grid open, axe finds nothing."""
    with page_opener(browser, {f"127.0.0.1:{server.port}"}, width=width) as open_:
        w = open_(color_scheme=scheme)
        page = w.page
        page.goto(f"{server.base}/play.html#s={enc('Tom had a red ball. Tom gave the red ball to')}&layer=2&head=3&token=8")
        page.wait_for_function(f"{STATE} === 'ok'", timeout=60000)
        page.wait_for_function(ABLATED, timeout=60000)
        assert f"{server.base}/assets/generated/play-model.js" in w.requests
        assert page.evaluate(f"{API}.worker") is True and page.evaluate(SAME_AS_PAGE_MODEL) is True
        assert page.evaluate(SAME_GRID_AS_PAGE_MODEL) is True
        assert [page.input_value(f"#fig-1-{k}") for k in ("layer", "head", "token")] == ["1", "2", "8"]
        assert page.inner_text(".course-play-ablation .course-summary").startswith("At ·to, logit(")
        page.click("#fig-1 button[data-action=heads]")
        page.wait_for_function("document.querySelectorAll('#fig-1-heads button').length === 16")
        page.click("#fig-1 button.course-table-toggle")
        page.locator(".course-play-ablation details.course-causal-other > summary").click()
        assert page.evaluate("document.querySelector('.course-play-ablation details').open")
        page.locator("#fig-1 table.course-table").wait_for(state="visible")
        quiet(page)
        assert page.evaluate("document.body.scrollWidth <= window.innerWidth"), "the page scrolls sideways"
        assert w.errors == [], "\n".join(w.errors)
        violations = axe(page)
        assert violations == [], json.dumps(violations, indent=1)


def test_the_ablation_grid_is_in_the_address(browser, play_url):
    """The grid's position and targets go into #s=…&ablation=pos,id[,id] as the reader picks
    them, a link with them opens on that grid, and ids a link makes up are not trusted."""
    sentence = "Tom had a red ball. Tom gave the red ball to"
    values = "([sel]) => [...document.querySelector(sel).options].map(o => o.value)"
    with page_opener(browser, set(), width=1280) as open_:
        w = open_()
        page = w.page
        page.goto(play_url + f"#s={enc(sentence)}")
        page.wait_for_function(ABLATED, timeout=60000)
        last = len(page.evaluate(values, ["#play-ab-token"])) - 1
        assert re.search(rf"&ablation={last},\d+,\d+$", page.url), page.url  # the grid drawn by default: the last token, its top two guesses
        page.select_option("#play-ab-token", "4")
        page.wait_for_function("location.hash.includes('&ablation=4,')")
        page.wait_for_function(ABLATED, timeout=60000)
        guesses = page.evaluate(values, ["#play-ab-target"])
        third, fourth = int(guesses[2]), int(guesses[3])
        page.select_option("#play-ab-target", str(third))
        page.wait_for_function(f"location.hash.includes('&ablation=4,{third},')")
        page.select_option("#play-ab-against", "-1")
        page.wait_for_function(f"location.hash.endsWith('&ablation=4,{third}')")
        page.wait_for_function(ABLATED, timeout=60000)
        summary = page.inner_text(".course-play-ablation .course-summary")
        assert summary.startswith("At ·red₄, log P(")

        # a link with a grid: it opens on that position and those targets
        w2 = open_()
        w2.page.goto(play_url + f"#s={enc(sentence)}&layer=2&head=1&token=4&ablation=4,{fourth},{third}")
        w2.page.wait_for_function(ABLATED, timeout=60000)
        assert [w2.page.input_value(s) for s in ("#play-ab-token", "#play-ab-target", "#play-ab-against")] == ["4", str(fourth), str(third)]
        assert w2.page.inner_text(".course-play-ablation .course-summary").startswith("At ·red₄, logit(")
        assert w2.page.url.endswith(f"&layer=2&head=1&token=4&ablation=4,{fourth},{third}")
        # the same sentence with another grid, from the address bar: the grid follows
        w2.page.evaluate(f"location.hash = location.hash.replace(/&ablation=.*$/, '&ablation=2,{third}')")
        w2.page.wait_for_function("document.getElementById('play-ab-token') && document.getElementById('play-ab-token').value === '2'")
        w2.page.wait_for_function(ABLATED, timeout=60000)
        assert w2.page.input_value("#play-ab-target") == str(third) and w2.page.input_value("#play-ab-against") == "-1"

        # made-up ids (past the vocabulary) and a position past the end: the guesses, the last token
        w3 = open_()
        w3.page.goto(play_url + f"#s={enc(sentence)}&ablation=99,999999")
        w3.page.wait_for_function(ABLATED, timeout=60000)
        assert w3.page.input_value("#play-ab-token") == str(last)
        assert len(w3.page.evaluate(values, ["#play-ab-target"])) == 5  # the five guesses alone
        assert "999999" not in w3.page.evaluate(values, ["#play-ab-target"]) and "999999" not in w3.page.url
        assert w.errors == [] and w2.errors == [] and w3.errors == [], (w.errors, w2.errors, w3.errors)


# the figure's "All heads" and table open or not, and its view: [heads, table, 'grid' or 'lines']
OPEN_VIEWS = """([heads, table, view]) => {
  const fig = document.getElementById('fig-1'), pressed = fig && fig.querySelector('.course-viewswitch [aria-pressed=true]');
  return !!fig && document.getElementById('course-play').getAttribute('data-state') !== null
    && (fig.querySelector('button[data-action=heads]').getAttribute('aria-expanded') === 'true') === heads
    && (!heads || document.querySelectorAll('#fig-1-heads button').length === 16)
    && (fig.querySelector('button.course-table-toggle').getAttribute('aria-expanded') === 'true') === table
    && !!pressed && pressed.dataset.view === view; }"""


def retype(page, text: str) -> None:
    """Type `text` as one input event, the figure shown now marked data-older (the new
    sentence's figure is then #fig-1:not([data-older])) and the page's state cleared."""
    page.evaluate("""([text]) => { document.getElementById('fig-1').setAttribute('data-older', '');
      document.getElementById('course-play').removeAttribute('data-state');
      const t = document.getElementById('play-text'); t.value = text; t.dispatchEvent(new Event('input', {bubbles: true})); }""", [text])


# The whole run of every sentence typed from now on comes back HOLD ms after the shown head's
# weights (as a long sentence's later layers would), and each play:drawn records the page's
# state and its score table's rows at that moment.
HOLD = 1500
HOLD_RUNS = """([hold]) => {
  const root = document.getElementById('course-play'), r = root.coursePlay.runner, run = r.run;
  r.run = (ids, done, shown, early) => run.call(r, ids, (whole) => setTimeout(() => done(whole), hold), shown, early);
  window.__drawn = [];
  root.addEventListener('play:drawn', () => window.__drawn.push({state: root.getAttribute('data-state'),
    scores: document.querySelectorAll('.course-play-scoretable tbody tr').length}));
}"""
SHOWN_Z_IS_HEAD = """([l, h]) => { const z = document.querySelector('#fig-1 .js-plotly-plot').data[0].z;
  const w = document.getElementById('course-play').coursePlay.trace.layers[l].heads[h].weights;
  return z.length === w.length && z.every((row, q) => row.every((x, k) => k > q ? x === null : x === w[q][k])); }"""


def test_the_shown_head_is_drawn_before_the_rest_of_the_run(browser, play_url):
    """The worker sends the shown head's weights back as soon as its layer is done, the same
    numbers bit for bit as the whole run's; the page draws the heatmap from them while the later
    layers compute, and the head-type scores when the run is whole: play:drawn comes after both.
    A head the reader picks before the run is whole is drawn once it is."""
    with page_opener(browser, set(), width=1280) as open_:
        w = open_()
        page = w.page
        page.goto(play_url)
        page.wait_for_function(f"{STATE} === 'ok'", timeout=60000)
        got = page.evaluate("""() => new Promise((resolve) => {
          const api = document.getElementById('course-play').coursePlay, ids = [api.tokenizer.eotId, 300, 301, 302, 303, 300];
          const order = [];
          let early = null;
          api.runner.run(ids, (run) => {
            order.push('run');
            const whole = run.layers[2].heads[1].weights;
            resolve({order, same: early !== null && early.length === whole.length && early.every((x, i) => Object.is(x, whole[i]))});
          }, [2, 1], (weights) => { order.push('shown'); early = Array.from(weights); });
        })""")
        assert got == {"order": ["shown", "run"], "same": True}, got

        page.evaluate(HOLD_RUNS, [HOLD])
        retype(page, "Ben saw a dog. Ben saw a cat")
        page.locator("#fig-1:not([data-older]) .course-plot .main-svg").first.wait_for(state="attached", timeout=60000)
        # drawn from the shown head alone: the run is not whole yet, no scores, no play:drawn
        assert page.evaluate(STATE) is None and page.evaluate("window.__drawn") == []
        assert page.inner_text(".course-play-tokens").startswith("10 tokens:")
        page.select_option("#fig-1-layer", "3")  # another head, before the run is whole
        page.wait_for_function(f"{STATE} === 'ok'", timeout=60000)
        page.wait_for_function(SHOWN_Z_IS_HEAD, arg=[3, 0], timeout=60000)
        page.wait_for_function("window.__drawn.length === 1")
        assert page.evaluate("window.__drawn") == [{"state": "ok", "scores": 17}]  # 16 heads and chance
        # "All heads", opened as soon as a sentence's heatmap is drawn: every head's grid once the run is whole
        retype(page, "Ben saw a dog. Ben saw a dog")
        page.locator("#fig-1:not([data-older]) .course-plot .main-svg").first.wait_for(state="attached", timeout=60000)
        page.click("#fig-1 button[data-action=heads]")
        page.wait_for_function("document.querySelectorAll('#fig-1-heads button').length === 16", timeout=60000)
        assert page.evaluate(SAME_AS_PAGE_MODEL) is True
        assert page.evaluate(f"{API}.error") is None and w.errors == [], w.errors


# The worker's early weights (the shown head's) kept back until the test lets them go: window.__early()
HOLD_EARLY = """() => {
  const r = document.getElementById('course-play').coursePlay.runner, run = r.run;
  r.run = (ids, done, shown, early) => run.call(r, ids, done, shown, early && ((w) => { window.__early = () => early(w); }));
}"""


def test_a_head_picked_while_the_next_sentence_computes_is_the_one_drawn(browser, play_url):
    """The reader edits, then picks another head on the figure still shown before the new
    sentence's heatmap is drawn: the new figure shows the head picked, not the one the edit found,
    and the address says so."""
    with page_opener(browser, set(), width=1280) as open_:
        w = open_()
        page = w.page
        page.goto(play_url)
        page.wait_for_function(f"{STATE} === 'ok'", timeout=60000)
        before = page.evaluate("document.querySelector('#fig-1').__course.state")
        page.evaluate(HOLD_EARLY)
        retype(page, "Ben saw a dog. Ben saw a cat")
        layer = (before["layer"] + 2) % 4
        page.wait_for_function("window.__early !== undefined", timeout=60000)
        page.select_option("#fig-1[data-older] #fig-1-layer", str(layer))  # the old figure, its new sentence on its way
        page.evaluate("window.__early()")
        page.wait_for_function(f"{STATE} === 'ok'", timeout=60000)
        page.locator("#fig-1:not([data-older]) .course-plot .main-svg").first.wait_for(state="attached", timeout=60000)
        assert page.evaluate("document.querySelector('#fig-1').__course.state.layer") == layer
        page.wait_for_function(SHOWN_Z_IS_HEAD, arg=[layer, before["head"]], timeout=60000)
        page.wait_for_function(f"location.hash.includes('&layer={layer + 1}&head={before['head'] + 1}&')", timeout=60000)
        assert page.evaluate(f"{API}.error") is None and w.errors == [], w.errors


def test_what_the_reader_opened_and_picked_outlives_an_edit_and_an_empty_box(browser, play_url):
    """The layer and head picked, "All heads", the table and the lines view stay as the reader left
    them through an edit, and through an emptied box; the address follows the box even when it is
    empty. On a phone, the guesses' tokens are never broken across lines (their table scrolls)."""
    with page_opener(browser, set(), width=375) as open_:
        w = open_()
        page = w.page
        page.goto(play_url)
        page.wait_for_function(f"{STATE} === 'ok'", timeout=60000)
        page.select_option("#fig-1-layer", "2")
        page.select_option("#fig-1-head", "3")
        page.click("#fig-1 button[data-action=heads]")
        page.click("#fig-1 button.course-table-toggle")
        page.click("#fig-1 .course-viewswitch [data-view=lines]")
        page.wait_for_function(OPEN_VIEWS, arg=[True, True, "lines"])
        typed(page, "Ben saw a dog. Ben saw a cat")
        page.wait_for_function(OPEN_VIEWS, arg=[True, True, "lines"], timeout=60000)
        assert page.evaluate("[document.getElementById('fig-1-layer').value, document.getElementById('fig-1-head').value]") == ["2", "3"]
        typed(page, "")
        assert page.evaluate(STATE) == "empty"
        page.wait_for_function("location.hash === '#s='")
        typed(page, "Lily and Ben went to the park")
        page.wait_for_function(OPEN_VIEWS, arg=[True, True, "lines"], timeout=60000)
        assert page.evaluate("[document.getElementById('fig-1-layer').value, document.getElementById('fig-1-head').value]") == ["2", "3"]
        page.wait_for_function("location.hash.includes('&layer=3&head=4&')")
        # a longer sentence's guesses: every token on one line
        typed(page, " ".join(["Lily wanted to play with her new ball, and Ben was excited."] * 2))
        page.wait_for_function("document.querySelectorAll('.course-play-guesses tbody tr').length > 25", timeout=60000)
        broken = page.evaluate("[...document.querySelectorAll('.course-play-guesses .course-tok')].filter(t => t.getClientRects().length > 1).map(t => t.textContent)")
        assert broken == []
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
        page.wait_for_function("document.querySelector('.course-play-predictions .course-table-wrap').getAttribute('tabindex') === '0'")
        assert page.evaluate(f"{API}.error") is None and w.errors == [], w.errors


def test_a_link_whose_sentence_cannot_be_read_says_so_and_keeps_its_address(browser, play_url):
    """The page's own example is shown with the note, the note stays when the figures are drawn,
    and the broken address is left as it is until the reader types; the same when such a link
    arrives while a sentence is shown. A leading U+FEFF survives a link."""
    with page_opener(browser, set(), width=1280) as open_:
        w = open_()
        page = w.page
        page.goto(play_url + "#s=!!!!&layer=3")  # not base64url
        page.wait_for_function(f"{STATE} === 'noted'", timeout=60000)
        page.locator(".course-play-ablation #fig-2").wait_for(state="attached", timeout=60000)
        assert "could not be read" in status(page) and page.evaluate(STATE) == "noted"
        assert page.evaluate("location.hash") == "#s=!!!!&layer=3"
        typed(page, "Ben saw a dog")
        page.wait_for_function(f"{STATE} === 'ok' && location.hash.startsWith('#s=QmVuIHNhdyBhIGRvZw')", timeout=60000)
        assert "could not be read" not in status(page)
        page.evaluate("location.hash = '#s=__6AYWJj'")  # base64url, but not UTF-8
        page.wait_for_function(f"{STATE} === 'noted'", timeout=60000)
        assert "could not be read" in status(page)
        text = "\ufeffHello world"
        s = base64.urlsafe_b64encode(text.encode("utf-8")).decode().rstrip("=")
        page.evaluate(f"location.hash = '#s={s}'")
        page.wait_for_function(f"{STATE} === 'ok' && document.getElementById('play-text').value === {json.dumps(text)}", timeout=60000)
        assert page.evaluate(f"{API}.shown().ids.length") == 1 + len(page.evaluate(f"{API}.tokenizer.encode({json.dumps(text)})"))
        assert page.evaluate(f"{API}.error") is None and w.errors == [], w.errors


# Worker, as a page would find it: none at all, or one that fails once asked to run a sentence.
NO_WORKER = "Object.defineProperty(window, 'Worker', {value: undefined, configurable: true, writable: true});"
FAILING_WORKER = """window.Worker = class {
  postMessage(m) { if (m.ids) setTimeout(() => this.onerror && this.onerror({message: 'out of memory'}), 0); }
  terminate() {}
};"""


@pytest.mark.parametrize("worker", ["none", "failing"])
def test_without_a_worker_the_page_runs_the_model_itself(browser, play_url, worker):
    """Where no Web Worker can be made, or the one made fails, the sentence and its ablation grid
    run in the page's own thread: the same figures, the same numbers, no error shown."""
    with page_opener(browser, set(), width=1280) as open_:
        w = open_()
        w.context.add_init_script(NO_WORKER if worker == "none" else FAILING_WORKER)
        page = w.page
        page.goto(play_url + f"#s={enc('Tom had a red ball. Tom gave the red ball to')}")
        page.wait_for_function(f"{STATE} === 'ok' && {RUNS} >= 1", timeout=60000)
        assert page.evaluate(f"{API}.worker") is False
        assert page.evaluate(f"{API}.workerError") == (None if worker == "none" else "out of memory")
        assert page.evaluate(SAME_AS_PAGE_MODEL) is True
        assert "·to looks most at" in page.inner_text("#fig-1 .course-summary")
        page.wait_for_function(ABLATED, timeout=60000)  # the ablation grid too, one removed head an idle task
        assert page.evaluate(SAME_GRID_AS_PAGE_MODEL) is True
        assert page.inner_text(".course-play-ablation .course-summary").startswith("At ·to, logit(")
        typed(page, "Lily wanted to play with her")
        page.wait_for_function("document.querySelectorAll('.course-play-guesses tbody tr').length === 7")
        assert page.inner_text(".course-play-tokens").startswith("7 tokens:") and page.evaluate(SAME_AS_PAGE_MODEL) is True
        assert page.evaluate(f"{API}.error") is None and w.errors == [], w.errors


def test_a_reader_review_of_the_playground(browser, play_url):
    """What a review with a screen reader and a keyboard found: "All heads" draws each head as
    one canvas (16 of 64 tokens were 65,536 elements) whose pixels are the weights' colours; the
    status is heard once the reader pauses, not at every keystroke, and a new figure's summary
    only once the reader works it; a second <|endoftext|> is said at its own position; Enter on
    an ablation cell keeps the focus on it; a log-probability has a true minus; a link whose
    text is all control characters keeps its note and its address."""
    with page_opener(browser, set(), width=1280) as open_:
        w = open_()
        page = w.page
        page.goto(play_url + "#s=AAE")  # NUL and U+0001: nothing left to read
        page.wait_for_function(f"{STATE} === 'empty'", timeout=60000)
        assert "Left out 2 control characters" in status(page) and page.evaluate("location.hash") == "#s=AAE"

        sentence = " ".join(["Lily saw a dog and the dog saw Lily."] * 4)  # 41 tokens
        page.fill("#play-text", "")
        page.wait_for_function("document.querySelector('.course-play-live').textContent.includes('Type a sentence')")
        # twelve keystrokes 40 ms apart, timed in the page: one announcement, after the pause
        page.evaluate("""([text]) => new Promise((done) => { window.__live = 0; new MutationObserver(() => window.__live++)
          .observe(document.querySelector('.course-play-live'), {childList: true, characterData: true, subtree: true});
          const box = document.getElementById('play-text');
          (function key(i) { if (i > text.length) { done(); return; }
            box.value = text.slice(0, i); box.dispatchEvent(new Event('input', {bubbles: true})); setTimeout(() => key(i + 1), 40); })(1); })""",
                      [sentence[:12]])
        page.wait_for_function("document.querySelector('.course-play-live').textContent.includes('read')")
        quiet(page)  # every timer the burst set has run: a second announcement would have come
        assert page.evaluate("window.__live") == 1, "one announcement for the burst, once it paused"
        assert page.get_attribute("#fig-1 .course-summary", "aria-live") == "off"
        page.focus("#fig-1-layer")
        assert page.get_attribute("#fig-1 .course-summary", "aria-live") == "polite"

        typed(page, sentence)
        page.wait_for_function(f"{STATE} === 'ok'", timeout=60000)
        page.click("#fig-1 button[data-action=heads]")
        page.wait_for_function("document.querySelectorAll('#fig-1-heads canvas.course-mini-cells').length === 16", timeout=60000)
        n = page.evaluate(f"{API}.shown().ids.length")
        assert page.evaluate("document.querySelectorAll('#fig-1-heads *').length") < 16 * 8, "a few elements a head, not one a cell"
        got = page.evaluate("""([n]) => { const api = document.getElementById('course-play').coursePlay, t = api.trace;
          const c = document.querySelector('#fig-1-heads button[data-layer="2"][data-head="3"] canvas');
          const px = c.getContext('2d').getImageData(0, 0, n, n).data, out = [];
          for (const [q, k] of [[0, 0], [n - 1, 0], [n - 1, n - 1], [20, 7], [7, 20]]) {
            const at = (q * n + k) * 4;
            out.push([Array.from(px.slice(at, at + 4)), k <= q ? course.cellColour(t.layers[2].heads[3].weights[q][k]).background : null]);
          }
          return [c.width, c.height, out]; }""", [n])
        assert got[0] == got[1] == n
        for rgba, css in got[2]:
            if css is None:
                assert rgba[3] == 0, "a masked cell is transparent: the theme's masked colour shows"
            else:
                assert css == f"rgb({rgba[0]}, {rgba[1]}, {rgba[2]})" and rgba[3] == 255

        typed(page, "The cat sat.<|endoftext|>The dog ran.")
        page.wait_for_function(f"{STATE} === 'ok'", timeout=60000)
        spoken = page.eval_on_selector_all(".course-play-tokens .course-tok", "ts => ts.map(t => [t.textContent, t.getAttribute('aria-label')])")
        eots = [s for s in spoken if s[0].startswith("‹eot›")]
        assert eots == [["‹eot›₀", "end of text, position 0"], ["‹eot›₅", "end of text, position 5"]], eots

        page.wait_for_function(ABLATED, timeout=60000)
        page.select_option("#play-ab-against", "-1")
        page.wait_for_function(f"{ABLATED} && document.querySelector('.course-play-ablation .course-summary').textContent.includes('log P(')", timeout=60000)
        summary = page.inner_text(".course-play-ablation .course-summary")
        assert re.search(r"log P\(.+\) is \u2212\d\.\d\d\.", summary) and "-" not in summary, summary
        link = ".course-play-ablation #fig-2 a >> nth=5"
        page.focus(link)
        page.keyboard.press("Enter")
        page.wait_for_function("location.hash.startsWith('#s=') && location.hash.includes('&layer=2&head=2')")
        quiet(page)
        assert page.evaluate("document.activeElement.matches('.course-play-ablation #fig-2 a')"), "the focus stays on the cell followed"
        assert page.evaluate(f"{API}.error") is None and w.errors == [], w.errors
