"""generator/site/downloads.py on a small synthetic site (no mkdocs, no browser): the zip is
deterministic and complete, the one-file chapter holds everything it needs and nothing else."""

from __future__ import annotations

import hashlib
import re
import shutil
import zipfile
from pathlib import Path

import pytest

from conftest import REPO
from generator.site import downloads as dl

PAGE = """<!doctype html>
<html lang="en" class="no-js">
<head><meta charset="utf-8"><title>Attention - Course</title>
<script>document.documentElement.classList.add("course-js")</script>
<link rel="preload" href="{up}assets/generated/plotly.min.js" as="script">
<link rel="stylesheet" href="{up}assets/stylesheets/main.css">
<link rel="stylesheet" href="{up}assets/generated/course.css">
<script src="{up}assets/javascripts/iframe-worker-shim.js"></script>
</head>
<body dir="ltr" data-md-color-scheme="default" data-md-color-primary="indigo">
<script data-course-palette>window.pickedPalette=[{{"media": "(prefers-color-scheme: dark)"}}]</script>
<header class="md-header"><a href="{up}index.html">Home</a>
<form class="md-header__option" data-md-component="palette">
<input class="md-option" data-md-color-media="(prefers-color-scheme: light)" data-md-color-scheme="default" data-md-color-primary="indigo" data-md-color-accent="indigo" aria-label="Switch to dark mode" type="radio" name="__palette" id="__palette_0">
<label class="md-header__button md-icon" for="__palette_1">dark</label>
<input class="md-option" data-md-color-media="(prefers-color-scheme: dark)" data-md-color-scheme="slate" data-md-color-primary="indigo" data-md-color-accent="indigo" aria-label="Switch to light mode" type="radio" name="__palette" id="__palette_1">
<label class="md-header__button md-icon" for="__palette_0" hidden>light</label>
</form>
<script>var palette=__md_get("__palette")</script>
</header>
<main class="md-main"><div class="md-content">
<article class="md-content__inner md-typeset">
<h1>Attention</h1>
<p>See <a href="{up}index.html#intro">the start</a> and <a href="#fig-1">the grid</a>.</p>
<img src="{up}assets/dot.png" alt="a dot">
{figures}
<!-- course:onefile-link --><p class="course-download"><a href="{up}downloads/x.html">one file</a></p><!-- /course:onefile-link -->
</article>
</div></main>
<footer><!-- course:zip-link --><a href="{up}downloads/course-offline.zip">zip</a><!-- /course:zip-link --></footer>
<script src="{up}assets/javascripts/bundle.0123abcd.min.js"></script>
<script src="{up}assets/generated/plotly.min.js"></script>
<script src="{up}assets/generated/course.js"></script>
</body></html>
"""

FIG = ('<figure class="course-fig" id="fig-{n}" data-kind="attention" data-parts="{up}assets/generated/traces/tiny/{key}">'
       '<div class="course-plot" aria-hidden="true"></div>'
       '<figcaption><a href="{up}assets/generated/traces/tiny/{key}.json" download>trace JSON</a></figcaption></figure>')


PREFIX = "window.courseTraceParts = window.courseTraceParts || {};"


def make_site(root: Path) -> Path:
    site = root / "site"
    files = {
        "assets/stylesheets/main.css": "body{color:#000}.x::after{content:'</style>'}",
        "assets/generated/course.css": ".course-plot{min-height:1px}",
        "assets/javascripts/iframe-worker-shim.js": "/* shim */",
        "assets/javascripts/bundle.0123abcd.min.js": "/* material */",
        "assets/javascripts/bundle.0123abcd.min.js.map": "{}",
        "assets/generated/plotly.min.js": "var Plotly={};/* '</script>' inside a string */",
        "assets/generated/course.js": "window.courseLoaded=true;",
        # each trace's part folder (render/assets.py head_parts): weights.js and one file a head
        **{f"assets/generated/traces/tiny/{key}/{name}.js": f'{PREFIX}\nwindow.courseTraceParts["{key}/{name}"] = {{}};\n'
           for key in ("aaaaaaaaaaaa", "bbbbbbbbbbbb", "cccccccccccc") for name in ("weights", "0-0", "0-1", "1-0", "1-1")},
        "assets/generated/traces/tiny/aaaaaaaaaaaa.json": "{}",
        "search/search_index.js": "var __index = {}",
        "404.html": "<html lang=en><title>404</title><body>nope</body></html>",
    }
    for rel, text in files.items():
        p = site / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    (site / "assets/dot.png").write_bytes(b"\x89PNG\r\n\x1a\nfake")
    figs = FIG.format(n=1, up="", key="aaaaaaaaaaaa") + FIG.format(n=2, up="", key="bbbbbbbbbbbb") + FIG.format(n=3, up="", key="aaaaaaaaaaaa")
    (site / "index.html").write_text(PAGE.format(up="", figures="<p>No figures here.</p>"), encoding="utf-8")
    (site / "attention.html").write_text(PAGE.format(up="", figures=figs), encoding="utf-8")
    (site / "part").mkdir()
    (site / "part/deep.html").write_text(
        PAGE.format(up="../", figures=FIG.format(n=1, up="../", key="cccccccccccc")), encoding="utf-8")
    return site


