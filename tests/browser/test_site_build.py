"""course.js on a real `mkdocs build` (tests/conftest.py's synthetic traces, the renderer's HTML):
the JavaScript must write exactly what the renderer writes for the same state, work from file://
and from http://127.0.0.1, and never reach the network. And every Zensical build: a throwaway
folder's (exact texts, a bad block failing with its line) and the real course's, in Chromium too."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from course_builds import quiet

from conftest import LILY, lily_trace, run_build, synthetic_trace, training_log_doc, unbound, write_project

from . import harness
from .conftest import LocalServer

pytestmark = pytest.mark.browser

LESSON = '''# Lesson

```attention
model: tiny
sentence: "Lily wanted to play with her"
pick: {rule: max-weight, from: her, to: Lily}
id: lily
```

=== "Picture"

    The grid above.

=== "Code"

    ```js
    trace.layers[2].heads[2].weights
    ```

```compare
model: tiny
sentences: ["The cat sat down", "The dog sat"]
layer: 2
head: 1
token: "#2"
```

```stepper
tokens: [Lily, her]
query: [[1, 0], [0.5, 1]]
key: [[1, 0.2], [0.1, 1]]
value: [[1, 2], [3, 4]]
```

```softmax
scores: [2.0, 1.0, 0.1]
labels: [Lily, play, her]
```

```training
model: tiny
```

```attention
model: tiny
sentence: "The cat x y"
layer: 1
head: 2
```
'''

# The same sentence with a fixed state, so the renderer writes (layer 2, head 4, token #2).
FIXED = '''# Fixed

```attention
model: tiny
sentence: "Lily wanted to play with her"
layer: 2
head: 4
token: "#2"
```

```compare
model: tiny
sentences: ["The cat sat down", "The dog sat"]
layer: 4
head: 3
token: "#3"
```
'''

XSS_TOKENS = ["The", " cat", harness.XSS, " &amp;", " <b>", " cat"]


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    root = tmp_path_factory.mktemp("site")
    traces = [lily_trace(), synthetic_trace("The cat sat down"), synthetic_trace("The dog sat"),
              synthetic_trace("The cat x y", tokens=XSS_TOKENS)]
    write_project(root, {"lesson.md": LESSON, "fixed.md": FIXED}, traces, training_log=training_log_doc())
    built = run_build(root, strict=True)
    assert built.ok, built.log[-3000:]
    server = LocalServer(built.site)
    yield built.site, server
    server.close()


def url(site, scheme: str, page: str, hash: str = "") -> str:
    root, server = site
    base = (root / page).as_uri() if scheme == "file" else f"{server.base}/{page}"
    return base + hash


def rendered(page, fig: str) -> dict:
    return page.evaluate(
        """fig => {
          const f = document.querySelector(fig);
          const t = s => Array.from(f.querySelectorAll(s)).map(e => e.textContent);
          return {summary: t('.course-summary'), top3: t('.course-top3 li'),
                  cells: t('table.course-table td'), diff: t('.course-diff tbody td')};
        }""",
        fig,
    )


@pytest.fixture
def open_site(browser, site):
    from .conftest import page_opener

    with page_opener(browser, {f"127.0.0.1:{site[1].port}"}) as open_:
        yield open_


def test_built_page_loads_clean_offline(open_site, site, scheme):
    w = open_site()
    page = w.goto(url(site, scheme, "lesson.html"))
    quiet(page)
    assert w.errors == [] and w.dialogs == [] and w.external == []
    assert page.evaluate("typeof Plotly") == "object"
    # the planted head of tests/conftest.py, as CONTRACT.md's example
    assert page.text_content("#fig-1 .course-summary") == \
        "In layer 3, head 3, ·her looks most at Lily 0.66, ·her 0.12, ·wanted 0.10."
    assert page.evaluate("[traces.length, trace.text]") == [4, LILY]
    assert page.evaluate("softmax([1, 0, 0])[0]") == pytest.approx(0.5761168847658291)


def test_js_writes_what_figures_py_writes(open_site, site):
    """the renderer's HTML for a state (JavaScript off) == course.js's DOM after moving to it."""
    server_side = open_site(js=False).goto(url(site, "file", "fixed.html"), wait_painted=False)
    expected_fig = rendered(server_side, "#fig-1")
    expected_cmp = rendered(server_side, "#fig-2")
    assert expected_fig["summary"][0].startswith("In layer 2, head 4, ·to looks most at ")
    assert len(expected_fig["cells"]) == 36 and len(expected_fig["top3"]) == 6
    assert len(expected_cmp["summary"]) == 2 and len(expected_cmp["diff"]) == 4 * 6
    page = open_site().goto(url(site, "file", "lesson.html", "#fig-1:layer=2,head=4,token=2;fig-2:layer=4,head=3,token=3"))
    assert rendered(page, "#fig-1") == expected_fig
    assert rendered(page, "#fig-2") == expected_cmp
    # and after moving there with the controls
    page = open_site().goto(url(site, "file", "lesson.html"))
    page.select_option("#fig-1 select[data-control=layer]", "1")
    page.select_option("#fig-1 select[data-control=head]", "3")
    page.select_option("#fig-1 select[data-control=token]", "2")
    assert rendered(page, "#fig-1") == expected_fig


def test_without_javascript_everything_is_readable(open_site, site):
    page = open_site(js=False).goto(url(site, "file", "lesson.html"), wait_painted=False)
    assert page.locator("#fig-1 table.course-table").is_visible()
    steps = page.locator("#fig-3 li.course-step")
    assert steps.count() == 5 and all(steps.nth(i).is_visible() for i in range(5))


def test_stepper_and_softmax_on_rendered_markup(open_site, site):
    page = open_site().goto(url(site, "file", "lesson.html"))
    assert page.text_content("#fig-3 .course-step-status") == "Step 1 of 5"
    page.click("#fig-3 button[data-action=next]")
    assert page.text_content("#fig-3 .course-step-status") == "Step 2 of 5"
    assert page.locator("#fig-3 li.course-step").nth(1).is_visible()
    assert not page.locator("#fig-3 li.course-step").nth(0).is_visible()
    page.fill("#fig-4 input[data-score='1']", "4")
    weights = harness.softmax([2.0, 4.0, 0.1])
    assert page.locator("#fig-4 output.course-weight").all_text_contents() == [f"{x:.3f}" for x in weights]


def test_code_tab_and_heavy_parts(open_site, site):
    w = open_site()
    w.page.add_init_script("window.courseConfig = {idleParts: false}")
    page = w.goto(url(site, "file", "lesson.html"))
    quiet(page)
    assert page.evaluate("trace.layers[0].heads[0].q") is None
    page.get_by_text("Code", exact=True).first.click()
    page.wait_for_function("Array.isArray(trace.layers[0].heads[0].q)")
    got = page.evaluate("""async () => { await courseReady();
      return [trace.layers[0].heads[0].q.length, trace.layers[2].heads[2].scaledMasked[0][5],
              traces.every(t => t.layers[3].attnConcat.length === t.tokens.length)]; }""")
    assert got == [6, float("-inf"), True]
    assert w.errors == []


def test_injected_token_inert_on_built_page(open_site, site, scheme):
    w = open_site()
    page = w.goto(url(site, scheme, "lesson.html"))
    page.locator("#fig-6").scroll_into_view_if_needed()
    page.wait_for_function("document.querySelector('#fig-6 .js-plotly-plot')")
    page.click("#fig-6 button[data-action=heads]")
    page.locator("#fig-6 .course-heads").wait_for(state="visible")  # the small grids, once weights.js is in
    page.select_option("#fig-6 select[data-control=token]", "2")
    page.hover("#fig-6 .nsewdrag")
    quiet(page)
    assert page.evaluate("window.__pwned") is None
    assert w.dialogs == []
    assert page.evaluate("document.querySelectorAll('article img, .md-content img').length") == 0
    assert harness.XSS in page.text_content("#fig-6 .course-summary")
    assert w.errors == []


def test_print_shows_every_tab_and_no_plot(open_site, site):
    page = open_site().goto(url(site, "file", "lesson.html"))
    page.emulate_media(media="print")
    shown = page.evaluate("""() => {
      const vis = s => Array.from(document.querySelectorAll(s)).map(e => getComputedStyle(e).display !== 'none');
      return {plots: vis('.course-plot'), blocks: vis('.tabbed-block'), steps: vis('.course-step'),
              tables: vis('table.course-table')};
    }""")
    assert shown["blocks"] and all(shown["blocks"])
    assert not any(shown["plots"])
    assert all(shown["steps"]) and all(shown["tables"])


def test_palette_switch_recolours_the_plot(open_site, site):
    page = open_site().goto(url(site, "file", "lesson.html"))
    get = "document.querySelector('#fig-1 .js-plotly-plot')._fullLayout.plot_bgcolor"
    light = page.evaluate(get)
    page.evaluate("document.body.setAttribute('data-md-color-scheme', 'slate')")
    page.wait_for_function(f"{get} !== {light!r}")
    dark = page.evaluate(get)
    assert dark.replace(" ", "") in ("#2e303e", "rgb(46,48,62)")


# ---------------------------------------------------------------- Zensical on the real course


# ---------------------------------------------------------------- Zensical, Material's successor

def zensical_skip_reason() -> str | None:
    if shutil.which("zensical") is None and not (Path(sys.executable).parent / "zensical").exists():
        return "zensical is not installed (pip install -e '.[test]')"
    return None


@pytest.mark.skipif(zensical_skip_reason() is not None, reason=zensical_skip_reason() or "")
def test_zensical_builds_the_same_config(tmp_path):
    """Zensical reads mkdocs.yml and runs the Markdown extensions (not MkDocs plugins), with the
    course's theme overrides (overrides/ uses only what both engines give templates)."""
    from test_build import LESSON, figure_count, traces

    write_project(tmp_path, {"lesson.md": LESSON}, traces(), training_log_doc())
    from generator.site import publish

    publish.write_assets(tmp_path / "content", tmp_path / "traces")
    exe = shutil.which("zensical") or str(Path(sys.executable).parent / "zensical")
    proc = subprocess.run([exe, "build", "-f", "mkdocs.yml"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    page = (tmp_path / "build" / "site" / "lesson.html").read_text(encoding="utf-8")
    assert figure_count(page) == 6 and "course-fig" in page
    assert "Intro: ·her gives Lily 0.66 in layer 3, head 3." in unbound(page)
    assert 'href="./downloads/lesson.html"' in page and "Made with" in page and "https://zensical.org/" in page  # overrides/
    assert re.sub(r"<figure.*?</figure>", "", page, flags=re.S).count("<math") == 2  # the lesson's two formulas (the stepper writes e^score in MathML too)
    # and a bad block fails it with the lesson's line
    (tmp_path / "content" / "bad.md").write_text("# Bad\n\n```attention\nmodel: bert\nsentence: a\n```\n")
    bad = subprocess.run([exe, "build", "-f", "mkdocs.yml"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert bad.returncode != 0 and "content/bad.md:4: attention: unknown model 'bert'" in bad.stdout + bad.stderr  # the `model:` line


@pytest.fixture(scope="module")
def zensical_site(tmp_path_factory):
    """`python -m generator site --engine=zensical` (make site ENGINE=zensical) on a copy of the
    course as it is: the real mkdocs.yml, overrides/, content/ and traces/, nothing rewritten."""
    import subprocess
    import sys

    from generator.bench.preview import REPO, copy_course

    if __import__("importlib").util.find_spec("zensical") is None:
        pytest.skip("zensical is not installed (pip install -e '.[test]')")
    root = copy_course(tmp_path_factory.mktemp("zensical") / "course")
    assert (root / "mkdocs.yml").read_bytes() == (REPO / "mkdocs.yml").read_bytes()
    mkdocs_site = root / "build" / "site"
    mkdocs_site.mkdir(parents=True)
    (mkdocs_site / "index.html").write_text("the MkDocs site")
    env = dict(__import__("os").environ, PYTHONPATH=str(REPO))
    proc = subprocess.run([sys.executable, "-m", "generator", "site", "--engine=zensical", "--strict=tiny"],
                          cwd=root, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (mkdocs_site / "index.html").read_text() == "the MkDocs site" and len(list(mkdocs_site.iterdir())) == 1
    assert not list(root.glob(".zensical-build-*.yml"))  # the build's config is removed
    site = root / "build" / "zensical-site"
    server = LocalServer(site)
    yield root, site, server
    server.close()


def test_zensical_builds_every_page_of_the_real_course(zensical_site):
    root, site, _ = zensical_site
    lessons = {p.relative_to(root / "content").with_suffix(".html").as_posix()
               for p in (root / "content").rglob("*.md") if "assets" not in p.parts}
    built = {p.relative_to(site).as_posix() for p in site.rglob("*.html")}
    assert lessons and lessons <= built, sorted(lessons - built)
    page = (site / "attention.html").read_text(encoding="utf-8")
    assert 'class="course-fig' in page
    assert 'href="./downloads/attention.html"' in page or "downloads/attention.html" in page  # the one-file link (overrides/main.html)
    assert "assets/stylesheets/course-a11y.css" in page  # the overrides are in
    assert (site / GENERATED_PLOTLY).is_file()
    from test_reader_language import check_script_order
    assert check_script_order(page) == []  # Zensical's bundle deferred too, after the course's scripts


GENERATED_PLOTLY = "assets/generated/plotly-cartesian.min.js"


def test_a_zensical_figure_works_in_chromium(browser, zensical_site):
    from .conftest import page_opener

    _, site, server = zensical_site
    for where in ((site / "attention.html").as_uri(), f"{server.base}/attention.html"):
        with page_opener(browser, {f"127.0.0.1:{server.port}"}) as open_:
            w = open_()
            page = w.goto(where)
            page.locator("#fig-1").scroll_into_view_if_needed()
            page.wait_for_function("document.querySelector('#fig-1 .js-plotly-plot')")
            before = page.text_content("#fig-1 .course-summary")
            other = page.evaluate("""() => { const s = document.querySelector('#fig-1 select[data-control=head]');
              return Array.from(s.options).map(o => o.value).find(v => v !== s.value); }""")
            page.select_option("#fig-1 select[data-control=head]", other)
            page.wait_for_function(f"document.querySelector('#fig-1 .course-summary').textContent !== {before!r}")
            assert w.errors == [] and w.external == []
