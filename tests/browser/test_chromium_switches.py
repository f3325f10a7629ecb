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