def test_one_file_chapters_are_made_for_pages_with_figures_only(tmp_path):
    site = make_site(tmp_path)
    report = dl.build_downloads(site, tmp_path / "out", log=None)
    assert sorted(report.chapters) == ["attention.html", "part/deep.html"]
    assert sorted(p.name for p in (site / "downloads").iterdir()) == ["attention.html", "course-offline.zip", "part-deep.html"]
    for info in report.chapters.values():
        assert 0 < info["gzipBytes"] < info["bytes"]


def test_scripts_placed_after_the_first_heatmap_are_inlined_once_after_the_article(tmp_path):
    """The site runs the course's scripts right after a page's first heatmap (a block marked
    course:scripts, overrides/main.html); the one-file chapter cuts that block from its article
    and inlines each script once after it, the heavy parts first."""
    site = make_site(tmp_path)
    page = site / "attention.html"
    text = page.read_text(encoding="utf-8")
    tags = '<script src="assets/generated/plotly.min.js"></script>\n<script src="assets/generated/course.js"></script>\n'
    assert tags in text
    block = ("<!-- course:scripts -->" + tags.replace("\n", "")
             + '<script>window.course || document.documentElement.classList.remove("course-js")</script><!-- /course:scripts -->')
    first_end = text.index("</figure>") + len("</figure>")
    page.write_text(text[:first_end] + block + text[first_end:].replace(tags, ""), encoding="utf-8")
    out = dl.build_onefile(site, "attention.html")
    article = out[out.index("<article"):out.index("</article>")]
    assert "course:scripts" not in article and "<script" not in article.replace('<script type="application/json"', "")
    assert out.count("window.courseLoaded") == 1 and out.count("var Plotly={}") == 1
    assert out.index("</article>") < out.index('courseTraceParts["bbbbbbbbbbbb/0-0"]') < out.index("var Plotly={}") < out.index("window.courseLoaded")
    assert out.count('window.course || document.documentElement.classList.remove("course-js")') == 1


def test_one_file_chapter_inlines_everything_and_only_its_own_data(tmp_path):
    site = make_site(tmp_path)
    dl.build_downloads(site, tmp_path / "out", log=None)
    text = (site / "downloads/attention.html").read_text(encoding="utf-8")
    # nothing to fetch: no stylesheet links, no script src, images are data: URIs
    assert not re.search(r"<link\b[^>]*stylesheet", text)
    assert not re.search(r"<script\b[^>]*\bsrc=", text)
    # nor a preload of a file the download does not have; the one link is the icon, inline (the
    # test page has none: "data:,", so the browser asks no server for /favicon.ico)
    assert re.findall(r"<link\b[^>]*>", text) == ['<link rel="icon" href="data:,">']
    # course-js is set before any style (the first frame has the figures' layout), and taken off
    # again after the scripts if course.js did not run
    first_style = text.index("<style>")
    assert text.index('classList.add("course-js")') < first_style
    assert text.index("window.courseLoaded") < text.index('window.course || document.documentElement.classList.remove("course-js")')
    assert re.search(r'<img src="data:image/png;base64,[A-Za-z0-9+/=]+" alt="a dot">', text)
    # this page's parts, every file of each part folder once, in order; not the other page's
    for key in ("aaaaaaaaaaaa", "bbbbbbbbbbbb"):
        at = [text.index(f'courseTraceParts["{key}/{name}"]') for name in ("weights", "0-0", "0-1", "1-0", "1-1")]
        assert at == sorted(at) and all(text.count(f'courseTraceParts["{key}/{name}"]') == 1 for name in ("weights", "1-1"))
    assert text.count(PREFIX) == 2  # once a trace: the one-file chapter joins a folder's parts in one script
    assert "cccccccccccc" not in text
    # parts come before course.js, Material's app and the worker shim are left out
    assert text.index('courseTraceParts["bbbbbbbbbbbb/1-1"]') < text.index("window.courseLoaded")
    assert "/* material */" not in text and "/* shim */" not in text
    # the closing tags inside the inlined code cannot end the elements early
    assert "'<\\/script>' inside a string" in text and "content:'<\\/style>'" in text
    assert len(re.findall(r"</script>", text, re.I)) == len(re.findall(r"<script\b", text, re.I))
    # relative links now start from downloads/; in-page links unchanged; no link to itself
    assert 'href="../index.html#intro"' in text and 'href="#fig-1"' in text
    assert 'href="../assets/generated/traces/tiny/aaaaaaaaaaaa.json"' in text
    assert "course-download" not in text and "course-offline.zip" not in text
    assert '<html lang="en">' in text and "<title>Attention - Course</title>" in text
    assert 'data-md-color-scheme="default"' in text and "<main" in text and "<header" in text


