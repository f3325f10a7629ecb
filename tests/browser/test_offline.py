"""Offline downloads in Chromium with ALL network blocked (every request that is not file:// or
data: is aborted and counted): the unzipped course and a one-file chapter work from file://.

The course is the session's shared build (tests/course_builds.py: the repository's content
plus an injection page, traced with the tiny model, built by `python -m generator site`)."""

from __future__ import annotations

import posixpath
import re
import shutil
import zipfile
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from course_builds import INJECTION_PAGE_NAME, settle

from .conftest import failed_request, page_opener
from .figure_ids import first_of
from .test_play import typed

pytestmark = [pytest.mark.browser, pytest.mark.slow]

ZIP_ROOT = "attention-course"


@pytest.fixture(scope="module")
def unzipped(course, tmp_path_factory) -> Path:
    dest = tmp_path_factory.mktemp("unzipped")
    with zipfile.ZipFile(course / "build" / "downloads" / "course-offline.zip") as zf:
        zf.extractall(dest)
    return dest / ZIP_ROOT


@pytest.fixture
def offline(browser):
    """offline(**context options) -> Watched page that may load file:// and data: only."""
    with page_opener(browser, set(), width=1200) as open_:
        yield open_


def summary(page, fig: str) -> str:
    return page.locator(f"{fig} .course-summary").first.inner_text()


def change_head(page, fig: str) -> tuple[str, str]:
    """Pick other heads in the picker of `fig` ("#" and a figure's id) until the summary changes;
    (before, after)."""
    before = summary(page, fig)
    head = page.locator(f"{fig} select[data-control=head]").first
    current = head.input_value()
    for value in head.locator("option").evaluate_all("os => os.map(o => o.value)"):
        if value == current:
            continue
        head.select_option(value)
        # the head's part loads from its own file first: under load that takes a while
        try:
            page.wait_for_function("([sel, before]) => { const s = document.querySelector(sel); return !!s && s.innerText !== before; }",
                                   arg=[f"{fig} .course-summary", before])
        except PlaywrightTimeout:
            continue  # this head's summary reads the same
        return before, summary(page, fig)
    return before, summary(page, fig)


def test_the_zip_is_the_site_without_downloads_and_every_local_link_resolves(course, unzipped):
    site = course / "build" / "site"
    in_site = {p.relative_to(site).as_posix() for p in site.rglob("*") if p.is_file()}
    in_zip = {p.relative_to(unzipped).as_posix() for p in unzipped.rglob("*") if p.is_file()}
    assert in_zip == {p for p in in_site if not p.startswith("downloads/") and not p.endswith(".map") and p != "404.html"}
    missing = []
    for page in sorted(unzipped.rglob("*.html")):
        text = page.read_text(encoding="utf-8")
        assert "course-offline.zip" not in text and "downloads/" not in text, f"{page.name} links to a download not in the zip"
        for url in re.findall(r'\b(?:href|src|data-parts)="([^"#?]+)', text):
            if re.match(r"^[a-z][a-z0-9+.-]*:", url) or url.startswith("/"):
                continue
            target = (page.parent / unquote(url)).resolve()
            if not target.exists():
                missing.append(f"{page.relative_to(unzipped)} -> {url}")
    assert not missing, f"links to files not in the zip: {missing[:20]}"


def test_hosted_pages_link_to_the_zip_and_chapters_to_their_one_file_copy(course):
    site = course / "build" / "site"
    for page in sorted(site.glob("*.html")):
        if page.name == "404.html":
            continue
        text = page.read_text(encoding="utf-8")
        links = [posixpath.normpath(u) for u in re.findall(r'href="([^"]*downloads/[^"]+)"', text)]
        assert "downloads/course-offline.zip" in links, f"{page.name}: no link to the zip"
        if 'class="course-fig' in text:
            assert f"downloads/{page.name}" in links, f"{page.name}: no link to its one-file copy"
        for url in links:
            assert (page.parent / url).is_file(), f"{page.name}: {url} does not exist"


