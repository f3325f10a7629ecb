"""mkdocs.yml is checked first: an extension the course needs (generator/site/config_check.py
NEEDED), an option it relies on, or a figure's fence left out or miswired is one line naming
mkdocs.yml, its line and the extension, before any page is read, in `make site` and `make check`
alike (tests/browser/test_serve_config.py: `make serve`). A YAML mistake names the line and column
where it was made, in one line, with exit status 1."""

from __future__ import annotations

import contextlib
import io
import logging
import os
import re
from pathlib import Path

import pytest

from catalogue import GLOSSARY, mkdocs_yml

from generator.site import config_check, publish

# a lesson mistake too: the mkdocs.yml line must come first, and alone
LESSON = "# Lily\n\n```attention\nmodel: tiny\nsentence: \"Lily wanted to play with her\"\nlayer: 9\nhead: 3\n```\n"


def drop(text: str, name: str) -> str:
    """mkdocs.yml without the extension `name` (its list item and its options)."""
    out = re.sub(rf"(?m)^  - {re.escape(name)}:?\n(?:      .*\n|        .*\n)*", "", text, count=1)
    assert out != text, name
    return out


CASES = {f"no {n.name}": (lambda text, n=n: drop(text, n.name), n.name) for n in config_check.NEEDED}
CASES["tabbed without alternate_style"] = (lambda text: text.replace("alternate_style: true", "alternate_style: false"), "alternate_style")
CASES["a kind's fence left out"] = (lambda text: re.sub(r"(?m)^        - name: lens\n(?:          .*\n)*", "", text), "`lens`")
CASES["a kind's fence miswired"] = (lambda text: text.replace("        - name: map\n          class: course\n          format: !!python/name:generator.markdown.course.fence_format",
                                                             "        - name: map\n          class: course\n          format: !!python/name:pymdownx.superfences.fence_code_format"), "`map`")

# settings the theme writes into every page as they are (the edit, what the line says)
CASES.update({
    "site_name with a quote": (lambda t: re.sub(r"(?m)^site_name: .*$", "site_name: 'x\" onmouseover=\"alert(1)'", t, count=1),
                               "site_name holds '\"', which the theme writes into every page's HTML as it is"),
    "a script that is not the course's": (lambda t: t.replace("    - assets/generated/course.js\n", "    - assets/generated/course2.js\n", 1),
                                          "extra.course_scripts names 'assets/generated/course2.js', which is not one of the course's scripts"),
    "a script address": (lambda t: t.replace("    - assets/generated/course.js\n", "    - \"javascript:alert(1)\"\n", 1),
                         "extra.course_scripts names 'javascript:alert(1)'"),
    "scripts not a list": (lambda t: re.sub(r"(?m)^  course_scripts:.*\n(    - .*\n)+", "  course_scripts: 5\n", t, count=1),
                           "extra.course_scripts is not a list of the course's scripts"),
    "traces_dir a file": (lambda t: t.replace("      traces_dir: traces\n", "      traces_dir: mkdocs.yml\n", 1),
                          "traces_dir 'mkdocs.yml' is a file, not the folder of trace files"),
    "a nav page outside the lessons": (lambda t: with_nav(t).replace("  - Home: index.md\n", "  - Home: index.md\n  - Up: ../mkdocs.yml\n", 1),
                                       "the nav lists ../mkdocs.yml, which is outside content"),
    "a nav link that runs script": (lambda t: with_nav(t).replace("  - Home: index.md\n", "  - Home: index.md\n  - Ext: javascript:alert(1)\n", 1),
                                    "the nav links to 'javascript:alert(1)', which is not an http(s) or mailto address"),
})


def project(root: Path, yml: str) -> Path:
    (root / "content").mkdir(parents=True)
    (root / "content" / "index.md").write_text("# Home\n\nIt takes {{ page.minutes }} minutes.\n", encoding="utf-8")
    (root / "content" / "glossary.md").write_text("# Glossary\n\n[[glossary]]\n", encoding="utf-8")
    (root / "content" / "glossary.yml").write_text(GLOSSARY, encoding="utf-8")
    (root / "content" / "lily.md").write_text(LESSON, encoding="utf-8")
    (root / "mkdocs.yml").write_text(yml, encoding="utf-8")
    (root / "traces").mkdir()
    return root