def test_one_file_chapter_picks_its_palette_with_the_pages_script(tmp_path):
    site = make_site(tmp_path)
    dl.build_downloads(site, tmp_path / "out", log=None)
    text = (site / "downloads/attention.html").read_text(encoding="utf-8")
    body = text[text.index("<body"):]
    # overrides/main.html's script (the options written into it), first in the body, so before
    # the first frame; Material's toggle and its own palette script are left out
    assert body.index('window.pickedPalette=[{"media": "(prefers-color-scheme: dark)"}]') < body.index("<header")
    assert body.index("<script>window.pickedPalette") < body.index(">", body.index("<body")) + 3
    assert "__md_get" not in text and "<input" not in body and "<label" not in body


def test_one_file_chapter_without_a_palette_has_no_picker(tmp_path):
    site = make_site(tmp_path)
    for page in ("attention.html", "part/deep.html"):
        p = site / page
        p.write_text(re.sub(r"<script data-course-palette>.*?</script>", "", p.read_text()), encoding="utf-8")
    dl.build_downloads(site, tmp_path / "out", log=None)
    text = (site / "downloads/attention.html").read_text(encoding="utf-8")
    assert "pickedPalette" not in text


def test_nested_pages_rebase_links_from_their_own_folder(tmp_path):
    site = make_site(tmp_path)
    dl.build_downloads(site, tmp_path / "out", log=None)
    text = (site / "downloads/part-deep.html").read_text(encoding="utf-8")
    assert 'href="../index.html#intro"' in text
    assert 'data-parts="../assets/generated/traces/tiny/cccccccccccc"' in text
    assert 'courseTraceParts["cccccccccccc/1-1"]' in text
    # the banner says which links work where: a relative link needs the whole course beside it
    assert "need the whole course" in text and "hosted course" not in text



def test_with_a_site_url_one_file_links_are_absolute(tmp_path):
    """A one-file chapter opened alone (from disk, mailed) still reaches the glossary, the other
    chapters and the trace JSON: on the hosted site, by absolute URL."""
    site = make_site(tmp_path)
    dl.build_downloads(site, tmp_path / "out", log=None, site_url="https://user.github.io/course/")
    text = (site / "downloads/attention.html").read_text(encoding="utf-8")
    assert 'href="https://user.github.io/course/index.html#intro"' in text
    assert 'href="https://user.github.io/course/assets/generated/traces/tiny/aaaaaaaaaaaa.json"' in text
    assert 'href="#fig-1"' in text  # in-page links stay
    assert "open the hosted course and need the network" in text and "the glossary" in text
    assert not re.search(r'href="\.\./', text)
    nested = (site / "downloads/part-deep.html").read_text(encoding="utf-8")
    assert 'href="https://user.github.io/course/index.html#intro"' in nested
    assert 'href="https://user.github.io/course/assets/generated/traces/tiny/cccccccccccc.json"' in nested
    # the figure data is inlined: its data-parts attribute is not a link a reader follows
    assert 'data-parts="../assets/generated/traces/tiny/cccccccccccc"' in nested
    # the zip is the same with or without: its pages keep their relative links
    plain = tmp_path / "plain"
    dl.build_downloads(make_site(plain), plain / "out", log=None)
    assert (tmp_path / "out" / dl.ZIP_NAME).read_bytes() == (plain / "out" / dl.ZIP_NAME).read_bytes()


def zip_listing(path: Path):
    with zipfile.ZipFile(path) as zf:
        return [(i.filename, i.date_time, i.external_attr >> 16, i.create_system, i.compress_type) for i in zf.infolist()]


