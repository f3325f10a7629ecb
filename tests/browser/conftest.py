"""Fixtures for the browser tests: Debian's Chromium through Playwright, a local http.server, and
a page wrapper that blocks and counts every request leaving the machine."""

from __future__ import annotations

import contextlib
import functools
import http.server
import os
import threading
from pathlib import Path
from urllib.parse import urlparse

import pytest

from generator.bench.chromium import CHROMIUM, cpu_throttle_rate, launch_args, throttle
from course_builds import PENDING_WORK_INIT
from generator.site.serve import DroppedConnectionsQuiet

from . import harness

LOCAL_SCHEMES = ("file", "data", "blob", "about")


def failed_request(req) -> str | None:
    """A request that failed, as a test reports it; None for one cut off because the test moved on
    to the next page (net::ERR_ABORTED, as the favicon is, which Chromium asks for after the
    load): a missing file fails at once, with its own error (ERR_FILE_NOT_FOUND, a 404)."""
    return None if req.failure == "net::ERR_ABORTED" else f"{req.url} ({req.failure})"


def _no_chromium() -> str | None:
    if not os.path.exists(CHROMIUM):
        return f"{CHROMIUM} is absent (install it with `apt-get install -y chromium`)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright Python package is not installed (pip install -e '.[test]')"
    return None


def pytest_collection_modifyitems(config, items):
    reason = _no_chromium()
    if reason:
        for item in items:
            if "browser" in item.keywords:
                item.add_marker(pytest.mark.skip(reason=reason))


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # keep pytest output clean
        pass


class QuietServer(DroppedConnectionsQuiet, http.server.ThreadingHTTPServer):
    """http.server that, as make serve's, prints no traceback for a connection a browser dropped."""


class LocalServer:
    """http.server on 127.0.0.1, a random port, in a daemon thread."""

    def __init__(self, root: Path):
        handler = functools.partial(_QuietHandler, directory=str(root))
        self.httpd = QuietServer(("127.0.0.1", 0), handler)
        self.port = self.httpd.server_address[1]
        self.base = f"http://127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture(scope="session")
def harness_site(tmp_path_factory):
    """(root, docs): the harness page and its synthetic traces."""
    root = tmp_path_factory.mktemp("harness")
    docs = harness.build(root)
    return root, docs


@pytest.fixture(scope="session")
def harness_server(harness_site):
    server = LocalServer(harness_site[0])
    yield server
    server.close()


@pytest.fixture(scope="session")
def browser():
    reason = _no_chromium()
    if reason:
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    rate = cpu_throttle_rate()  # COURSE_CPU_THROTTLE=4: every page 4 times slower
    pw = sync_playwright().start()
    b = pw.chromium.launch(executable_path=CHROMIUM, args=launch_args())
    yield ThrottledBrowser(b, rate) if rate else b
    b.close()
    pw.stop()


class _Wrapped:
    def __init__(self, target, rate: float):
        self._target, self._rate = target, rate

    def __getattr__(self, name):
        return getattr(self._target, name)


class ThrottledContext(_Wrapped):
    """A browser context whose pages are throttled before the test sees them (a page it opens
    itself, a popup, is throttled when its `page` event comes)."""

    def new_page(self):
        page = self._target.new_page()
        throttle(page, self._rate)
        return page


class ThrottledBrowser(_Wrapped):
    """The session's browser under COURSE_CPU_THROTTLE: every context and page it makes is
    throttled (generator/bench/chromium.py, throttle)."""

    def new_context(self, **options):
        context = self._target.new_context(**options)
        context.on("page", lambda page: throttle(page, self._rate))
        return ThrottledContext(context, self._rate)

    def new_page(self, **options):
        return self.new_context(**options).new_page()


