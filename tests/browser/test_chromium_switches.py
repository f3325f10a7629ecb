"""The switches every browser test and benchmark launches Chromium with (generator/bench/chromium.py):
the address bar's WebUI popup is off, and Playwright's own disabled features stay off with it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from generator.bench import chromium


def own_processes() -> dict[int, list[str]]:
    """argv of every process descended from this one (the Playwright driver and its Chromium).
    Chromium rewrites its renderers' titles into one string, so words are split on spaces too."""
    parent, argv = {}, {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
            argv[int(pid)] = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace").split()
        except OSError:
            continue
        parent[int(pid)] = int(stat.rsplit(")", 1)[1].split()[1])

    def ours(pid: int) -> bool:
        while pid > 1:
            pid = parent.get(pid, 1)
            if pid == os.getpid():
                return True
        return False

    return {pid: a for pid, a in argv.items() if ours(pid)}


def launched(chromium_type, args: list[str]) -> tuple[set[str], list[str]]:
    """(the features a renderer was told to disable, the browser's targets' URLs) of a Chromium
    launched with `args` that has opened one page."""
    before = set(own_processes())
    browser = chromium_type.launch(executable_path=chromium.CHROMIUM, args=args)
    try:
        browser.new_context().new_page().goto("data:text/html,<p>x")
        targets = [t["url"] for t in browser.new_browser_cdp_session().send("Target.getTargets", {"filter": [{}]})["targetInfos"]]
        renderers = [a for pid, a in own_processes().items() if pid not in before and "--type=renderer" in a]
        assert renderers, "no renderer of this browser found"
        features = {f for a in renderers[0] if a.startswith("--disable-features=") for f in a.split("=", 1)[1].split(",")}
    finally:
        browser.close()
    return features, targets


@pytest.mark.browser
def test_the_omnibox_popup_is_off_and_playwright_s_own_features_stay_off(browser):
    # (a browser of its own beside the session's, from the same Playwright)
    # what Playwright turns off when no switch of ours names features: the parser must read that
    default, default_targets = launched(browser.browser_type, chromium.BASE_ARGS)
    assert set(chromium.playwright_disabled_features()) == default
    assert any("omnibox-popup" in t for t in default_targets), "Chromium no longer makes the popup: drop the switch"
    ours, targets = launched(browser.browser_type, chromium.launch_args())
    assert default <= ours and set(chromium.UNUSED_FEATURES) <= ours
    assert not any("omnibox-popup" in t for t in targets), targets
    assert "data:text/html,<p>x" in targets


def test_an_unreadable_driver_leaves_the_switches_as_they_were(tmp_path):
    assert chromium.playwright_disabled_features(tmp_path / "missing.js") is None
    (tmp_path / "binary.js").write_bytes(b"disabledFeatures = [\xff\xfe]")
    assert chromium.playwright_disabled_features(tmp_path / "binary.js") is None
    (tmp_path / "other.js").write_text("var enabledFeatures = () => [];\n", encoding="utf-8")
    assert chromium.playwright_disabled_features(tmp_path / "other.js") is None
    (tmp_path / "bundle.js").write_text(
        'disabledFeatures = [\n  // See "https://example.org"\n  "PaintHolding",\n  "MediaRouter"\n].filter(Boolean);\n', encoding="utf-8")
    assert chromium.playwright_disabled_features(tmp_path / "bundle.js") == ["PaintHolding", "MediaRouter"]


def test_the_throttle_switch_reads_a_slowdown_factor():
    rate = chromium.cpu_throttle_rate
    env = chromium.THROTTLE_ENV
    assert rate({}) is None and rate({env: ""}) is None and rate({env: "1"}) is None
    assert rate({env: "4"}) == 4.0 and rate({env: " 2.5 "}) == 2.5
    for bad in ("fast", "0.5", "0", "-4", "nan", "inf", "1e9"):
        with pytest.raises(chromium.BadThrottle) as e:
            rate({env: bad})
        msg = str(e.value)
        assert "\n" not in msg and msg.startswith(f"{env}={bad!r} ") and "Fix:" in msg, msg


@pytest.mark.browser
def test_every_page_of_a_throttled_browser_is_throttled(browser):
    """COURSE_CPU_THROTTLE's wiring (conftest.ThrottledBrowser): a page the test opens, one it opens
    from its context, and a popup each hold a DevTools session that set the throttling."""
    from .conftest import ThrottledBrowser

    throttled = ThrottledBrowser(browser, 4)
    context = throttled.new_context()
    try:
        first = context.new_page()
        second = context.new_page()
        first.goto("data:text/html,<p>x")
        with first.expect_popup() as popup:
            first.evaluate("window.open('about:blank')")
        third = popup.value
        third.wait_for_load_state()
        first.wait_for_function("1")  # the popup's page event handled
        for page in (first, second, third):
            assert page._course_throttle is not None
            # the session is live: the rate can be set through it again
            page._course_throttle.send("Emulation.setCPUThrottlingRate", {"rate": 4})
    finally:
        context.close()


@pytest.mark.browser
def test_quiet_waits_for_the_page_s_timers_idle_callbacks_and_scripts(open_page, harness_url):
    """course_builds.quiet, the browser tests' wait for "what the last action set off": a timer
    that sets another, an idle callback and an added script have all run when it returns; a
    cancelled timer is not waited for. (On the harness page: a data: URL gets no init script.)"""
    from course_builds import quiet

    if True:
        w = open_page()
        w.goto(harness_url("http"))
        w.page.evaluate("""() => { window.__done = [];
          setTimeout(() => setTimeout(() => __done.push('timer'), 300), 300);
          requestIdleCallback(() => __done.push('idle'));
          clearTimeout(setTimeout(() => __done.push('cancelled'), 100000));
          const s = document.createElement('script');
          s.src = 'data:text/javascript,window.__done.push("script")';
          document.head.appendChild(s); }""")
        quiet(w.page)
        assert sorted(w.page.evaluate("__done")) == ["idle", "script", "timer"]