def run_in(root: Path, command: list[str]) -> tuple[int, list[str]]:
    """`python -m generator COMMAND` in this process, in `root`: (status, the stderr's lines)."""
    from generator import cli

    logger = logging.getLogger("mkdocs")
    err = io.StringIO()
    cwd = os.getcwd()
    os.chdir(root)
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(err):
            rc = cli.main(command)
    finally:
        os.chdir(cwd)
        for h in [h for h in logger.handlers if getattr(h, "_course", False)]:
            logger.removeHandler(h)
    return rc, err.getvalue().splitlines()


def test_the_repository_s_mkdocs_yml_has_everything_the_course_needs():
    from generator.site import check

    os.chdir(Path(__file__).resolve().parents[1])
    cfg = check.read_config("mkdocs.yml")
    assert config_check.extensions_problem(cfg, "mkdocs.yml") is None
    assert [n.name for n in config_check.needed(cfg["docs_dir"])] == [n.name for n in config_check.NEEDED]


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("command", [["check", "--no-cache"], ["site", "--no-downloads"], ["site", "--engine", "zensical"]],
                         ids=["check", "site", "zensical"])
def test_a_missing_extension_option_or_fence_is_one_line_naming_mkdocs_yml_first(tmp_path, case, command):
    """The same line from check, site and the Zensical build (which reads mkdocs.yml itself and
    wrote a site_name's markup and a javascript: script into every page before it asked)."""
    if "zensical" in command:
        pytest.importorskip("zensical")
    edit, named = CASES[case]
    good = mkdocs_yml()
    broken = edit(good)
    assert broken != good, case
    root = project(tmp_path / "course", broken)
    rc, err = run_in(root, command)
    errors = [e for e in err if e.startswith("error: ")]
    assert rc == 1 and len(errors) == 1, err
    line = errors[0]
    assert re.match(r"error: mkdocs\.yml:\d+: ", line) and named in line and "Fix: " in line, line
    n = int(line.split(":")[2])
    assert 1 <= n <= broken.count("\n")
    assert "content/" not in line and not (root / "build").exists() and not (root / "site").exists()


def test_the_lesson_extension_is_needed_only_with_a_glossary(tmp_path):
    """The tests' small projects build without it (no glossary.yml); the course, which has one,
    must list it."""
    cfg = {"markdown_extensions": [n.name for n in config_check.NEEDED if n.name != "generator.markdown.lesson"],
           "mdx_configs": {"pymdownx.tabbed": {"alternate_style": True}}, "docs_dir": str(tmp_path)}
    assert "custom fence" in config_check.extensions_problem(cfg, "mkdocs.yml")  # only the fences are missing
    (tmp_path / "glossary.yml").write_text(GLOSSARY, encoding="utf-8")
    assert "lacks generator.markdown.lesson" in config_check.extensions_problem(cfg, "mkdocs.yml")


NAV = '  - "Chapter 1 · Tokens": lily.md\n'
YAML_CASES = {  # the mistake, the needle of the line it is on, the column, words of the problem
    "unclosed double quote": (NAV, NAV.replace('": lily', ': lily'), "Chapter 1", 5, 'this " is never closed'),
    "unclosed single quote": ("  - Home: index.md\n", "  - 'Home: index.md\n", "'Home", 5, "this ' is never closed"),
    "unclosed bracket": ("site_url: !ENV [COURSE_SITE_URL, null]", "site_url: !ENV [COURSE_SITE_URL, null", "site_url", 16, "this [ is never closed"),
    "tab indent": (NAV, "\t" + NAV.lstrip(" "), "Chapter 1", 1, "a tab indents this line"),
    "second colon": (NAV, '  - Chapter 1: Tokens: lily.md\n', "Chapter 1", 22, "a second ': '"),
    "missing colon": (NAV, '  - "Chapter 1 · Tokens" lily.md\n', "Chapter 1", 26, "this line does not fit the lines above"),
}


