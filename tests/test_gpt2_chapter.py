"""Chapter 4 (content/gpt2.md) as it builds here, where GPT-2's weights cannot be had.

The chapter with every figure filled in, from traces of GPT-2's full shape, is checked in
test_gpt2_e2e.py (a GPT-2-shaped local copy traced through the CLI): tracing that shape twice cost
the suite about nine minutes of CPU. Here: the real site as `make site` builds it, with GPT-2
untraced (whole prose, one reader note per passage that needs GPT-2's numbers, the pending boxes
listing GPT-2's real tokens), and each kind of marked passage one by one. A build refuses
stand-in traces unless allowed: test_build.py and test_scoreboard.py.
"""

from __future__ import annotations

import html as htmllib
import re
import sys

import pytest

from conftest import REPO, run_build

def visible_text(page_html: str) -> str:
    body = page_html[page_html.index("<article") : page_html.index("</article>")]
    body = re.sub(r"<script.*?</script>", "", body, flags=re.S)
    return htmllib.unescape(re.sub(r"<[^>]+>", "", body))


# ---------------------------------------------------------------- the real site, built here

def prose_outside_figures(page_html: str) -> str:
    """A page's visible words, figures (and their pending boxes) left out."""
    body = page_html[page_html.index("<article") : page_html.index("</article>")]
    body = re.sub(r"<figure\b.*?</figure>", " ", body, flags=re.S)
    return visible_text(body + "</article>")