def test_zip_is_complete_sorted_and_fixed(tmp_path):
    site = make_site(tmp_path)
    report = dl.build_downloads(site, tmp_path / "out", log=None)
    listing = zip_listing(report.zip_path)
    names = [n for n, *_ in listing]
    assert names == sorted(names)
    assert all(n.startswith("attention-course/") for n in names)
    assert "attention-course/index.html" in names and "attention-course/attention.html" in names
    assert not any(n.startswith("attention-course/downloads/") for n in names), "no zip in the zip, no one-file copies"
    assert not any(n.endswith(".map") for n in names), "source maps are left out"
    assert {(d, m, s, c) for _, d, m, s, c in listing} == {((1980, 1, 1, 0, 0, 0), 0o100644, 3, zipfile.ZIP_DEFLATED)}
    expected = {f"attention-course/{p.relative_to(site).as_posix()}" for p in site.rglob("*") if p.is_file()}
    expected = {n for n in expected if "/downloads/" not in n} - {
        "attention-course/assets/javascripts/bundle.0123abcd.min.js.map", "attention-course/404.html"}
    assert set(names) == expected
    with zipfile.ZipFile(report.zip_path) as zf:
        page = zf.read("attention-course/attention.html").decode()
        assert "course-offline.zip" not in page and "course:zip-link" not in page
        assert "downloads/x.html" not in page and "course:onefile-link" not in page
        assert zf.read("attention-course/search/search_index.js") == b"var __index = {}"
    assert (site / "downloads/course-offline.zip").read_bytes() == report.zip_path.read_bytes()
    assert "course-offline.zip" in (site / "attention.html").read_text(), "the hosted page keeps its link"


def test_zip_and_chapters_are_byte_identical_across_builds(tmp_path):
    digests = []
    for name in ("a", "b"):
        site = make_site(tmp_path / name)
        report = dl.build_downloads(site, tmp_path / name / "out", log=None)
        files = sorted(p for p in (site / "downloads").iterdir())
        digests.append({p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in files}
                       | {"zip": hashlib.sha256(report.zip_path.read_bytes()).hexdigest()})
    assert digests[0] == digests[1]


def test_rebuilding_downloads_in_place_gives_the_same_zip(tmp_path):
    site = make_site(tmp_path)
    first = dl.build_downloads(site, tmp_path / "out", log=None).zip_path.read_bytes()
    second = dl.build_downloads(site, tmp_path / "out", log=None).zip_path.read_bytes()
    assert first == second, "the zip must not pick up the previous zip or its own copy"


def test_missing_site_or_figure_data_is_one_line(tmp_path):
    with pytest.raises(dl.DownloadError, match=r"no index\.html; build the site first \(make site\)$"):
        dl.build_downloads(tmp_path / "nothing", tmp_path / "out")
    site = make_site(tmp_path)
    shutil.rmtree(site / "assets/generated/traces/tiny/bbbbbbbbbbbb")
    with pytest.raises(dl.DownloadError) as info:
        dl.build_onefile(site, "attention.html")
    assert str(info.value) == "attention.html: figure data assets/generated/traces/tiny/bbbbbbbbbbbb is missing from the build"
    # in the site build it is a warning: the downloads are still made
    report = dl.build_downloads(site, tmp_path / "out", log=None)
    assert report.warnings == ["attention.html: figure data assets/generated/traces/tiny/bbbbbbbbbbbb is missing from the build; "
                               "the one-file chapter (and the hosted page) will lack that figure's q, k, v"]
    assert 'courseTraceParts["aaaaaaaaaaaa/0-0"]' in (site / "downloads/attention.html").read_text()


def test_script_text_escapes_closing_tags_and_comment_openers():
    assert dl.script_text('a="</script><!--"; b="</SCRIPT>"') == 'a="<\\/script><\\!--"; b="<\\/SCRIPT>"'


def test_two_pages_that_would_download_under_one_name_stop_the_build(tmp_path, monkeypatch, capsys):
    from generator.site import downloads, publish

    assert downloads.name_clash(["part-ch.html", "part/ch.html", "index.html"]) == (
        "content/part-ch.md and content/part/ch.md would both download as downloads/part-ch.html. Fix: rename one of them")
    assert downloads.name_clash(["part/ch.html", "part/ch2.html", "part-x.html"]) is None
    (tmp_path / "content" / "part").mkdir(parents=True)
    for name in ("index.md", "part-ch.md", "part/ch.md"):
        (tmp_path / "content" / name).write_text("# A page\n")
    repo_yml = (REPO / "mkdocs.yml").read_text(encoding="utf-8").replace("custom_dir: overrides", f"custom_dir: {REPO / 'overrides'}")
    repo_yml = re.sub(r"(?m)^nav:\n(?:[ \t]+[^\n]*\n)*", "", repo_yml)  # these three pages, not the course's
    repo_yml = re.sub(r"(?m)^  - generator\.markdown\.lesson\n", "", repo_yml)  # nor its glossary, whose terms these pages lack
    (tmp_path / "mkdocs.yml").write_text(re.sub(r"(?m)^site_dir: .*$", "site_dir: out", repo_yml), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert publish.build_site("mkdocs.yml") == 1
    err = capsys.readouterr().err
    assert "error: content/part-ch.md and content/part/ch.md would both download as downloads/part-ch.html" in err
    assert not (tmp_path / "out").exists()