def with_nav(yml: str) -> str:
    return yml.replace("\ntheme:\n", "\nnav:\n  - Home: index.md\n" + NAV + "  - Glossary: glossary.md\n\ntheme:\n", 1)


@pytest.mark.parametrize("case", sorted(YAML_CASES))
@pytest.mark.parametrize("command", [["check", "--no-cache"], ["site", "--no-downloads"]])
def test_a_yaml_mistake_names_its_own_line_and_column_in_one_line_with_status_1(tmp_path, case, command):
    good_part, bad_part, needle, column, says = YAML_CASES[case]
    good = with_nav(mkdocs_yml())
    assert good.count(good_part) == 1, case
    broken = good.replace(good_part, bad_part)
    root = project(tmp_path / "course", broken)
    line = next(i for i, text in enumerate(broken.split("\n"), 1) if needle in text)
    rc, err = run_in(root, command)
    assert rc == 1 and len(err) == 1, err
    assert err[0].startswith(f"error: mkdocs.yml:{line}: malformed YAML at column {column}: {says}"), (err[0], line)
    assert ". Fix: " in err[0]


@pytest.mark.parametrize("command", [["check", "--no-cache"], ["site", "--no-downloads"]])
def test_a_setting_of_the_wrong_type_is_one_line_at_its_line(tmp_path, command):
    """MkDocs said "Config value 'use_directory_urls': ..." and then "Aborted with a configuration
    error", and the course's line named no line; and `make check` said "no mistakes" for a file
    that `make site` refuses (it now runs MkDocs' own check of every setting too)."""
    good = mkdocs_yml()
    broken = good + "use_directory_urls: maybe\n"
    root = project(tmp_path / "course", broken)
    rc, err = run_in(root, command)
    assert rc == 1 and len(err) == 1, err
    assert err[0].startswith(f"error: mkdocs.yml:{broken.count(chr(10))}: use_directory_urls: Expected type"), err


def test_a_page_reference_without_the_lesson_extension_names_it_and_mkdocs_yml(tmp_path):
    """A course without a glossary may leave the lesson extension out; a page that asks for its
    reading time then said "no figure with id 'page' ... Fix: give the figure id: page"."""
    from conftest import write_project

    write_project(tmp_path, {"index.md": "# Home\n\nIt takes {{ page.minutes }} minutes.\n"})
    assert "generator.markdown.lesson" not in (tmp_path / "mkdocs.yml").read_text(encoding="utf-8")
    rc, err = run_in(tmp_path, ["check", "--no-cache"])
    errors = [e for e in err if e.startswith("error: ")]
    assert rc == 1 and len(errors) == 1, err
    assert errors[0] == ("error: content/index.md:3: reference {{ page.minutes }}: it is filled in by the lesson "
                         "extension, which mkdocs.yml does not load. Fix: add `- generator.markdown.lesson` under "
                         "markdown_extensions in mkdocs.yml, as the repository's does"), errors


@pytest.mark.parametrize("option, says", [
    ("      bogus: 1\n", "generator.markdown.course has no option 'bogus' (its options: traces_dir,"),
    ("      assets_dir: 5\n", "generator.markdown.course's option 'assets_dir' must be text, not 5"),
])
@pytest.mark.parametrize("command", [["check", "--no-cache"], ["site", "--no-downloads"]])
def test_a_course_extension_option_it_lacks_or_of_the_wrong_type_is_one_line_without_frames(tmp_path, option, says, command):
    """MkDocs flattened Python's frames into the line ("File "…", line 1021, in run_validation …"),
    and check said one internal error per page."""
    good = mkdocs_yml()
    at = good.index("  - generator.markdown.course:\n") + len("  - generator.markdown.course:\n")
    broken = good[:at] + option + good[at:]
    root = project(tmp_path / "course", broken)
    rc, err = run_in(root, command)
    assert rc == 1 and len(err) == 1, err
    assert err[0].startswith("error: mkdocs.yml:") and says in err[0] and 'File "' not in err[0] and "Fix: " in err[0], err