class Watched:
    """A page plus what it did: console errors, page errors, dialogs, external requests."""

    def __init__(self, context, page, allowed_hosts: set[str]):
        self.context, self.page = context, page
        context.set_default_timeout(60000)  # two shared cores: be patient, never flaky
        context.add_init_script(PENDING_WORK_INIT)  # what course_builds.quiet() waits for
        self.allowed_hosts = allowed_hosts
        self.errors: list[str] = []
        self.dialogs: list[str] = []
        self.external: list[str] = []
        self.requests: list[str] = []
        page.on("console", lambda m: self.errors.append(f"console.{m.type}: {m.text}") if m.type == "error" else None)
        page.on("pageerror", lambda e: self.errors.append(f"pageerror: {e}"))
        page.on("dialog", self._dialog)
        page.on("request", lambda r: self._seen(r.url))
        context.route("**/*", self._route)

    def is_local(self, url: str) -> bool:
        u = urlparse(url)
        if u.scheme in LOCAL_SCHEMES:
            return True
        return u.scheme == "http" and u.netloc in self.allowed_hosts

    def _seen(self, url: str):
        self.requests.append(url)
        if not self.is_local(url) and url not in self.external:
            self.external.append(url)

    def _route(self, route):
        url = route.request.url
        if self.is_local(url):
            route.continue_()
        else:
            if url not in self.external:
                self.external.append(url)
            route.abort()

    def _dialog(self, dialog):
        self.dialogs.append(f"{dialog.type}: {dialog.message}")
        dialog.dismiss()

    def goto(self, url: str, wait_painted: bool = True):
        self.page.goto(url)
        if wait_painted:
            self.page.wait_for_function("window.course && window.course.paintedAt !== null", timeout=60000)
        return self.page


@contextlib.contextmanager
def page_opener(browser, allowed_hosts: set[str], width: int = 1100, watched=None, navigation_timeout: int | None = None):
    """The one way tests open pages: yields open(js=True, **context_options) -> Watched (or the
    `watched` subclass); when the test is done, every context is closed and none may have made a
    request off the machine."""
    made: list = []
    cls = watched or Watched

    def _open(js: bool = True, **options):
        options.setdefault("viewport", {"width": width, "height": 900})
        context = browser.new_context(java_script_enabled=js, **options)
        w = cls(context, context.new_page(), set(allowed_hosts))
        if navigation_timeout:
            context.set_default_navigation_timeout(navigation_timeout)
        made.append(w)
        return w

    yield _open
    for w in made:
        external = list(w.external)
        w.context.close()
        assert external == [], f"{len(external)} request(s) tried to leave the machine: {external}"


@pytest.fixture
def open_page(browser, harness_server):
    """open_page(**context_options) -> Watched on the harness; no request may leave the machine."""
    with page_opener(browser, {f"127.0.0.1:{harness_server.port}"}) as open_:
        yield open_


@pytest.fixture(params=["http", "file"])
def scheme(request):
    return request.param


@pytest.fixture
def harness_url(harness_site, harness_server):
    """harness_url(scheme, page='index.html', hash='') -> URL of the harness page."""
    root = harness_site[0]

    def _url(scheme: str = "file", page: str = "index.html", hash: str = "") -> str:
        base = (root / page).as_uri() if scheme == "file" else f"{harness_server.base}/{page}"
        return base + hash

    return _url


# The whole course, built once (course_builds.shared_course), and served over http: shared by
# the accessibility, injection and offline tests.
@pytest.fixture(scope="module")
def course() -> Path:
    from course_builds import shared_course

    return shared_course()


@pytest.fixture(scope="module")
def server(course):
    s = LocalServer(course / "build" / "site")
    yield s
    s.close()


@pytest.fixture
def open_site(browser, server):
    """open_site(**context_options) -> Watched on the shared build at 1280 px; no request may leave the machine."""
    with page_opener(browser, {f"127.0.0.1:{server.port}"}, width=1280) as open_:
        yield open_


@pytest.fixture
def open_served(browser):
    """A page opener for a `make serve` process (generator.bench.preview.ServeProcess): only its
    127.0.0.1 port may be reached; every opened page is closed after the test."""
    opened = []

    def open_(server):
        cm = page_opener(browser, {f"127.0.0.1:{server.port}"})
        opened.append(cm)
        return cm.__enter__()

    yield open_
    for cm in opened:
        cm.__exit__(None, None, None)
