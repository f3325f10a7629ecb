"""`make serve` and what is not a lesson's mistake: a mkdocs.yml saved broken (YAML, a nav entry
that names no page, an extension the course needs left out) is one line at mkdocs.yml's own line,
in the terminal and in the box over the page, and its fix takes the box away; a deleted lesson's
page is no longer served; a download link opens the page that says how to make the downloads.
On a small copy of the course (the repository's mkdocs.yml and theme, committed traces), tracing
off."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from generator.bench.preview import serving

from catalogue import LILY_LESSON, get_url as get, mkdocs_yml, served_course

pytestmark = [pytest.mark.browser, pytest.mark.slow]

OTHER = "# Other\n\nA lesson that the author deletes.\n"
NAV = "nav:\n  - Home: index.md\n  - Lily: lily.md\n  - Other: other.md\n  - Glossary: glossary.md\n\ntheme:\n"


def project(root: Path, nav: bool = False) -> Path:
    yml = mkdocs_yml()
    return served_course(root, {"lily.md": LILY_LESSON, "other.md": OTHER}, yml.replace("\ntheme:\n", "\n" + NAV, 1) if nav else yml)


def box_line(html: str) -> str | None:
    """The overlay's one line in a served page, or None when there is no box."""
    m = re.search(r'class="course-build-error-line"[^>]*>(.*?)</', html, re.S)
    if 'id="course-build-error"' not in html:
        return None
    import html as h

    return h.unescape(m.group(1)).strip() if m else ""


def line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.split("\n"), 1) if needle in line)


def test_a_broken_mkdocs_yml_is_in_the_box_at_its_line_and_its_fix_clears_it(tmp_path):
    root = project(tmp_path / "course", nav=True)
    config = root / "mkdocs.yml"
    good = config.read_text(encoding="utf-8")
    unclosed = good.replace("  - Lily: lily.md\n", '  - "Lily: lily.md\n')
    typo = good.replace("  - Lily: lily.md\n", "  - Lily: lilly.md\n")
    no_details = re.sub(r"(?m)^  - pymdownx\.details\n", "", good)
    cases = [  # the broken file, the line it must name, words of the problem
        (unclosed, f"mkdocs.yml:{line_of(unclosed, 'Lily: lily.md')}: malformed YAML at column 5: this \" is never closed"),
        (typo, f"mkdocs.yml:{line_of(typo, 'lilly.md')}: the nav lists lilly.md, which is not in content"),
        (no_details, f"mkdocs.yml:{line_of(no_details, 'markdown_extensions:')}: markdown_extensions lacks pymdownx.details"),
    ]
    with serving(root, ("--no-trace",)) as server:
        status, html = get(f"{server.url}/lily.html")
        assert status == 200 and box_line(html) is None
        for broken, says in cases:
            mark = len(server.log())
            config.write_text(broken, encoding="utf-8")
            log = server.wait_for_log(says, mark)
            said = [x for x in log.splitlines() if says in x]
            assert len(said) == 1 and "Fix: " in said[0], log  # the terminal: one line
            status, html = get(f"{server.url}/lily.html")
            assert status == 200 and "course-fig" in html, "the last good page stays behind the box"
            line = box_line(html)
            assert line is not None and line.startswith(says) and line in said[0], (line, said[0])  # the same line
            assert "content/" not in line, line
            assert "Traceback" not in log, log
            mark = len(server.log())
            config.write_text(good, encoding="utf-8")
            server.wait_for_log("Reloading browsers", mark)
            assert box_line(get(f"{server.url}/lily.html")[1]) is None, "the fix takes the box away"


def test_a_deleted_lesson_is_no_longer_served_and_a_nav_that_still_names_it_is_an_error(tmp_path):
    root = project(tmp_path / "course")
    with serving(root, ("--no-trace",)) as server:
        assert get(f"{server.url}/other.html")[0] == 200
        mark = len(server.log())
        (root / "content" / "other.md").unlink()
        server.wait_for_log("Reloading browsers", mark)
        status, html = get(f"{server.url}/other.html")
        assert status == 404, "a deleted lesson's page was still served"
        assert "Other" not in get(f"{server.url}/index.html")[1], "its menu entry stays"
        assert get(f"{server.url}/lily.html")[0] == 200

    root = project(tmp_path / "with-nav", nav=True)
    config = (root / "mkdocs.yml").read_text(encoding="utf-8")
    with serving(root, ("--no-trace",)) as server:
        assert get(f"{server.url}/other.html")[0] == 200
        mark = len(server.log())
        (root / "content" / "other.md").unlink()
        says = f"mkdocs.yml:{line_of(config, 'other.md')}: the nav lists other.md, which is not in content"
        server.wait_for_log(says, mark)
        assert says in (box_line(get(f"{server.url}/lily.html")[1]) or "")
        mark = len(server.log())
        (root / "mkdocs.yml").write_text(config.replace("  - Other: other.md\n", ""), encoding="utf-8")  # the author's fix
        server.wait_for_log("Reloading browsers", mark)
        assert get(f"{server.url}/other.html")[0] == 404
        assert box_line(get(f"{server.url}/lily.html")[1]) is None


def test_a_download_link_in_the_preview_opens_the_page_that_says_how_to_make_it(tmp_path, open_served):
    """Chromium cancelled the `<a download>` link's 404 without a word; in the preview the link
    has no download attribute, and the page it opens says what makes the downloads."""
    root = project(tmp_path / "course")
    with serving(root, ("--no-trace",)) as server:
        status, html = get(f"{server.url}/lily.html")
        links = re.findall(r'<a [^>]*href="(?:\./)?downloads/[^"]*"[^>]*>', html)
        assert links and not [a for a in links if re.search(r"\sdownload(?:[\s=>])", a)], links
        w = open_served(server)()
        page = w.goto(f"{server.url}/lily.html")
        page.locator('a[href$="lily-notebook.zip"]').first.click()
        page.wait_for_function("() => document.title.includes('make site')", timeout=30000)
        assert "notebook" in page.inner_text("body")


def test_a_deleted_or_renamed_lesson_makes_a_full_build(tmp_path):
    """A dirty build rebuilds changed pages only and removes none: a lesson gone from content/
    needs a full one (made in a fresh folder), or its old page is served on."""
    from generator.site import serve, serve_changes

    content, traces, site = tmp_path / "content", tmp_path / "traces", tmp_path / "site"
    content.mkdir()
    (traces / "tiny").mkdir(parents=True)
    site.mkdir()
    for name in ("a.md", "b.md"):
        (content / name).write_text("# A page\n", encoding="utf-8")
    r = serve_changes.Rebuilds(content.resolve(), traces.resolve(), site)
    r.stamp = serve.store_stamp(traces)
    r.note(str(content / "a.md"))
    assert r.dirty([], None)  # an edit: dirty
    (content / "b.md").unlink()
    r.note(str(content / "b.md"))
    assert not r.dirty([], None)  # deleted: full
    (content / "a.md").rename(content / "c.md")
    r.note(str(content / "a.md"))
    r.note(str(content / "c.md"))
    assert not r.dirty([], None)  # renamed: full
