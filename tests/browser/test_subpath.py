"""The course as GitHub Pages hosts a project site: under a sub-path (https://user.github.io/course/),
with 404.html answering any missing path below it, at any depth.

The session's shared course (tests/course_builds.py) is built once more, as the Pages workflow
builds it: `python -m generator site` with COURSE_SITE_URL set to a URL under /course/ (mkdocs.yml
reads it as site_url). That build is served under /course/ by a local http.server on 127.0.0.1
that, like Pages, answers everything else with 404.html and status 404. Chromium then checks that
every page loads with no console error, no failed request and no link that escapes the prefix, that
a figure draws (a Plotly heatmap), that search finds pages under the prefix, and that the 404 page
renders with its styles from any depth."""

from __future__ import annotations

import functools
import http.server
import os
import re
import sys
import threading
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import urlparse

import pytest

from course_builds import INJECTION_PAGE_NAME, REPO, REUSE_ENV, course_mkdocs_yml, run, settle, standin_env

from .conftest import QuietServer, Watched, failed_request, page_opener

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PREFIX = "/course/"
# As actions/configure-pages gives it (no trailing slash); only its path, /course/, reaches the pages.
SITE_URL = "https://user.github.io/course"
INJECTION_HTML = INJECTION_PAGE_NAME.replace(".md", ".html")


@pytest.fixture(scope="module")
def subpath_site(course) -> Path:
    """The shared course, rebuilt with COURSE_SITE_URL (as .github/workflows/pages.yml builds it)
    into course/subpath/site (downloads in course/subpath/downloads, away from the shared build's).
    With COURSE_TEST_BUILD set, a previous build there is reused."""
    out = course / "subpath"
    site = out / "site"
    stamp = out / "site-url.txt"
    if os.environ.get(REUSE_ENV) and (site / "index.html").is_file() and stamp.is_file() and stamp.read_text() == SITE_URL:
        return site
    yml = course_mkdocs_yml((REPO / "mkdocs.yml").read_text(encoding="utf-8"), f"Injection test: {INJECTION_PAGE_NAME}")
    (course / "mkdocs-subpath.yml").write_text(yml, encoding="utf-8")
    r = run([sys.executable, "-m", "generator", "site", "-f", "mkdocs-subpath.yml", "-d", str(site)],
            cwd=course, timeout=900, COURSE_SITE_URL=SITE_URL, **standin_env())
    assert r.returncode == 0, f"site with COURSE_SITE_URL failed ({r.returncode}):\n{r.stdout}\n{r.stderr}"
    stamp.write_text(SITE_URL)
    return site


class _PagesHandler(http.server.SimpleHTTPRequestHandler):
    """Serves `directory` at PREFIX only; any other path, or a missing file, gets 404.html with
    status 404, as GitHub Pages does for a project site."""

    def log_message(self, *args):
        pass

    def _not_found(self):
        body = (Path(self.directory) / "404.html").read_bytes()
        self.send_response(404)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _route(self) -> bool:
        path = urlparse(self.path).path
        if path == PREFIX.rstrip("/"):
            self.send_response(301)
            self.send_header("Location", PREFIX)
            self.end_headers()
            return False
        if not path.startswith(PREFIX):
            self._not_found()
            return False
        inner = "/" + self.path[len(PREFIX):]
        fs = Path(self.translate_path(inner))
        if not (fs.is_file() or (fs.is_dir() and (fs / "index.html").is_file())):
            self._not_found()
            return False
        self.path = inner
        return True

    def do_GET(self):
        if self._route():
            super().do_GET()

    def do_HEAD(self):
        if self._route():
            super().do_HEAD()


@pytest.fixture(scope="module")
def pages_server(subpath_site):
    handler = functools.partial(_PagesHandler, directory=str(subpath_site))
    httpd = QuietServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    httpd.base = f"http://127.0.0.1:{httpd.server_address[1]}"  # type: ignore[attr-defined]
    httpd.root = httpd.base + PREFIX  # type: ignore[attr-defined]
    yield httpd
    httpd.shutdown()
    httpd.server_close()


class Sub(Watched):
    """Watched, plus every failed request and every HTTP error response (the main document of
    the 404 test excepted, by URL)."""

    def __init__(self, context, page, allowed_hosts):
        super().__init__(context, page, allowed_hosts)
        self.failed: list[str] = []
        self.expected_404: set[str] = set()
        page.on("requestfailed", self._request_failed)
        page.on("response", self._response)

    def _request_failed(self, req):
        # one cut off by moving on is not broken: check_refs asks for every file and wants a 200
        if failed := failed_request(req):
            self.failed.append(failed)

    def _response(self, resp):
        if resp.status >= 400 and resp.url not in self.expected_404:
            self.failed.append(f"{resp.url} (HTTP {resp.status})")


@pytest.fixture
def open_sub(browser, pages_server):
    # shared, busy cores: a slow navigation is not a broken one
    with page_opener(browser, {urlparse(pages_server.base).netloc}, width=1200, watched=Sub, navigation_timeout=180000) as open_:
        yield open_


def site_pages(site: Path) -> list[str]:
    """Every page a reader reaches (not 404.html, not the heavy test-only injection page, not the
    one-file downloads, which are checked as links)."""
    return sorted(p.name for p in site.glob("*.html") if p.name not in ("404.html", INJECTION_HTML))


