"""Debian's Chromium as the browser tests and the benchmarks launch it: one set of switches.

    from generator.bench.chromium import CHROMIUM, launch_args
    browser = playwright.chromium.launch(executable_path=CHROMIUM, args=launch_args())

Chromium's new headless mode opens a browser window for each Playwright context, and each window
preloads the address bar's WebUI popup (chrome://omnibox-popup.top-chrome/, twice) in a renderer
process of its own. Nothing the tests or the benchmarks read comes from it. Measured on 2 cores,
without it against with it: an empty context, 0.21 CPU-seconds against 0.33; the course's 10
pages loaded twice, each in a context of its own (1200 px, settled, axe run), 31.6 CPU-seconds
of Chromium against 45.0; the browser tests (236, two workers), 652 CPU-seconds and 361 s against
701 and 404.

Chromium reads only the last `--disable-features` it is given, so the switch that turns the popup
off repeats Playwright's own list, read from the installed driver (the same version the tests
pin); where that list cannot be read, the popup stays on and nothing else changes.

COURSE_CPU_THROTTLE=4 (read by :func:`cpu_throttle_rate`) makes every page the browser tests open
run its scripts 4 times slower, through the DevTools protocol's `Emulation.setCPUThrottlingRate`
(:func:`throttle`): a slow, busy machine on demand, so that a test that waits for a fixed time
instead of for what it needs fails here rather than on CI.
"""

from __future__ import annotations

import os
import re
from functools import lru_cache
from pathlib import Path

CHROMIUM = "/usr/bin/chromium"
BASE_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
    "--disable-sync", "--no-first-run", "--disable-quic",
]
# the address bar's WebUI popups, which each headless window preloads (Chromium 156)
UNUSED_FEATURES = ("WebUIOmniboxPopup", "WebUIOmniboxAimPopup", "WebUIOmniboxFullPopup")

_DISABLED_LIST = re.compile(r"\bdisabledFeatures\s*=\s*\[(.*?)\]", re.S)


def playwright_disabled_features(bundle: Path | None = None) -> list[str] | None:
    """The features Playwright's driver turns off in every Chromium it launches (its
    `disabledFeatures`), or None when its bundle cannot be read."""
    if bundle is None:
        try:
            import playwright
        except ImportError:
            return None
        bundle = Path(playwright.__file__).parent / "driver" / "package" / "lib" / "coreBundle.js"
    try:
        m = _DISABLED_LIST.search(bundle.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):  # missing, unreadable, or not the text it should be
        return None
    if not m:
        return None
    body = re.sub(r"//[^\n]*", "", m.group(1))  # its comments name issues, not features
    names = re.findall(r'"([A-Za-z0-9]+)"', body)
    return names or None


@lru_cache(maxsize=1)
def _args() -> tuple[str, ...]:
    theirs = playwright_disabled_features()
    if theirs is None:
        return tuple(BASE_ARGS)
    features = list(dict.fromkeys(theirs + list(UNUSED_FEATURES)))
    return (*BASE_ARGS, "--disable-features=" + ",".join(features))


def launch_args() -> list[str]:
    """The switches every browser test and benchmark passes to `chromium.launch(args=...)`."""
    return list(_args())


THROTTLE_ENV = "COURSE_CPU_THROTTLE"
MAX_THROTTLE = 20.0


class BadThrottle(ValueError):
    """COURSE_CPU_THROTTLE is not a slowdown factor."""


def cpu_throttle_rate(environ=None) -> float | None:
    """The CPU slowdown factor COURSE_CPU_THROTTLE asks for (4: scripts run 4 times slower), or
    None when it is unset, empty or 1."""
    raw = (os.environ if environ is None else environ).get(THROTTLE_ENV, "").strip()
    if raw in ("", "1"):
        return None
    try:
        rate = float(raw)
    except ValueError:
        rate = float("nan")
    if not 1 <= rate <= MAX_THROTTLE:  # NaN fails too
        raise BadThrottle(f"{THROTTLE_ENV}={raw!r} is not a slowdown factor. Fix: set it to a number from 1 to "
                          f"{MAX_THROTTLE:g}, such as 4 (4 times slower), or unset it")
    return rate


def throttle(page, rate: float) -> None:
    """Run `page`'s main thread `rate` times slower (Chrome DevTools' CPU throttling). The
    DevTools session is kept on the page: the setting lasts as long as the session does."""
    if getattr(page, "_course_throttle", None) is not None:
        return
    session = page.context.new_cdp_session(page)
    session.send("Emulation.setCPUThrottlingRate", {"rate": rate})
    page._course_throttle = session
