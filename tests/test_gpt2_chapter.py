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
        note_re = r'<p class="course-traces-note" role="note"><em>(.*?)</em></p>'
        # the first note a reader sees without opening anything says why; the later ones are
        # short; a passage right beside a pending box has no note of its own (the box says it)
        seen = re.findall(note_re, re.sub(r"<details.*?</details>", "", gpt2, flags=re.S))
        assert seen[0] == "Left out here: numbers from GPT-2 small, which this copy of the course was built without."
        assert len(seen) >= 3 and set(seen[1:]) == {"Left out here: more numbers from GPT-2 small."}
        assert len(re.findall(note_re, gpt2)) <= len(seen) + 1
        for box in re.finditer(r'<figure class="course-fig course-pending".*?</figure>', gpt2, flags=re.S):
            around = gpt2[box.start() - 120:box.start()] + gpt2[box.end():box.end() + 120]
            assert "course-traces-note" not in around.split("</details>")[-1], around
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
        assert 'as 13 tokens (listed in <a href="#fig-1">the box above</a>)' in boxes[1]
        assert "13 × 13 cells" in boxes[0] and "13 × 13 cells" in boxes[1] and "all 144 heads of GPT-2 small" in boxes[2]


# ---------------------------------------------------------------- marked passages, one by one

# GPT-2's figure g, pending in every build here (no GPT-2 traces)
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

    write_project(tmp_path, {"marked.md": MARKED})
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

    write_project(tmp_path, {"beside.md": BESIDE})
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
    write_project(tmp_path, {"hidden.md": page})
    built = run_build(tmp_path, strict=False)
    assert built.ok, built.log
    notes = re.findall(r'<p class="course-traces-note" role="note"><em>(.*?)</em></p>', built.html("hidden.md"))
    full = "Left out here: numbers from GPT-2 small, which this copy of the course was built without."
    short = "Left out here: more numbers from GPT-2 small."
    assert notes == [full, full, full, short], notes  # in the answer, in the second tab, in view, later


def test_an_unmarked_reference_inside_code_with_no_number_stops_the_build(tmp_path):
    from conftest import write_project

    page = MARKED.replace("```\n{: .needs-traces }\n", "```\n").replace("In the console:\n{: .needs-traces }\n", "In the console:\n")
    write_project(tmp_path, {"marked.md": page})
    built = run_build(tmp_path, strict=False)
    assert not built.ok
    line = page.split("\n").index("trace.layers[{{ g.layer0 }}];") + 1
    assert f"content/marked.md:{line}: reference {{{{ g.layer0 }}}} has no number in this build" in built.log, built.log