LOCAL_REFS = """() => [...document.querySelectorAll('a[href], link[href], script[src], img[src]')]
  .map(e => e.href || e.src).filter(u => u.startsWith(location.origin))"""


def status(url: str) -> int:
    req = urllib.request.Request(url.split("#")[0], method="HEAD")
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code


def check_refs(page, pages_server, where: str, cache: dict[str, int]) -> list[str]:
    """Every same-origin link, stylesheet, script and image of the page stays under the prefix
    and answers 200."""
    bad = []
    for url in page.evaluate(LOCAL_REFS):
        if not urlparse(url).path.startswith(PREFIX):
            bad.append(f"{where}: {url} escapes {PREFIX}")
            continue
        key = url.split("#")[0]
        if key not in cache:
            cache[key] = status(key)
        if cache[key] != 200:
            bad.append(f"{where}: {url} answers {cache[key]}")
    return bad


def test_the_site_is_built_for_the_prefix(subpath_site):
    text = (subpath_site / "404.html").read_text(encoding="utf-8")
    refs = re.findall(r'(?:href|src)="([^"]+)"', text)
    local = [u for u in refs if not urlparse(u).scheme and not u.startswith("#")]
    assert local, "404.html links to nothing"
    assert all(u.startswith(PREFIX) for u in local), [u for u in local if not u.startswith(PREFIX)]
    # the other pages stay relative, so the same files also work from file:// and the zip
    index = (subpath_site / "index.html").read_text(encoding="utf-8")
    assert 'src="assets/generated/course.js"' in index


def test_every_page_loads_under_the_prefix_with_no_error(subpath_site, pages_server, open_sub):
    w = open_sub()
    cache: dict[str, int] = {}
    bad: list[str] = []
    pages = site_pages(subpath_site)
    assert {"index.html", "attention.html", "gpt2.html"} <= set(pages)
    for name in pages:
        resp = w.page.goto(pages_server.root + name)
        assert resp and resp.status == 200, f"{name}: HTTP {resp and resp.status}"
        settle(w.page)
        w.page.evaluate("window.courseReady && courseReady()")
        bad += check_refs(w.page, pages_server, name, cache)
    # the root of the prefix is the home page
    resp = w.page.goto(pages_server.root)
    assert resp and resp.status == 200 and "How attention works" in w.page.title()
    assert w.errors == [], w.errors
    assert w.failed == [], w.failed
    assert bad == [], "\n".join(bad)


def test_a_figure_draws_a_plotly_heatmap(pages_server, open_sub):
    w = open_sub()
    w.goto(pages_server.root + "attention.html")
    plot = w.page.locator(".course-fig[data-kind=attention] .course-plot").first
    plot.scroll_into_view_if_needed()
    plot.locator(".main-svg").first.wait_for(state="attached", timeout=60000)
    w.page.wait_for_function(
        """() => [...document.querySelectorAll('.js-plotly-plot')].some(
             p => (p.data || []).some(t => t.type === 'heatmap') && p.querySelector('.heatmaplayer image, .heatmaplayer .hm'))""",
        timeout=60000)
    assert w.errors == [] and w.failed == [], (w.errors, w.failed)


def test_search_finds_pages_under_the_prefix(pages_server, open_sub):
    w = open_sub()
    w.goto(pages_server.root + "index.html", wait_painted=False)
    w.page.wait_for_load_state("load")
    w.page.locator("input.md-search__input").press_sequentially("softmax", delay=20)
    w.page.wait_for_selector(".md-search-result__item")
    assert "matching document" in w.page.inner_text(".md-search-result__meta")
    links = w.page.locator(".md-search-result__link").evaluate_all("as => as.map(a => a.href)")
    assert links and all(h.startswith(pages_server.root) for h in links), links
    resp = w.page.goto(links[0])
    assert resp and resp.status == 200, links[0]
    assert w.errors == [] and w.failed == [], (w.errors, w.failed)


@pytest.mark.parametrize("missing", ["no-such-page.html", "a/b/c/deep.html"])
def test_404_renders_with_its_styles_under_the_prefix(missing, pages_server, open_sub):
    w = open_sub()
    url = pages_server.root + missing
    w.expected_404.add(url)
    resp = w.page.goto(url)
    assert resp and resp.status == 404
    w.page.wait_for_load_state("load")
    assert "404" in w.page.inner_text("body")
    sheets = w.page.evaluate("""() => [...document.querySelectorAll('link[rel=stylesheet]')].map(l => ({
        href: l.href, rules: l.sheet ? l.sheet.cssRules.length : -1}))""")
    assert len(sheets) >= 3 and all(s["rules"] > 0 for s in sheets), sheets
    assert all(urlparse(s["href"]).path.startswith(PREFIX) for s in sheets), sheets
    # Material's own styles apply: the header is a coloured bar, not an unstyled list
    header_bg = w.page.eval_on_selector(".md-header", "e => getComputedStyle(e).backgroundColor")
    assert header_bg not in ("rgba(0, 0, 0, 0)", "transparent"), header_bg
    bad = check_refs(w.page, pages_server, f"404 at {missing}", {})
    # a console error for the 404 document itself is expected; nothing else is
    errors = [e for e in w.errors if "status of 404" not in e]
    assert errors == [] and w.failed == [] and bad == [], (errors, w.failed, bad)