@pytest.mark.parametrize("parent, says", [
    ("mkdocs.yml", "INHERIT: mkdocs.yml inherits itself (through mkdocs.yml)"),
    ("base.yml", "INHERIT: mkdocs.yml inherits itself (through mkdocs.yml -> base.yml)"),
    ("list.yml", "list.yml is not a mapping of settings"),
])
@pytest.mark.parametrize("command", [["check", "--no-cache"], ["site", "--no-downloads"]])
def test_an_inherit_chain_that_loops_or_names_no_settings_is_one_line(tmp_path, parent, says, command):
    """MkDocs recursed until Python stopped it (a RecursionError, 110 lines) or failed with a
    TypeError traceback."""
    root = project(tmp_path / "course", "INHERIT: " + parent + "\n" + mkdocs_yml())
    (root / "base.yml").write_text("INHERIT: mkdocs.yml\n", encoding="utf-8")
    (root / "list.yml").write_text("- a\n- b\n", encoding="utf-8")
    rc, err = run_in(root, command)
    assert rc == 1 and len(err) == 1, err
    assert err[0].startswith("error: mkdocs.yml:1: ") and says in err[0] and "Fix: " in err[0], err



@pytest.mark.parametrize("command", [["check", "--no-cache"], ["site", "--no-downloads"], ["site", "--engine", "zensical"]],
                         ids=["check", "site", "zensical"])
def test_a_linked_folder_in_the_lessons_is_one_line(tmp_path, command):
    """MkDocs follows a link to a folder: one to a folder above looped until the system stopped it
    (an OSError traceback from `make site`), while `make check` passed."""
    if "zensical" in command:
        pytest.importorskip("zensical")
    root = project(tmp_path / "course", mkdocs_yml())
    (root / "content" / "loop").symlink_to("..", target_is_directory=True)
    rc, err = run_in(root, command)
    assert rc == 1 and [e for e in err if e.startswith("error: ")] == [
        "error: content/loop: is a link to a folder, which the site would read through (a link to a folder above it, "
        "over and over). Fix: copy the pages into the lessons' folder, or remove the link"], err
    assert not (root / "build").exists() and not (root / "site").exists()


@pytest.mark.parametrize("pages, says", [
    ({"downloads/t.md": "# T\n"}, "content/downloads/t.md: the site writes its own downloads/ folder, which would take this page's "
                                  "place. Fix: move the page out of content/downloads/"),
    ({"notebooks/t.md": "# T\n"}, "content/notebooks/t.md: the site writes its own notebooks/ folder"),
    ({"part-ch.md": "# A\n", "part/ch.md": "# B\n"}, "content/part-ch.md and content/part/ch.md would both download as downloads/part-ch.html"),
])
@pytest.mark.parametrize("command", [["check", "--no-cache"], ["site", "--no-downloads"]], ids=["check", "site"])
def test_a_page_the_site_s_own_output_would_replace_is_one_line(tmp_path, pages, says, command):
    """A lesson under downloads/ or notebooks/ was silently overwritten by the one-file chapters
    or the notebooks (or overwrote them), and two pages with one download name passed `make
    check` while `make site` failed: both now refuse them alike, before anything is built."""
    root = project(tmp_path / "course", mkdocs_yml())
    for name, text in pages.items():
        (root / "content" / name).parent.mkdir(parents=True, exist_ok=True)
        (root / "content" / name).write_text(text, encoding="utf-8")
    rc, err = run_in(root, command)
    errors = [e for e in err if e.startswith("error: ")]
    assert rc == 1 and len(errors) == 1 and errors[0].startswith("error: " + says) and "Fix: " in errors[0], err
    assert not (root / "build").exists() and not (root / "site").exists()