def test_unzipped_course_works_from_file_with_no_network(unzipped, offline):
    w = offline()
    page = w.goto((unzipped / "attention.html").as_uri())
    fig = "#" + first_of(unzipped / "attention.html", "attention")
    page.wait_for_selector(f"{fig} .course-plot .main-svg")
    before, after = change_head(page, fig)
    assert before != after, "changing the head did not change the summary"
    assert page.locator("math").count() > 0, "the formulas (MathML) are missing"
    # search: the offline plugin's inlined index, the worker through the vendored iframe-worker shim
    page.locator("input.md-search__input").press_sequentially("softmax", delay=20)
    page.wait_for_selector(".md-search-result__item")
    assert "matching document" in page.inner_text(".md-search-result__meta")
    links = page.locator(".md-search-result__link").evaluate_all("as => as.map(a => a.href)")
    assert links and all(urlparse(h).scheme == "file" for h in links)
    assert not [e for e in w.errors if "favicon" not in e], w.errors


def test_every_page_of_the_zip_opens_without_network(unzipped, offline):
    w = offline()
    failed: list[str] = []
    w.page.on("requestfailed", lambda r: (f := failed_request(r)) and failed.append(f))
    for html in sorted(unzipped.glob("*.html")):
        if html.name == INJECTION_PAGE_NAME.replace(".md", ".html"):
            continue  # a test page (test_injection.py opens it), with ~10 MB of heavy parts
        w.goto(html.as_uri(), wait_painted=False)
        settle(w.page)
        w.page.evaluate("courseReady && courseReady()")  # the heavy parts too
    assert not failed, f"files the pages asked for that are not in the zip: {failed}"
    assert not w.errors, w.errors


@pytest.mark.parametrize("chapter", ["attention.html", "injection.html"])
def test_one_file_chapter_alone_works_with_no_other_file(course, chapter, offline, tmp_path):
    alone = tmp_path / chapter
    shutil.copy(course / "build" / "site" / "downloads" / chapter, alone)
    w = offline()
    page = w.goto(alone.as_uri())
    fig = "#" + first_of(alone, "attention")
    page.wait_for_selector(f"{fig} .course-plot .main-svg")
    before, after = change_head(page, fig)
    assert before != after
    # the heavy parts are inline: courseReady() resolves without loading anything
    n = page.evaluate("async () => { await courseReady(); return traces.filter(t => t.layers[0].heads[0].q).length }")
    assert n == page.evaluate("traces.length") > 0
    requested = [u for u in w.requests if not u.startswith("data:")]
    assert requested == [alone.as_uri()], f"the one-file chapter asked for other files: {requested}"
    assert not w.errors, w.errors
    if chapter == "attention.html":
        assert page.locator("math").count() > 0
        assert page.locator(".tabbed-set").count() > 0 and page.locator("table.course-table").count() > 0


def test_download_sizes_are_reported(course, capsys):
    """Not a check: prints the sizes `python -m generator site` reported (raw and gzipped)."""
    lines = [line for line in (course / "build" / "site.log").read_text(encoding="utf-8").splitlines() if line.startswith("downloads:")]
    assert lines
    with capsys.disabled():
        print("\n" + "\n".join(lines))


def test_the_playground_runs_the_model_in_the_unzipped_course(unzipped, offline):
    """The zip's play.html from file://, no network: a sentence the reader types is tokenized,
    run (its weights from the zip's own play-model.js) and drawn, with its scores."""
    w = offline()
    page = w.goto((unzipped / "play.html").as_uri())
    page.locator("#fig-1 .course-plot .main-svg").first.wait_for(state="attached", timeout=60000)
    typed(page, "The cat sat on the mat")
    rows = page.eval_on_selector_all("#fig-1 .course-axis-queries text", "ts => ts.map(t => t.textContent)")
    assert rows[0] == "‹eot›" and "".join(rows[1:]).replace("·", " ") == "The cat sat on the mat", rows
    assert not w.requests or all(urlparse(r).scheme in ("file", "data", "blob") for r in w.requests), w.requests
    assert not [e for e in w.errors if "favicon" not in e], w.errors