def test_the_real_site_built_here_has_no_placeholder_inside_a_sentence(tmp_path):
    """`make site` on the repository as it is (GPT-2 untraced here): every page's prose is whole,
    GPT-2's facts read as numbers, each passage that needs GPT-2's numbers is one reader note, and
    the first pending figure on a sentence lists its real GPT-2 tokens and a later one links to it."""
    import subprocess

    site = tmp_path / "site"
    proc = subprocess.run([sys.executable, "-m", "generator", "site", "--no-downloads", "-d", str(site)],
                          cwd=REPO, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    pages = sorted(site.glob("*.html"))
    assert {p.name for p in pages} >= {"index.html", "attention.html", "heads.html", "gpt2.html", "404.html"}
    untraced = not (REPO / "traces" / "gpt2" / "index.json").is_file()
    for page in pages:
        text = page.read_text(encoding="utf-8")
        body = text[text.index("<body") :]
        assert "course-pending-ref" not in body and "needs-traces" not in body, page.name
        assert "{{" not in visible_text(text) and "}}" not in visible_text(text), page.name
        words = prose_outside_figures(text)
        assert not re.search(r"\bpending\b", words, re.I), f"{page.name}: 'pending' in its prose"
    gpt2 = (site / "gpt2.html").read_text(encoding="utf-8")
    words = prose_outside_figures(gpt2)
    assert "in 12 layers of 12 heads" in words and "√64 = 8.00" in words and "124,439,808 parameters" in words
    if untraced:
        check_the_chapter_built_without_gpt2(site, gpt2)


NOTICE_RE = r'<div class="admonition note course-model-notice" role="note">.*?</div>'
NOT_HERE_RE = r'class="course-fig course-pending"|class="course-traces-note"'  # a box, or a note in place of a passage


def sections_of(page_html: str) -> list[str]:
    """The article's parts, split at its `##` headings (the first: everything above the first)."""
    body = page_html[page_html.index("<article") : page_html.index("</article>")]
    return re.split(r"(?=<h2\b)", body)


def check_the_chapter_built_without_gpt2(site, gpt2: str) -> None:
    """Chapter 4 where GPT-2's weights cannot be had: one notice at the top says what the page
    shows and what a copy with the weights adds; each section has at most one 'not in this copy'
    line (its pending box, or one note); no goal promises the grids; the navigation marks the
    chapter, the playground does not send readers there, and chapter 5's GPT-2 section has its
    own notice."""
    parts = sections_of(gpt2)
    notices = re.findall(NOTICE_RE, gpt2, flags=re.S)
    assert len(notices) == 1 and "course-model-notice" in parts[0], "one notice, at the top"
    notice = htmllib.unescape(re.sub(r"<[^>]+>", "", notices[0]))
    assert "built without the weights of GPT-2 small" in notice and "adds the 3 figures" in notice, notice
    assert parts[0].index("course-model-notice") < parts[0].index("You will learn to")
    for part in parts[1:]:
        heading = re.search(r">([^<]+)<", part).group(1)
        assert len(re.findall(NOT_HERE_RE, part)) <= 1, f"{heading}: more than one 'not in this copy' line"
    words = prose_outside_figures(gpt2)
    assert "Left out here" not in words and "Not traced in this copy" not in words
    # the sections that only read numbers have their one line; those with a box have none beside it
    lines = re.findall(r'<p class="course-traces-note" role="note"><em>(.*?)</em></p>', gpt2)
    assert lines == ["Not in this copy: the numbers from GPT-2 small that this section reads."] * 3, lines
    # what needs no weights stays: the "it" argument, the real tokens and grid sizes, how heads
    # are scored, Wang et al.'s heads
    flat = " ".join(words.split())
    for kept in ("the row of ·it is the same in both sentences", "the row of ·it cannot differ",
                 "measured on a sequence of random tokens repeated twice", "induction heads 5.5 and 6.9",
                 "add up the 64 products"):
        assert kept in flat, kept
    assert "find your way around all 144 attention grids" not in words, "a goal promising the grids"
    # no Code tab left empty: JavaScript and Python views had only numbers from the traces
    assert ">JavaScript</label>" not in gpt2 and ">Code</label>" not in gpt2 and ">Formula</label>" in gpt2
    assert not re.search(r'<div class="tabbed-block">\s*</div>', gpt2)
    # no prose about parts of figures that are not drawn: the compare table's difference
    # column, the menus, the scoreboard's sortable tables
    for part in ("difference column", "Token menu", "use the menus", "can be sorted"):
        assert part not in words, part
    assert "traces.find" not in gpt2 and "head.scaledMasked" not in gpt2, "no console code for traces the page lacks"
    boxes = re.findall(r'<figure class="course-fig course-pending".*?</figure>', gpt2, flags=re.S)
    assert len(boxes) == 3  # compare, the all-heads grid, the scoreboard
    didnt = '<code class="course-token">·didn</code> <code class="course-token">&#x27;t</code>'
    # the sentence's real GPT-2 tokens, ·didn + 't, listed once: the next box on it links there
    assert didnt in boxes[0] and didnt not in boxes[1]
    first = re.search(r'id="(fig-\d+)"', boxes[0])[1]  # after the architecture picture, drawn without weights
    assert f'as 13 tokens (listed in <a href="#{first}">the box above</a>)' in boxes[1]
    assert "13 × 13 cells" in boxes[0] and "13 × 13 cells" in boxes[1] and "all 144 heads of GPT-2 small" in boxes[2]
    # the navigation marks the chapter on every page; no other chapter is marked
    for name in ("index.html", "gpt2.html", "causal.html", "circuits.html"):
        nav = (site / name).read_text(encoding="utf-8")
        assert "Chapter 4 · Attention in GPT-2 (needs the model&#x27;s weights)" in nav or \
            "Chapter 4 · Attention in GPT-2 (needs the model's weights)" in nav, name
        assert nav.count("(needs the model") == nav.count("Chapter 4 · Attention in GPT-2"), name
    # the playground does not send readers to chapter 4 for GPT-2's attention
    play = prose_outside_figures((site / "play.html").read_text(encoding="utf-8"))
    assert "GPT-2 small cannot run in a page like this one" in play and "shows the attention" not in play
    # chapter 6 (chapter 5's second half): its GPT-2 section has the notice, and only that section
    causal = sections_of((site / "circuits.html").read_text(encoding="utf-8"))
    noticed = [re.search(r">([^<]+)<", p).group(1) for p in causal if "course-model-notice" in p]
    assert noticed == ["The same test on GPT-2 small"], noticed
    gpt2_part = next(p for p in causal if "course-model-notice" in p)
    assert "adds the figure drawn from the model" in htmllib.unescape(gpt2_part)


# ---------------------------------------------------------------- marked passages, one by one

def gpt2_elsewhere() -> list[dict]:
    """A GPT-2 trace of another sentence: the copy has GPT-2, and figure g is not traced yet (an
    author's copy mid-work), so its passages get notes. A copy with no GPT-2 trace at all is
    one built without the weights: see "a page that needs a model this copy lacks" below."""
    from conftest import synthetic_trace

    return [synthetic_trace("A sentence GPT-2 has read", model="gpt2")]


# GPT-2's figure g, pending in every build here (its sentence is not traced)
IT_SENTENCE = "The animal didn't cross the street because it was too tired"
IT_TOKENS = ["<|endoftext|>", "The", " animal", " didn", "'t", " cross", " the", " street", " because", " it", " was", " too", " tired"]
G_FIGURE = '''```attention
model: gpt2
sentence: "The animal didn't cross the street because it was too tired"
layer: 1
head: 1
id: g
```
'''

MARKED = '''# Marked

''' + G_FIGURE + '''
Kept: GPT-2 has {{ model.gpt2.nLayer }} layers.

For ·it in layer {{ g.layer }}:
{: .needs-traces }

| token | weight |
|---|---|
| ·animal | {{ g.weight(it, animal) }} |
{: .needs-traces }

Kept between.

- a kept item
- an item with {{ g.weight(it, street) }}
  {: .needs-traces }
- another kept item

In the console:
{: .needs-traces }

```js
trace.layers[{{ g.layer0 }}];
```
{: .needs-traces }

Kept at the end.
'''


def test_each_kind_of_marked_passage_is_one_note_while_gpt2_is_untraced(tmp_path):
    from conftest import write_project

    write_project(tmp_path, {"marked.md": MARKED}, traces=gpt2_elsewhere())
    built = run_build(tmp_path, strict=False)
    assert built.ok, built.log
    page = built.html("marked.md")
    article = page[page.index("<article") : page.index("</article>")]
    note = '<p class="course-traces-note" role="note"><em>Left out here: numbers from GPT-2 small, which this copy of the course was built without.</em></p>'
    again = '<p class="course-traces-note" role="note"><em>Left out here: more numbers from GPT-2 small.</em></p>'
    # lead-in + table: one note; the item: a note inside its own <li>; lead-in + code: one note;
    # the first says why, the later ones are short
    assert article.count(note) == 1 and article.count(again) == 2, article
    assert article.index(note) < article.index(again) and f"<li>{again}</li>" in article
    text = visible_text(page)
    for kept in ("Kept: GPT-2 has 12 layers.", "Kept between.", "a kept item", "another kept item", "Kept at the end."):
        assert kept in text, kept
    for gone in ("For ·it", "·animal |", "an item with", "In the console", "trace.layers"):
        assert gone not in text, gone
    assert "<table" not in article and "needs-traces" not in page and "course-pending-ref" not in page


BESIDE = '''# Beside

Before the figure, ·it gives {{ g.weight(it, animal) }} to ·animal.
{: .needs-traces }

''' + G_FIGURE + '''
Right after it, layer {{ g.layer }}.
{: .needs-traces }

Kept between.

Further on, head {{ g.head }}.
{: .needs-traces }

```attention
model: tiny
sentence: "Lily wanted to play with her"
layer: 1
head: 1
id: t
```

Beside the tiny figure, GPT-2's {{ g.weight(it, street) }}.
{: .needs-traces }
'''


def test_a_passage_right_beside_a_pending_box_of_its_model_has_no_note_of_its_own(tmp_path):
    """The box already says that GPT-2's numbers are not in this copy: the passages right before
    and right after it go with it. A passage with text between, or beside another model's
    figure, keeps its note."""
    from conftest import write_project

    write_project(tmp_path, {"beside.md": BESIDE}, traces=gpt2_elsewhere())
    built = run_build(tmp_path, strict=False)
    assert built.ok, built.log
    page = built.html("beside.md")
    article = page[page.index("<article") : page.index("</article>")]
    text = visible_text(page)
    for gone in ("Before the figure", "Right after it", "Further on", "Beside the tiny figure"):
        assert gone not in text, gone
    assert "Kept between." in text and article.count("course-pending-box") == 2  # no tiny traces here either
    notes = re.findall(r'<p class="course-traces-note" role="note"><em>(.*?)</em></p>', article)
    assert notes == ["Left out here: numbers from GPT-2 small, which this copy of the course was built without.",
                     "Left out here: more numbers from GPT-2 small."], notes
    assert article.index("Kept between.") < article.index("course-traces-note") < article.index('data-model="tiny"') \
        < article.rindex("course-traces-note")


def test_the_note_that_says_why_is_one_a_reader_sees_without_opening_anything(tmp_path):
    """A full note inside a closed answer or a later content tab may never be read: the first
    note in plain view says why too."""
    from conftest import write_project

    page = ("# Hidden\n\n" + G_FIGURE + "\nKept.\n\n??? question \"Show the answer\"\n\n"
            "    Inside, layer {{ g.layer }}.\n    {: .needs-traces }\n\n"
            "=== \"Story\"\n\n    Kept in the first tab.\n\n=== \"Numbers\"\n\n"
            "    In the second tab, head {{ g.head }}.\n    {: .needs-traces }\n\n"
            "Kept again.\n\nIn view, head {{ g.head }}.\n{: .needs-traces }\n\nKept.\n\n"
            "Later, layer {{ g.layer }}.\n{: .needs-traces }\n")
    write_project(tmp_path, {"hidden.md": page}, traces=gpt2_elsewhere())
    built = run_build(tmp_path, strict=False)
    assert built.ok, built.log
    notes = re.findall(r'<p class="course-traces-note" role="note"><em>(.*?)</em></p>', built.html("hidden.md"))
    full = "Left out here: numbers from GPT-2 small, which this copy of the course was built without."
    short = "Left out here: more numbers from GPT-2 small."
    assert notes == [full, full, full, short], notes  # in the answer, in the second tab, in view, later


def test_an_unmarked_reference_inside_code_with_no_number_stops_the_build(tmp_path):
    from conftest import write_project

    page = MARKED.replace("```\n{: .needs-traces }\n", "```\n").replace("In the console:\n{: .needs-traces }\n", "In the console:\n")
    write_project(tmp_path, {"marked.md": page}, traces=gpt2_elsewhere())
    built = run_build(tmp_path, strict=False)
    assert not built.ok
    line = page.split("\n").index("trace.layers[{{ g.layer0 }}];") + 1
    assert f"content/marked.md:{line}: reference {{{{ g.layer0 }}}} has no number in this build" in built.log, built.log


# ---------------------------------------------------------------- a page that needs a model this copy lacks

LACKING = '''# Lacking

Kept: GPT-2 has {{ model.gpt2.nLayer }} layers.

- a kept goal
- a goal that promises all {{ model.gpt2.nHeads }} grids
  {: .needs-traces }

## One

Kept before the figure.

''' + G_FIGURE + '''
Kept after the figure.

In this head, ·it gives {{ g.weight(it, animal) }} to ·animal.
{: .needs-traces }

## Two

Kept in two.

For ·it in layer {{ g.layer }}:
{: .needs-traces }

| token | weight |
|---|---|
| ·animal | {{ g.weight(it, animal) }} |
{: .needs-traces }

Kept between.

And head {{ g.head }}.
{: .needs-traces }

=== "Formula"

    Kept formula, $d$ = {{ model.gpt2.headDim }}.

=== "Code"

    === "JavaScript"

        In the console:
        {: .needs-traces }

        ```js
        trace.layers[{{ g.layer0 }}];
        ```
        {: .needs-traces }

    === "Python"

        Layer {{ g.layer }} in the notebook.
        {: .needs-traces }

## Three

Kept in three.
'''


def article_of(built, page: str) -> str:
    html = built.html(page)
    return html[html.index("<article") : html.index("</article>")]


def test_a_page_whose_every_figure_needs_a_model_this_copy_lacks_has_one_notice_and_one_line_a_section(tmp_path):
    """No GPT-2 trace at all (a copy built without the weights): one notice under the title; in
    each section its pending box or one short line, never both, never more; the other marked
    passages go without a note, a goal that promises GPT-2's grids goes, and a Code tab left empty
    goes with its tabs. Text that needs no weights stays."""
    from conftest import write_project

    write_project(tmp_path, {"lacking.md": LACKING})
    built = run_build(tmp_path, strict=False)
    assert built.ok, built.log
    article = article_of(built, "lacking.md")
    parts = sections_of(built.html("lacking.md"))
    notices = re.findall(NOTICE_RE, article, flags=re.S)
    assert len(notices) == 1 and article.index("</h1>") < article.index("course-model-notice") < article.index("Kept: GPT-2")
    notice = htmllib.unescape(re.sub(r"<[^>]+>", "", notices[0]))
    assert "This copy of the course was built without the weights of GPT-2 small, so this page shows" in notice
    assert "adds the figure drawn from the model's own numbers" in notice, notice
    counts = [len(re.findall(NOT_HERE_RE, p)) for p in parts]
    assert counts == [0, 1, 1, 0], counts  # One: its box; Two: one line; Three: nothing missing
    assert "course-pending-box" in parts[1] and "course-traces-note" not in parts[1]
    assert re.findall(r'<p class="course-traces-note" role="note"><em>(.*?)</em></p>', parts[2]) == \
        ["Not in this copy: the numbers from GPT-2 small that this section reads."]
    text = visible_text(built.html("lacking.md"))
    for kept in ("Kept: GPT-2 has 12 layers.", "a kept goal", "Kept before the figure.", "Kept after the figure.",
                 "Kept in two.", "Kept between.", "Kept formula", "Kept in three."):
        assert kept in text, kept
    for gone in ("promises all", "In this head", "For ·it", "·animal |", "And head", "In the console", "trace.layers", "in the notebook"):
        assert gone not in text, gone
    assert "<table" not in article and "needs-traces" not in article
    # the Code tab held only passages that need traces: it goes, and the Formula tab stays alone
    assert ">Formula</label>" in article and ">Code</label>" not in article and ">JavaScript</label>" not in article
    assert re.search(r'<input checked="checked" id="__tabbed_\d+_1"', article) and 'data-tabs="1:1"' in article


def test_the_same_page_with_the_model_s_traces_has_no_notice_and_reads_as_written(tmp_path):
    """A copy built with GPT-2's weights is unchanged by all of the above."""
    from conftest import synthetic_trace, write_project

    write_project(tmp_path, {"lacking.md": LACKING}, traces=[synthetic_trace(IT_SENTENCE, model="gpt2", tokens=IT_TOKENS)])
    built = run_build(tmp_path, strict=True)
    assert built.ok, built.log
    article = article_of(built, "lacking.md")
    assert "course-model-notice" not in article and "course-traces-note" not in article and "course-pending" not in article
    text = visible_text(built.html("lacking.md"))
    for kept in ("a goal that promises all 144 grids", "In this head, ·it gives", "For ·it in layer 1:", "And head 1.",
                 "In the console:", "trace.layers[0];", "Layer 1 in the notebook."):
        assert kept in text, kept
    assert ">Code</label>" in article and ">JavaScript</label>" in article and ">Python</label>" in article


def test_a_section_whose_every_figure_needs_a_model_this_copy_lacks_has_its_own_notice(tmp_path):
    """A chapter with a traced tiny figure and a GPT-2 section: the notice stands under the GPT-2
    section's heading, not at the top of the page; the tiny part reads as written."""
    from conftest import LILY, lily_trace, write_project

    page = ('# Mixed\n\n```attention\nmodel: tiny\nsentence: "' + LILY + '"\nlayer: 3\nhead: 3\nid: lily\n```\n\n'
            'Lily gets {{ lily.weight(her, Lily) }}.\n{: .needs-traces }\n\n## On GPT-2\n\nKept in the GPT-2 section.\n\n'
            + G_FIGURE + '\nKept after.\n\nIt gives {{ g.weight(it, animal) }}.\n{: .needs-traces }\n\n## After\n\nKept at the end.\n')
    write_project(tmp_path, {"mixed.md": page}, traces=[lily_trace()])
    built = run_build(tmp_path, strict=False)
    assert built.ok, built.log
    parts = sections_of(built.html("mixed.md"))
    assert [len(re.findall(NOTICE_RE, p, flags=re.S)) for p in parts] == [0, 1, 0]
    assert parts[1].index("</h2>") < parts[1].index("course-model-notice") < parts[1].index("Kept in the GPT-2 section.")
    assert "so this section shows" in htmllib.unescape(parts[1]) and "course-traces-note" not in parts[1]
    text = visible_text(built.html("mixed.md"))
    assert "Lily gets 0.66." in text and "It gives" not in text and "Kept after." in text and "Kept at the end." in text


def test_the_navigation_marks_a_page_whose_every_figure_needs_a_model_this_copy_lacks(tmp_path):
    """MkDocs's nav (publish.marked_nav) and Zensical's copy of mkdocs.yml (marked_nav_text) mark
    the GPT-2-only page, not a page with a traced figure, and nothing once GPT-2 is traced."""
    from conftest import LILY, lily_trace, synthetic_trace, write_project
    from generator.site import publish, zensical_build

    mixed = '# Mixed\n\n```attention\nmodel: tiny\nsentence: "' + LILY + '"\nlayer: 3\nhead: 3\n```\n\n## GPT-2\n\n' + G_FIGURE
    write_project(tmp_path, {"lacking.md": LACKING, "mixed.md": mixed, "plain.md": "# Plain\n"}, traces=[lily_trace()])
    content, traces = tmp_path / "content", tmp_path / "traces"
    assert publish.pages_lacking_a_model(content, traces) == {"lacking.md"}
    nav = [{"Home": "index.md"}, {"Chapter 4 · GPT-2": "lacking.md"}, {"Part": [{"Mixed": "mixed.md"}, "plain.md"]}]
    assert publish.marked_nav(nav, {"lacking.md"}) == [
        {"Home": "index.md"}, {"Chapter 4 · GPT-2 (needs the model's weights)": "lacking.md"}, {"Part": [{"Mixed": "mixed.md"}, "plain.md"]}]
    yml = 'nav:\n  - Home: index.md\n  - "Chapter 4 · GPT-2": lacking.md\n  - Mixed: mixed.md\n'
    assert zensical_build.marked_nav_text(yml, {"lacking.md"}) == \
        'nav:\n  - Home: index.md\n  - "Chapter 4 · GPT-2 (needs the model\'s weights)": lacking.md\n  - Mixed: mixed.md\n'
    write_project(tmp_path, {}, traces=[synthetic_trace(IT_SENTENCE, model="gpt2", tokens=IT_TOKENS)])
    assert publish.pages_lacking_a_model(content, traces) == set()
