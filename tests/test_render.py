"""generator/render/ and generator/markdown/ without MkDocs: rendered fragments (golden files), numbers,
escaping, pick rules, token names, references and their errors. Fast: no subprocess."""

from __future__ import annotations

import html
import json
import re
import textwrap
from pathlib import Path

import markdown
import numpy as np
import pytest

from conftest import GOLDEN, LILY, REPO, lily_trace, synthetic_trace, training_log_doc, unbound, write_traces
from generator.render import assets, script, stepper
from generator.notebooks import cells
from generator.store import TraceStore
from generator import render, schema
from generator.lessons import directives as D
from generator.lessons import refs
from generator.lessons.errors import LessonError
from generator.render import context, grid, training_figure as training
from generator.render import format as fmt
from generator.render.context import Ctx, Missing
from generator.render.pick import pick_head
from generator.render.ref_common import PENDING_REF
from generator.render.token_names import resolve_token


def ctx_for(root: Path, traces=(), **kw) -> Ctx:
    write_traces(root, list(traces))
    return Ctx(store=TraceStore(root), page="content/page.md", **kw)


def directive(kind: str, body: str, where: str = "content/page.md:3") -> D.Directive:
    return D.parse_directive(kind, textwrap.dedent(body), where)


def ref(text: str, ctx: Ctx, where: str = "content/page.md:20") -> str:
    return render.render_ref(refs.parse_ref(text, where), ctx)


def text_of(fragment: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", fragment))


def course_data(fragment: str) -> dict:
    m = re.search(r'<script type="application/json" class="course-data">(.*?)</script>', fragment, re.S)
    return json.loads(m.group(1))


LILY_BLOCK = """\
    model: tiny
    sentence: "Lily wanted to play with her"
    pick: {rule: max-weight, from: her, to: Lily}
    id: lily
    caption: "One head of the tiny model."
"""

# ---------------------------------------------------------------- golden files


def check_golden(name: str, fragment: str, update: bool) -> None:
    pretty = fragment.replace("><", ">\n<") + "\n"
    path = GOLDEN / f"{name}.html"
    if update or not path.exists():
        path.parent.mkdir(exist_ok=True)
        path.write_text(pretty, encoding="utf-8")
        if not update:
            pytest.fail(f"{path} did not exist; written now, check it and rerun")
    assert pretty == path.read_text(encoding="utf-8"), f"{path} differs (rerun with --update-golden if intended)"


def test_golden_attention(tmp_path, update_golden):
    ctx = ctx_for(tmp_path, [lily_trace()])
    check_golden("attention", render.render(directive("attention", LILY_BLOCK), ctx), update_golden)


def test_golden_pending_gpt2(tmp_path, update_golden):
    ctx = ctx_for(tmp_path)
    d = directive("attention", 'model: gpt2\nsentence: "The cat sat"\nlayer: 5\nhead: 1\n')
    out = render.render(d, ctx)
    check_golden("pending", out, update_golden)
    assert ctx.missing == {Missing("gpt2", Missing.TRACE, "The cat sat"): ["content/page.md:3"]}
    words = text_of(out)
    # For readers: GPT-2's real tokens of the sentence and the grid's size, known without weights;
    # no build command, file path or revision (those go to the build log).
    assert "Not traced in this copy of the course" in words and "GPT-2 small" in words and "The cat sat" in words
    assert "as 4 tokens: <|endoftext|> The ·cat ·sat" in words and "12 × 12 heads has a grid of 4 × 4 cells" in words
    assert "make traces" not in words and "traces/" not in words and "607a30d" not in words
    assert not re.search(r"\d\.\d\d", words), "a pending box shows no numbers"


def test_a_sentences_tokens_are_listed_once_a_page(tmp_path):
    """Two pending figures on one sentence: the first lists its tokens, the second links to it;
    another sentence lists its own, and so does the next page."""
    ctx = ctx_for(tmp_path)
    first = text_of(render.render(directive("attention", 'model: gpt2\nsentence: "The cat sat"\nlayer: 5\nhead: 1\n'), ctx))
    again = render.render(directive("attention", 'model: gpt2\nsentence: "The cat sat"\nlayer: 2\nhead: 3\n', "content/page.md:9"), ctx)
    other = text_of(render.render(directive("attention", 'model: gpt2\nsentence: "The dog ran"\nlayer: 2\nhead: 3\n', "content/page.md:15"), ctx))
    assert "as 4 tokens: <|endoftext|> The ·cat ·sat" in first
    assert 'as 4 tokens (listed in <a href="#fig-1">the box above</a>), so each of its 12 × 12 heads has a grid of 4 × 4 cells' in again
    assert "·cat" not in text_of(again)
    assert "as 4 tokens: <|endoftext|> The ·dog ·ran" in other
    fresh = text_of(render.render(directive("attention", 'model: gpt2\nsentence: "The cat sat"\nlayer: 5\nhead: 1\n'), ctx_for(tmp_path)))
    assert "·cat" in fresh, "a new page lists them again"


def test_golden_stepper(tmp_path, update_golden):
    check_golden("stepper", render.render(stepper_directive(), ctx_for(tmp_path)), update_golden)


def test_golden_softmax(tmp_path, update_golden):
    d = directive("softmax", "scores: [1, 0, 0]\nlabels: [Lily, ran, she]\nid: sm\n")
    check_golden("softmax", render.render(d, ctx_for(tmp_path)), update_golden)


def test_golden_compare(tmp_path, update_golden):
    ben = synthetic_trace("Ben wanted to play with her", plant={(2, 2, 5): {0: 0.5, 5: 0.5}})
    ctx = ctx_for(tmp_path, [lily_trace(), ben])
    d = directive("compare", 'model: tiny\nsentences: ["Lily wanted to play with her", "Ben wanted to play with her"]\nlayer: 3\nhead: 3\nid: pair\n')
    out = render.render(d, ctx)
    check_golden("compare", out, update_golden)
    assert [len(p["tokens"]) for p in course_data(out)["panels"]] == [6, 6]
    assert out.count('class="course-controls"') == 1
    # diff row for Lily/Ben at position 1: 0.50 − 0.66 = −0.16, a true minus
    assert "<td>1</td><td>" in out and "<td>0.66</td>" in out and "<td>\u22120.16</td>" in out
    assert ref("pair.weight(her, Lily, 1)", ctx) == "0.66"
    assert ref("pair.weight(her, Ben, 2)", ctx) == "0.50"


def test_golden_scoreboard(tmp_path, update_golden):
    from heads_helpers import store_with_scores

    store = store_with_scores(tmp_path, n_random=1, random_length=4)
    ctx = Ctx(store=store, page="content/page.md")
    d = directive("scoreboard", "model: tiny\nscores: [previous-token, induction]\nid: sb\n")
    check_golden("scoreboard", render.render(d, ctx), update_golden)


def test_golden_training(tmp_path, update_golden):
    ctx = ctx_for(tmp_path, training_log=training_log_doc())
    check_golden("training", render.render(directive("training", "model: tiny\nid: tr\n"), ctx), update_golden)


def test_golden_predictions(tmp_path, update_golden):
    ctx = ctx_for(tmp_path, [lily_trace()])
    d = directive("predictions", 'model: tiny\nsentences: ["Lily wanted to play with her"]\nid: guess\n')
    check_golden("predictions", render.render(d, ctx), update_golden)


# ---------------------------------------------------------------- attention figure details


def test_attention_summary_top3_table(tmp_path):
    ctx = ctx_for(tmp_path, [lily_trace()])
    out = render.render(directive("attention", LILY_BLOCK), ctx)
    assert 'id="fig-1"' in out and 'data-kind="attention"' in out
    assert 'data-layer="2" data-head="2" data-token="5"' in out  # 0-based in attributes
    summary = re.search(r'<p class="course-summary"[^>]*>(.*?)</p>', out).group(1)
    assert text_of(summary) == "In layer 3, head 3, ·her looks most at Lily 0.66, ·her 0.12, ·wanted 0.10."
    assert '<span class="course-tok" aria-label="space her">·her</span>' in summary
    top3 = re.search(r'<div class="course-top3">(.*?)</div>', out).group(1)
    assert top3.startswith('<ol start="0">')  # numbered from 0, as the token menu ("5: ·her") and the address
    items = re.findall(r"<li>(.*?)</li>", top3)
    assert text_of(items[0]) == "Lily looks at Lily 1.00."
    assert text_of(items[5]) == "·her looks at Lily 0.66, ·her 0.12, ·wanted 0.10."
    # table: focus row, masked cells, colours with readable text
    assert '<tr class="course-focus"><th scope="row"><span class="course-tok" aria-label="space her">·her</span>' in out
    assert '<td class="course-masked" data-q="0" data-k="1">hidden</td>' in out
    cell = re.search(r'<td data-q="5" data-k="0" style="([^"]+)">0.66</td>', out)
    assert cell and "color:#000" in cell.group(1)
    data = course_data(out)
    # the first load holds only the shown head's grid; a head's part brings its own, weights.js every head's
    assert data["weights"][2][2][5][0] == 0.66 and data["weights"][2][2][0] == [1, 0, 0, 0, 0, 0]
    assert [[g is None for g in layer] for layer in data["weights"]] == [[(l, h) != (2, 2) for h in range(4)] for l in range(4)]
    assert data["tokens"][5] == {"id": 105, "text": " her", "display": "·her", "spoken": "space her"}
    assert "q" not in json.dumps(data["weights"])  # only weights ship with the page
    assert f'data-parts="assets/generated/traces/tiny/{data["key"]}"' in out and 'download>trace JSON</a>' in out
    assert "revision synthetic-0" in text_of(out)


@pytest.mark.parametrize("model, named, details", [
    ("tiny", "Tiny model, trained for this course.", "Model tiny, revision synthetic-0"),
    ("gpt2", "GPT-2 small, trained by OpenAI.", "Model gpt2 (openai-community/gpt2), revision synthetic-0"),
])
def test_provenance_names_the_model_for_readers_and_keeps_the_rest_behind_details(tmp_path, model, named, details):
    """The provenance line: "Tiny model, trained for this course"; the revision, the versions that traced
    it and the trace JSON one click away, in a <details>."""
    ctx = ctx_for(tmp_path, [synthetic_trace(LILY, model=model)])
    block = f"model: {model}\nsentence: \"{LILY}\"\nlayer: 1\nhead: 1\ncaption: \"A caption.\"\n"
    cap = re.search(r'<figcaption class="course-prov">(.*?)</figcaption>', render.render(directive("attention", block), ctx)).group(1)
    outside = re.sub(r"<details.*?</details>", "", cap)
    # the head and token shown first (course.js rewrites them as they change: CONTRACT.md, "Text
    # that follows the figure"), then the author's caption
    assert text_of(outside) == f"Layer 1, head 1, token ·her. A caption. {named}"
    summary, body = re.search(r'<details class="course-prov-details"><summary>(.*?)</summary>(.*?)</details>', cap).groups()
    assert summary == "Details and data"
    assert text_of(body).startswith(details) and "traced with numpy synthetic; trace format" in text_of(body)
    assert re.search(r'<a href="assets/generated/traces/[a-z0-9]+/\w+\.json" download>trace JSON</a>', body)


def test_summary_drops_zero_entries_after_first(tmp_path):
    t = synthetic_trace("a b c", plant={(0, 0, 2): {0: 0.999, 1: 0.001, 2: 0.0}})
    ctx = ctx_for(tmp_path, [t])
    out = render.render(directive("attention", 'model: tiny\nsentence: "a b c"\nlayer: 1\nhead: 1\n'), ctx)
    assert text_of(re.search(r'<p class="course-summary"[^>]*>.*?</p>', out).group(0)) == "In layer 1, head 1, ·c looks most at a 1.00."


def test_ties_rank_by_position_and_two_decimals_like_python(tmp_path):
    row = [0.125, 0.375, 0.125, 0.375]
    assert grid.ranked(row, 3) == [1, 3, 0, 2]
    assert fmt.f2(0.125) == "0.12" and fmt.f2(0.625) == "0.62"  # half to even, as CONTRACT.md says
    assert fmt.diff2(-0.001) == "0.00" and fmt.diff2(0.2) == "+0.20"


def test_a_printed_weight_is_its_stored_weight_rounded_once(tmp_path):
    """A trace file stores weights as multiples of 0.00004; the page prints each one rounded to 2
    decimals once. A 4-decimal copy in between printed 0.86504 as 0.86 (0.8650, just under 0.865
    in binary) and 0.03496 as 0.04 (0.0350, just over); every number of the page, the course-data
    it ships and the parts course.js prints from are the stored weights themselves."""
    row = {0: 0.86504, 1: 0.1, 2: 0.03496}
    ctx = ctx_for(tmp_path, [synthetic_trace("a b c", plant={(0, 0, 2): row})])
    out = render.render(directive("attention", 'model: tiny\nsentence: "a b c"\nlayer: 1\nhead: 1\n'), ctx)
    summary = text_of(re.search(r'<p class="course-summary"[^>]*>.*?</p>', out).group(0))
    assert summary == "In layer 1, head 1, ·c looks most at a 0.87, ·b 0.10, ·c 0.03.", summary
    assert re.search(r'<td data-q="2" data-k="0" style="[^"]+">0.87</td>', out)
    assert re.search(r'<td data-q="2" data-k="2" style="[^"]+">0.03</td>', out)
    assert course_data(out)["weights"][0][0][2] == [0.86504, 0.1, 0.03496]
    trace = TraceStore(tmp_path).load("tiny", "a b c")
    assert context.trace_weights(trace)[0, 0, 2, :3].tolist() == [0.86504, 0.1, 0.03496]


@pytest.mark.parametrize("a, b, shown", [
    (0.026, 0.024, "\u22120.01"),  # 0.03 and 0.02: the exact −0.002 would read 0.00
    (0.694, 0.116, "\u22120.57"),  # 0.69 and 0.12: the exact −0.578 would read −0.58
    (0.021, 0.024, "0.00"),        # both 0.02
    (0.125, 0.135, "+0.02"),       # 0.12 (half to even) and 0.14
])
def test_a_difference_is_of_the_weights_as_shown(a, b, shown):
    assert fmt.shown_diff(a, b) == shown
    assert fmt.shown_diff(a, b) == fmt.diff2(round(float(fmt.f2(b)) - float(fmt.f2(a)), 2))


def test_colour_scale_is_plotly_cividis_and_text_is_readable():
    from plotly.colors import sequential

    assert list(fmt.CIVIDIS) == [c.lower() for c in sequential.Cividis]
    assert fmt.colorscale()[0] == [0.0, "#00224e"] and fmt.colorscale()[-1] == [1.0, "#fee838"]
    assert fmt.cell_rgb(0) == (0, 34, 78) and fmt.cell_rgb(1) == (254, 232, 56)
    worst = min(
        fmt.contrast_ratio(fmt.cell_rgb(w), (0, 0, 0) if w >= fmt.TEXT_DARK_FROM else (255, 255, 255))
        for w in np.linspace(0, 1, 2001)
    )
    assert worst >= 4.5
    js = fmt.colorscale_js()
    assert js.startswith("/*") and "window.COURSE_COLORSCALE = [[0.0, \"#00224e\"]" in js


def test_course_js_keeps_no_copy_of_the_colours():
    # One source: course.js reads the scale and the text threshold from the generated colorscale.js.
    js = script.course_js()
    assert not re.search(r"#[0-9a-fA-F]{6}'\s*,\s*'#[0-9a-fA-F]{6}", js), "a list of colour stops in course.js"
    assert "0.47" not in js and "window.COURSE_TEXT_DARK_FROM" in js and "window.COURSE_COLORSCALE" in js
    assert f"window.COURSE_TEXT_DARK_FROM = {fmt.TEXT_DARK_FROM};" in fmt.colorscale_js()


# ---------------------------------------------------------------- pick rules and token names


def test_pick_rules(tmp_path):
    plant = {(1, 3, r): {r - 1: 0.9, r: 0.1} for r in range(1, 6)}  # layer 2 head 4: previous token
    plant |= {(3, 0, r): {0: 0.95, r: 0.05} for r in range(1, 6)}  # layer 4 head 1: first token
    plant |= {(0, 1, r): {r: 0.97, 0: 0.03} for r in range(1, 6)}  # layer 1 head 2: itself
    t = synthetic_trace(LILY, plant=plant)
    panel = context.Panel(t, context.trace_weights(t))
    for rule, want in (("previous-token", (1, 3)), ("first-token", (3, 0)), ("self", (0, 1))):
        assert pick_head(D.Pick(rule), panel, "x:1", "attention") == want
    assert pick_head(D.Pick("fixed", 2, 3), panel, "x:1", "attention") == (1, 2)
    lily = lily_trace()
    assert pick_head(D.Pick("max-weight", source=D.TokenRef("her"), target=D.TokenRef("Lily")), context.Panel(lily, context.trace_weights(lily)), "x:1", "attention") == (2, 2)


@pytest.mark.parametrize("name, index", [("her", 5), ("·her", 5), (" her", 5), ("Lily", 0), ("#3", 3)])  # positions count from 0, as on the pages
def test_token_names(name, index):
    toks = lily_trace()["tokens"]
    assert resolve_token(D.parse_token_ref(name, "x:1", "t"), toks, "x:1", "t") == index


def test_token_name_errors_list_the_tokens():
    toks = synthetic_trace("her dog saw her")["tokens"]
    with pytest.raises(LessonError) as e:
        resolve_token(D.TokenRef("her"), toks, "content/a.md:7", "attention: 'token'")
    msg = str(e.value)
    assert msg.startswith("content/a.md:7: attention: 'token': token 'her' is ambiguous: it matches #0, #3")
    assert "#1 '·dog'" in msg and "Fix:" in msg
    with pytest.raises(LessonError, match=r"^content/a.md:7: .*no token 'cat' in the sentence; its tokens are #0 'her'"):
        resolve_token(D.TokenRef("cat"), toks, "content/a.md:7", "t")
    with pytest.raises(LessonError, match="#9 is out of range"):
        resolve_token(D.TokenRef(index=9), toks, "content/a.md:7", "t")
    assert resolve_token(D.TokenRef("·her"), toks, "x", "t") == 3


# ---------------------------------------------------------------- stepper and softmax


def stepper_directive() -> D.Stepper:
    return directive("stepper", """\
        tokens: [Lily, ran, she]
        query: [[0, 1], [1, 0], [2, 0]]
        key: [[2, 0], [0, 1], [1, 1]]
        value: [[1, 0], [0, 1], [0.5, 0.5]]
        id: toy
    """)


def test_stepper_numbers(tmp_path):
    ctx = ctx_for(tmp_path)
    out = render.render(stepper_directive(), ctx)
    steps = re.findall(r'<li class="course-step" data-step="(\d)"[^>]*>(.*?)(?=<li class="course-step"|</ol>)', out)
    assert [n for n, _ in steps] == ["1", "2", "3", "4", "5"]
    s1, s2, s3 = (text_of(body) for _, body in steps[:3])
    assert "2 × 2 + 0 × 0 = 4" in s1 and "2 × 0 + 0 × 1 = 0" in s1 and "2 × 1 + 0 × 1 = 2" in s1
    assert "√2, about 1.41" in s2 and re.search(r"4.*2\.83.*0.*0.*2.*1\.41", s2, re.S)
    assert "0.77" in s3
    assert ref("toy.score(she, Lily)", ctx) == "4"
    assert [ref(f"toy.score(she, {k})", ctx) for k in ("Lily", "ran", "she")] == ["4", "0", "2"]
    assert [ref(f"toy.scaled(she, {k})", ctx) for k in ("Lily", "ran", "she")] == ["2.83", "0", "1.41"]
    assert ref("toy.weight(she, Lily)", ctx) == "0.77"
    assert ref("toy.sqrtd", ctx) == "1.41"
    assert ref("toy.out(she)", ctx) == "(0.86, 0.14)"
    assert (ref("toy.query(Lily)", ctx), ref("toy.key(ran)", ctx), ref("toy.value(she)", ctx)) == ("(0, 1)", "(0, 1)", "(0.50, 0.50)")
    assert ref("toy.dot(she, she)", ctx) == "2 × 1 + 0 × 1" and ref("toy.dim", ctx) == "2"
    with pytest.raises(LessonError, match="cannot look ahead"):
        ref("toy.weight(Lily, she)", ctx)


def test_stepper_writes_negative_numbers_with_a_true_minus(tmp_path):
    """An author's vectors may be negative: every number the stepper writes, in its tables, its
    steps and its references, has U+2212 and never an ASCII hyphen; a negative second factor is
    bracketed, and a product that rounds to zero reads 0.00, not −0.00."""
    ctx = ctx_for(tmp_path)
    out = render.render(directive("stepper", """\
        tokens: [Lily, ran, she]
        query: [[1, -1], [0, 1], [2, -0.5]]
        key: [[-2, 0], [0, 1], [1, -1]]
        value: [[-1, 0.25], [0, -0.002], [0.5, -0.5]]
        id: neg
    """), ctx)
    text = text_of(re.sub(r"<script.*?</script>", "", out, flags=re.S))  # the payload is JSON for course.js
    assert "\u2212" in text and not re.search(r"-\d", text), re.findall(r".{20}-\d.{5}", text)
    assert "2 × (\u22122) + (\u22120.50) × 0" in text  # she · Lily, the negative factor bracketed
    assert "\u22120.00" not in text
    assert ref("neg.score(she, Lily)", ctx) == "\u22124" and ref("neg.key(Lily)", ctx) == "(\u22122, 0)"
    assert ref("neg.dot(she, she)", ctx) == "2 × 1 + (\u22120.50) × (\u22121)"
    assert ref("neg.dot(Lily, Lily)", ctx) == "1 × (\u22122) + (\u22121) × 0"
    assert ref("neg.value(ran)", ctx) == "(0, 0.00)"
    # ran's −0.002 reads 0.00: by hand 0.11 × 0.00 is 0, which the table's 0.00 is too (compared
    # as numbers, not as the text "0" against "0.00")
    assert "The table multiplies" not in text
    # a negative exponent in the notebook's rounding notes: a true minus too
    neg = directive("stepper", """\
        tokens: [a, b, c]
        query: [[1.9, 0.1], [0.4, -0.4], [-2.7, 2.2]]
        key: [[0.4, -1.8], [0.0, -0.1], [-0.9, -0.9]]
        value: [[1, 0], [0, 1], [1, 1]]
    """)
    notes = " ".join(stepper.rounding_notes(neg, stepper.numbers(neg)))
    assert "by hand, e^\u22120.16 gives" in notes and not re.search(r"-\d", notes), notes


def test_stepper_as_in_the_seed(tmp_path):
    """The set-up table of every token, the full score grid with the focus row marked, one step
    counter (course.js's: no "Step k of 5" and no list numbers in the markup), bordered tables
    and e^score as MathML."""
    d = directive("stepper", """\
        tokens: [Lily, ran, she]
        query: [[1, 0], [0, 1], [2, 0]]
        key: [[2, 0], [0, 1], [1, 1]]
        value: [[1, 0], [0, 1], [0.5, 0.5]]
        focus: ran
    """)
    out = render.render(d, ctx_for(tmp_path))
    tables = re.findall(r"<table class=\"([^\"]*)\">(.*?)</table>", out)
    assert all("course-table" in cls.split() for cls, _ in tables) and len(tables) == 5  # course.css borders .course-table
    rows = lambda t: [[text_of(c) for c in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", r)] for r in re.findall(r"<tr[^>]*>(.*?)</tr>", t)]  # noqa: E731
    setup = rows(tables[0][1])
    assert setup == [["Token", "Question (query)", "Name tag (key)", "Backpack (value)"],
                     ["Lily", "(1, 0)", "(2, 0)", "(1, 0)"], ["ran", "(0, 1)", "(0, 1)", "(0, 1)"], ["she", "(2, 0)", "(1, 1)", "(0.50, 0.50)"]]
    grid_html = tables[1][1]
    # every score is written, those of a later token greyed and named as masked
    assert rows(grid_html) == [["Asking token", "Lily", "ran", "she"], ["Lily", "2", "0 (later: masked)", "1 (later: masked)"],
                               ["ran (followed)", "0", "1", "1 (later: masked)"], ["she", "4", "0", "2"]]
    assert len(re.findall(r'<td class="course-later">', grid_html)) == 3
    assert re.findall(r"<tr( class=\"course-focus\")?>", grid_html) == ["", "", ' class="course-focus"', ""]
    assert "she comes later" in text_of(out) and "ran gives itself 0.67" in text_of(out)
    assert not re.search(r"Step \d", text_of(out)), "the step counter is course.js's status alone"
    assert 'class="course-steps" style="list-style:none' in out  # and no list number before a step
    softmax_head = re.search(r"<thead>(.*?)</thead>", tables[3][1]).group(1)
    assert "<math><msup><mi>e</mi><mtext>score</mtext></msup></math>" in softmax_head and "e^" not in out


def test_stepper_leaves_its_rounding_to_the_notebook_which_says_where_it_does_not_add_up(tmp_path):
    """The seed's example for she: shares 0.77 + 0.05 + 0.19 = 1.01 as shown, and e to the shown
    2.83 is 16.95 where the table (from the unrounded score) has 16.92. The page's step-through
    says neither (an aside that checks rounding breaks it); the notebook's notes say both. With
    numbers that round cleanly the notes say neither."""
    seed = """\
        tokens: [Lily, ran, she]
        query: [[1, 0], [0, 1], [2, 0]]
        key: [[2, 0], [0, 1], [1, 1]]
        value: [[1, 0], [0, 1], [0.5, 0.5]]
        focus: she
    """
    def page_and_notes(text):
        d = directive("stepper", text)
        page = text_of(render.render(d, ctx_for(tmp_path)))
        return page, " ".join(stepper.rounding_notes(d, stepper.numbers(d)))

    page, notes = page_and_notes(seed)
    assert "The shares add up to 1." in page
    for aside in ("as shown", "by hand", "unrounded", "16.95"):
        assert aside not in page, aside
    assert "as shown, each rounded to two decimals, they add up to 1.01" in notes
    assert "by hand, e^2.83 gives 16.95, where the table has 16.92 for Lily" in notes
    # step 4: 0.19 × 0.50 is 0.095 by hand; the table's 0.09 is 0.187 × 0.50
    assert "by hand, 0.19 × 0.50 = 0.095, where the table has 0.09 for she, whose share is 0.187 before rounding" in notes
    assert "Added up as shown" not in notes  # 0.77 + 0 + 0.09 and 0 + 0.05 + 0.09 are the result, (0.86, 0.14)
    # the notebook's section of the example holds the notes under its numpy cell
    section = cells.toy(["Lily", "ran", "she"], [[1, 0], [0, 1], [2, 0]], [[2, 0], [0, 1], [1, 1]], [[1, 0], [0, 1], [0.5, 0.5]], 2,
                        stepper.rounding_notes(directive("stepper", seed), stepper.numbers(directive("stepper", seed))))
    assert [c.kind for c in section.cells] == ["markdown", "code", "markdown"] and "16.92 for Lily" in section.cells[2].source
    clean = seed.replace("query: [[1, 0], [0, 1], [2, 0]]", "query: [[1, 0], [0, 0], [2, 0]]").replace("focus: she", "focus: ran")
    page, notes = page_and_notes(clean)
    assert notes == "" and "The shares add up to 1." in page
    # three equal shares: each product reads 0.33, and the column adds up to 0.99, not the result's 1
    even = """\
        tokens: [a, b, c]
        query: [[0, 0], [0, 0], [0, 0]]
        key: [[1, 0], [0, 1], [1, 1]]
        value: [[1, 0], [1, 0], [1, 0]]
        focus: c
    """
    page, notes = page_and_notes(even)
    assert notes == ("The shares add up to 1, but as shown, each rounded to two decimals, they add up to 0.99. "
                     "Added up as shown, the backpack table's last column gives (0.99, 0); the result adds the unrounded numbers.")
    assert "Added up as shown" not in page and "The result of c is (1, 0)." in page


def test_softmax_widget(tmp_path):
    ctx = ctx_for(tmp_path)
    out = render.render(directive("softmax", "scores: [1, 0, 0]\nid: sm\n"), ctx)
    assert re.findall(r'<output class="course-weight" data-i="\d" for="[^"]+">([^<]+)</output>', out) == ["0.576", "0.212", "0.212"]
    assert 'style="width:57.6%"' in out and '<input type="text" inputmode="decimal" autocomplete="off" spellcheck="false" id="fig-1-s0" data-score="0" value="1">' in out
    assert [ref(f"sm.weight({i})", ctx) for i in (1, 2, 3)] == ["0.576", "0.212", "0.212"]
    assert ref("sm.exp(1)", ctx) == "2.72" and ref("sm.total", ctx) == "4.72"


def test_training_and_predictions(tmp_path):
    ctx = ctx_for(tmp_path, [lily_trace()], training_log=training_log_doc())
    out = render.render(directive("training", "model: tiny\n"), ctx)
    data = course_data(out)
    assert len(data["steps"]) <= training.MAX_TRAINING_POINTS + 1 and data["steps"][-1]["step"] == 1200
    assert [p["step"] for p in data["validation"]] == [300, 600, 900, 1200]
    assert "1.23 bits per character" in text_of(out) and "<caption>" in out
    assert ref("model.tiny.training.bitsPerChar", ctx) == "1.23"
    assert ref("model.tiny.training.steps", ctx) == "1,200"
    assert ref("model.tiny.training.wallMinutes", ctx) == "30"
    pred = render.render(directive("predictions", 'model: tiny\nsentences: ["Lily wanted to play with her"]\n'), ctx)
    assert pred.count("<tr>") == 7 and "·ball</span> 0.10" in pred and "0.00" in pred
    assert pred.count(">Guess ") == 5
    three = render.render(directive("predictions", 'model: tiny\nsentences: ["Lily wanted to play with her"]\nguesses: 3\n'), ctx)
    assert three.count(">Guess ") == 3 and all(row.count("<td>") == 3 for row in three.split("<tbody>")[1].split("</tr>")[:-1])
    assert len(course_data(three)["sentences"][0]["predictions"][0]) == 5  # the data keeps all five
    render.render(directive("predictions", 'model: tiny\nsentences: ["Lily wanted to play with her"]\nid: nx\n'), ctx)
    first = lily_trace()["predictions"][5][0]  # after ·with
    assert text_of(ref("nx.guess(with, 1)", ctx)) == f"{first['display']} {first['prob']:.2f}"
    with pytest.raises(LessonError, match=r"sentence '2' is not a number from 1 to 1"):
        ref("nx.guess(with, 2)", ctx)
    with pytest.raises(LessonError, match="no token"):
        ref("nx.guess(Ben, 1)", ctx)
    pending = render.render(directive("training", "model: tiny\n"), ctx_for(tmp_path / "other"))
    assert "course-pending" in pending and "Not in this copy of the course." in pending
    assert "make tiny-model" not in pending and "training_log.json" not in pending  # for readers; the build log tells the author


def test_scoreboard_pending_when_no_scores(tmp_path):
    ctx = ctx_for(tmp_path, [lily_trace()])
    out = render.render(directive("scoreboard", "model: tiny\nid: board\n"), ctx)
    assert 'data-pending="true"' in out and "Not scored in this copy of the course." in out
    assert ref("board.top(induction, 1)", ctx) == PENDING_REF


# ---------------------------------------------------------------- references


def test_refs_and_model_meta(tmp_path):
    ctx = ctx_for(tmp_path, [lily_trace()])
    render.render(directive("attention", LILY_BLOCK), ctx)
    assert ref("lily.layer", ctx) == "3" and ref("lily.head", ctx) == "3"
    assert ref("lily.layer0", ctx) == "2" and ref("lily.tokens", ctx) == "6"
    assert text_of(ref("lily.top(her, 3)", ctx)) == "Lily 0.66, ·her 0.12, ·wanted 0.10"
    assert text_of(ref("lily.top(her, 1)", ctx)) == "Lily 0.66"
    assert text_of(ref("lily.argmax(her)", ctx)) == "Lily"
    assert text_of(ref("lily.token(5)", ctx)) == "·her"
    assert text_of(ref("lily.rule", ctx)) == "the head with the largest weight from ·her to Lily"
    assert ref("lily.weight(·her, Lily)", ctx) == "0.66"
    assert ref("model.tiny.nLayer", ctx) == "4" and ref("model.tiny.nHeads", ctx) == "16"
    assert ref("model.tiny.sqrtHeadDim", ctx) == "2.00" and ref("model.tiny.nParams", ctx) == "123,456"
    # No gpt2 traces in this store: its shape comes from the committed config.json, not a placeholder.
    assert ref("model.gpt2.nLayer", ctx) == "12" and ref("model.gpt2.nHeads", ctx) == "144"
    assert ref("model.gpt2.headDim", ctx) == "64" and ref("model.gpt2.nParams", ctx) == "124,439,808"
    assert ref("model.gpt2.sqrtHeadDim", ctx) == "8.00" and ref("model.gpt2.vocabSize", ctx) == "50,257"
    assert "607a30d783df" in ref("model.gpt2.revision", ctx)  # the pinned revision, known without weights
    assert ctx.missing == {}


@pytest.mark.parametrize(
    "text, message",
    [
        ("nope.layer", "no figure with id 'nope' on this page (ids here: lily)"),
        ("lily.weight(her, cat)", "no token 'cat' in the sentence"),
        ("lily.weight(Lily, her)", "cannot look ahead"),
        ("lily.colour", "an attention figure has no 'colour'"),
        ("lily.weight(her)", "'weight' takes 2 arguments, not 1. Fix: write `{{ lily.weight(from, to) }}`"),
        ("lily.top(her, 3, 4)", "'top' takes 1 to 2 arguments, not 3. Fix: write `{{ lily.top(from, [n]) }}` ([x]: optional)"),
        ("lily.layer(2)", "'layer' takes 0 arguments, not 1. Fix: write it without arguments"),
        ("model.tiny.colour", "unknown model field 'colour'"),
        ("model.bert.nLayer", "unknown model 'bert'"),
    ],
)
def test_ref_errors_are_one_line_with_file_and_line(tmp_path, text, message):
    ctx = ctx_for(tmp_path, [lily_trace()])
    render.render(directive("attention", LILY_BLOCK), ctx)
    with pytest.raises(LessonError) as e:
        ref(text, ctx, where="content/page.md:20")
    assert str(e.value).startswith("content/page.md:20: ") and message in str(e.value) and "Fix: " in str(e.value)
    assert "\n" not in str(e.value)


def test_pending_figure_refs_say_pending(tmp_path):
    ctx = ctx_for(tmp_path)
    render.render(directive("attention", LILY_BLOCK), ctx)
    assert ref("lily.weight(her, Lily)", ctx) == '<span class="course-pending-ref">pending</span>'
    with pytest.raises(LessonError, match="has no 'colour'"):
        ref("lily.colour", ctx)


def test_stand_in_traces_are_refused(tmp_path, monkeypatch):
    monkeypatch.delenv("COURSE_ALLOW_STANDIN", raising=False)
    ctx = ctx_for(tmp_path, [lily_trace(stand_in=True)])
    with pytest.raises(LessonError, match=r"^content/page.md:3: attention: .*stand-in"):
        render.render(directive("attention", LILY_BLOCK), ctx)
    monkeypatch.setenv("COURSE_ALLOW_STANDIN", "1")
    assert "course-summary" in render.render(directive("attention", LILY_BLOCK), Ctx(store=TraceStore(tmp_path)))


# ---------------------------------------------------------------- escaping

NASTY = ["</script><img src=x onerror=alert(1)>", ' "quoted" & \'single\'', "{{ lily.layer }}", " \u202eevil\u202c", " 🙂", "<b>"]


def test_every_output_escapes_token_text(tmp_path):
    t = synthetic_trace("nasty", tokens=NASTY, plant={(0, 0, 5): {0: 0.9, 5: 0.1}})
    t["text"] = "".join(NASTY)
    ctx = ctx_for(tmp_path, [t])
    body = 'model: tiny\nsentence: ' + json.dumps(t["text"], ensure_ascii=False) + '\nlayer: 1\nhead: 1\nid: bad\ncaption: "<i>cap</i>"\n'
    outs = [render.render(directive("attention", body), ctx)]
    outs.append(render.render(directive("predictions", "model: tiny\nsentences: [" + json.dumps(t["text"], ensure_ascii=False) + "]\n"), ctx))
    outs.append(render.render(directive("softmax", 'scores: [1, 2]\nlabels: ["<x>", "\\"q\\""]\n'), ctx))
    outs.append(render.render(directive("stepper", 'tokens: ["<b>x</b>", "<img src=y>\u202e", "<x>"]\nquery: [[1], [0], [2]]\nkey: [[1], [1], [1]]\nvalue: [[1], [0], [1]]\n'), ctx))
    outs.append(ref("bad.top(#5, 3)", ctx))
    outs.append(ref("bad.argmax(#5)", ctx))
    for out in outs:
        scripts = re.findall(r'<script type="application/json" class="course-data">(.*?)</script>', out, re.S)
        rest = re.sub(r'<script type="application/json" class="course-data">.*?</script>', "", out, flags=re.S)
        assert "<img" not in rest and "<b>" not in rest and "<x>" not in rest and "<i>" not in rest
        assert "\u202e" not in out  # a character reference in HTML, \u202e in JSON
        for s in scripts:
            assert "</" not in s and "<" not in s and ">" not in s and "&" not in s
            assert s.isascii()
            json.loads(s)
    attention = outs[0]
    assert "&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;" in attention
    assert "&quot;quoted&quot; &amp; &#x27;single&#x27;" in attention
    assert "{{ lily.layer }}" in attention  # shown as text; the page's reference processor never sees it (stashed)
    assert "&#x202E;" in attention and "🙂" in attention
    data = course_data(attention)
    assert [x["text"] for x in data["tokens"]] == NASTY
    assert "\\ud83d\\ude42" in attention and "\\u003c/script\\u003e" in attention
    for part in assets.head_parts(stored(tmp_path, t)).values():
        assert part.isascii() and b"</" not in part


def stored(root, t):
    return TraceStore(root).load(t["model"], t["text"])


def part_body(js: bytes) -> tuple[str, dict]:
    """(name, value) of a part: `window.courseTraceParts["<name>"] = <value>;`."""
    text = js.decode("ascii")
    assert text.startswith(assets.PART_PREFIX + "\n") and text.count("\n") == 2
    m = re.fullmatch(r'window\.courseTraceParts\[("[^"]+")\] = (.*);', text.splitlines()[1])
    return json.loads(m.group(1)), json.loads(m.group(2))


def test_head_parts_hold_the_stored_files_arrays_and_each_heads_page_weights(tmp_path):
    """The site's parts (and the one-file chapters', the same files joined) are encoded: one per
    head, `<layer>-<head>.js`, with the trace file's own q, k, v, scores, weights and out objects,
    byte for byte, whose weights decode (as the store's loader rounds) to exactly the weights the
    renderer printed from; and weights.js with every head's weights only. All
    from the store's one read of the file. A trace held only in memory (a plain dict) gets plain
    parts, with the same weights."""
    from test_committed_traces import decode as decode_readme  # traces/README.md's decoder

    [path] = write_traces(tmp_path, [lily_trace()])
    trace = TraceStore(tmp_path).load("tiny", LILY)
    raw = path.read_bytes()
    parts = assets.head_parts(trace)
    n_layer, n_head = trace["meta"]["nLayer"], trace["meta"]["nHead"]
    assert list(parts) == ["weights.js"] + [f"{l}-{h}.js" for l in range(n_layer) for h in range(n_head)]
    assert assets.download_copy(trace) == raw  # the download copy is the file, as the store read it
    doc = json.loads(raw)
    page = context.trace_weights(trace)  # (layer, head, query, key)
    key = trace["key"]
    name, weights = part_body(parts["weights.js"])
    assert name == f"{key}/weights" and set(weights) == {"schemaVersion", "key", "weights"}
    for l in range(n_layer):
        for h in range(n_head):
            name, part = part_body(parts[f"{l}-{h}.js"])
            assert name == f"{key}/{l}-{h}" and (part["layer"], part["head"]) == (l, h)
            assert part["schemaVersion"] == schema.SCHEMA_VERSION and part["key"] == key and "tokens" not in part and "text" not in part
            assert part["meta"] == {"headDim": trace["meta"]["headDim"], "scaledMaskedFactor": trace["meta"]["headDim"] ** -0.5}
            head = part["fields"]
            fields = ("q", "k", "v", "scores", "weights", "out")
            stored = {**doc["layers"][l]["heads"][h], **doc["layers"][l]["kvHeads"][h]}  # tiny: one head per key/value head
            assert {f: head[f] for f in fields} == {f: stored[f] for f in fields}
            assert np.array_equal(np.round(decode_readme(head["weights"]), 6), page[l, h]), (l, h)
            assert weights["weights"][l][h] == head["weights"]
    plain = assets.head_parts(dict(trace))
    assert "schemaVersion" not in part_body(plain["2-2.js"])[1]
    assert part_body(plain["2-2.js"])[1]["fields"]["weights"] == page[2, 2].tolist()
    assert part_body(plain["1-3.js"])[1]["fields"]["q"] == trace["layers"][1]["heads"][3]["q"]
    assert part_body(plain["weights.js"])[1]["weights"][1][3] == page[1, 3].tolist()
    # the one-file chapters' script: every part, the prefix once
    joined = assets.heavy_part_js(trace).decode("ascii")
    assert joined.count(assets.PART_PREFIX) == 1 and joined.count("window.courseTraceParts[") == 1 + n_layer * n_head
    held = lily_trace()  # a trace held only in memory: its download copy is the trace as JSON
    assert json.loads(assets.download_copy(held)) == json.loads(json.dumps(held))


def test_the_asset_step_reads_no_trace_file(tmp_path, monkeypatch):
    """write_trace_assets takes everything from the loaded trace: the file is not opened again."""
    [path] = write_traces(tmp_path, [lily_trace()])
    trace = TraceStore(tmp_path).load("tiny", LILY)
    path.unlink()  # were it read again, this would fail or fall back to a plain part
    written = assets.write_trace_assets(trace, tmp_path / "generated")
    [copy] = [p for p in written if p.suffix == ".json"]
    parts = [p for p in written if p.suffix == ".js"]
    assert copy.read_bytes() == trace.raw and len(parts) == 1 + 16
    assert all(b'"schemaVersion"' in p.read_bytes() for p in parts)


def test_trace_assets_are_byte_identical_atomic_and_pruned(tmp_path):
    """Writing the same trace twice writes nothing the second time (same bytes); a stale file in
    the part folder goes; no temporary file is left."""
    write_traces(tmp_path, [lily_trace()])
    trace = TraceStore(tmp_path).load("tiny", LILY)
    gen = tmp_path / "generated"
    first = assets.write_trace_assets(trace, gen)
    folder = gen / "traces" / "tiny" / trace["key"]
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    (folder / "9-9.js").write_text("stale")
    assert assets.write_trace_assets(trace, gen) == []
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before
    assert len(first) == 1 + len(before) and not list(gen.rglob(".*"))
    other = gen / "elsewhere"
    assets.write_trace_assets(trace, other)
    assert {p.name: p.read_bytes() for p in (other / "traces" / "tiny" / trace["key"]).iterdir()} == before


# ---------------------------------------------------------------- the Markdown extension, in process


def md_convert(tmp_path: Path, page: str, traces=(), name: str = "page.md") -> str:
    """Convert one page the way mkdocs.yml configures Markdown (cwd = tmp_path)."""
    content = tmp_path / "content"
    content.mkdir(exist_ok=True)
    (content / name).write_text(page, encoding="utf-8")
    write_traces(tmp_path / "traces", list(traces))
    from generator.markdown import course as markdown_ext

    fences = [
        {"name": k, "class": "course", "format": markdown_ext.fence_format, "validator": markdown_ext.fence_validator}
        for k in D.DIRECTIVE_KINDS
    ]
    md = markdown.Markdown(
        extensions=["attr_list", "md_in_html", "admonition", "tables", "toc", "pymdownx.details", "pymdownx.tabbed", "pymdownx.superfences", "generator.markdown.course"],
        extension_configs={
            "pymdownx.tabbed": {"alternate_style": True},
            "pymdownx.superfences": {"custom_fences": fences},
            "generator.markdown.course": {"traces_dir": str(tmp_path / "traces"), "docs_dir": str(content), "training_log": str(tmp_path / "none.json")},
        },
    )
    body = page.split("---\n", 2)[2] if page.startswith("---\n") else page
    return md.convert(body)


PAGE = """\
---
title: Test
---

# Attention

Intro: {{ lily.weight(her, Lily) }} and `{{ not.a.ref }}` in code.

=== "Story"

    ```attention
    model: tiny
    sentence: "Lily wanted to play with her"
    pick: {rule: max-weight, from: her, to: Lily}
    id: lily
    ```

    In layer {{ lily.layer }}, ·her looks at {{ lily.top(her, 3) }}.

=== "Code"

    ```python
    print("{{ not a ref either }}")
    ```

Math: $\\frac{q \\cdot k}{\\sqrt{d}}$ costs \\$5, and

$$
\\mathrm{softmax}(x)_i = \\frac{e^{x_i}}{\\sum_j e^{x_j}}
$$
"""


def test_markdown_page_renders_figures_refs_and_math(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    out = md_convert(tmp_path, PAGE, [lily_trace()])
    assert out.count('<figure class="course-fig" id="fig-1" data-kind="attention"') == 1
    assert "Intro: 0.66 and <code>{{ not.a.ref }}</code>" in unbound(out)
    # the number is bound to the cell it came from: figure 1, layer 3, head 3, ·her (5) to Lily (0)
    assert re.search(r'Intro: <span class="course-ref course-ref-cell"[^>]* data-fig="fig-1" data-layer="2" data-head="2" data-panel="0" data-q="5" data-k="0"[^>]*>0\.66</span>', out)
    assert "In layer 3, ·her looks at" in unbound(out) and "Lily</span> 0.66" in unbound(out)
    assert "{{ not a ref either }}" in out  # in a code block, untouched
    assert "# @source" not in out and " @1" not in out
    assert out.count("<math") == 2 and 'display="block"' in out and "costs $5" in out
    assert "<pre><code>model:" not in out


BEN = "Ben wanted to play with her"
COMPARE_PAGE = """\
# Compare

```compare
model: tiny
sentences: ["Lily wanted to play with her", "Ben wanted to play with her"]
layer: 3
head: 3
{token}id: pair
```

{prose}
"""


@pytest.mark.parametrize("token, prose, focus", [
    ("", "·to gives {{ pair.weight(to, Lily, 1) }} to Lily; it has {{ pair.tokens }} tokens.", 2),  # the row the prose reads
    ("", "In layer {{ pair.layer }}, {{ pair.top(#1) }}, then {{ pair.weight(to, Lily) }}.", 1),  # the first such reference
    ("", "Layer {{ pair.layer }} only.", 5),  # no row named: the last token
    ("token: play\n", "·to gives {{ pair.weight(to, Lily, 1) }}.", 3),  # a `token:` wins
])
def test_compare_focus_follows_the_pages_references(tmp_path, monkeypatch, token, prose, focus):
    """Without `token:`, the compare figure opens on the row its references read, not
    on the last token."""
    monkeypatch.chdir(tmp_path)
    out = md_convert(tmp_path, COMPARE_PAGE.format(token=token, prose=prose), [synthetic_trace(LILY), synthetic_trace(BEN)])
    assert re.search(r'data-kind="compare"[^>]* data-token="(\d+)"', out).group(1) == str(focus)
    diff = re.search(r'<table class="course-diff-table">.*?</table>', out, re.S).group(0)
    assert len(re.findall(r"<tr><td>", diff)) == focus + 1  # the difference table follows the same row


def tokens_of(*texts: str) -> list[dict]:
    return [{"text": t, "display": t} for t in texts]


@pytest.mark.parametrize("a, b, pairs, to2, to1", [
    # the same length, one word swapped: position by position
    (("E", "Lily", " wanted"), ("E", "Ben", " wanted"), [(0, 0), (1, 1), (2, 2)], [0, 1, 2], [0, 1, 2]),
    # a word more in sentence 2: the rest pairs with itself, one place on; the extra word stands alone
    (("E", "Lily", " wanted", " her"), ("E", "Lily", " and", " wanted", " her"),
     [(0, 0), (1, 1), (None, 2), (2, 3), (3, 4)], [0, 1, 3, 4], [0, 1, 1, 2, 3]),
    # a longer stretch that differs: one for one, then the leftover alone; a word fewer at the end
    (("E", "One", " day", ",", " Lily", " her", "."), ("E", "The", " dog", " Lily", " her"),
     [(0, 0), (1, 1), (2, 2), (3, None), (4, 3), (5, 4), (6, None)], [0, 1, 2, 2, 3, 4, 4], [0, 1, 2, 4, 5]),
])
def test_compare_aligns_the_sentences_token_by_token(a, b, pairs, to2, to1):
    from generator.render.compare import align
    al = align(tokens_of(*a), tokens_of(*b))
    assert list(al.pairs) == pairs and list(al.to2) == to2 and list(al.to1) == to1
    assert al.in_step == (len(a) == len(b))


def test_compare_of_sentences_that_do_not_line_up_follows_the_same_token(tmp_path, monkeypatch):
    """·her is at position 8 in one sentence and at 9 in the other: both panels, the picker and
    the difference table follow ·her, not position 8 (which is ·with in the second)."""
    monkeypatch.chdir(tmp_path)
    one, two = "One day, Lily wanted to play with her", "The dog saw Lily and wanted to play with her"
    toks = {one: ["One", " day", ",", " Lily", " wanted", " to", " play", " with", " her"],
            two: ["The", " dog", " saw", " Lily", " and", " wanted", " to", " play", " with", " her"]}
    page = COMPARE_PAGE.replace('["Lily wanted to play with her", "Ben wanted to play with her"]', json.dumps([one, two])).format(
        token="", prose="·her gives {{ pair.weight(her, Lily, 1) }} to Lily.")
    out = md_convert(tmp_path, page, [synthetic_trace(t, tokens=toks[t]) for t in (one, two)])
    focus_rows = re.findall(r'<tr class="course-focus"><th scope="row"><span class="course-tok" aria-label="([^"]+)"', out)
    assert focus_rows == ["space her", "space her"], focus_rows
    summaries = re.findall(r'<p class="course-summary"[^>]*>In layer \d+, head \d+, <span class="course-tok" aria-label="([^"]+)"', out)
    assert summaries == ["space her", "space her"]
    assert '<option value="3">3: ·Lily</option>' in out and '<option value="0">0: One / The</option>' in out
    diff = re.search(r'<table class="course-diff-table">.*?</table>', out, re.S).group(0)
    rows = [re.findall(r"<td>(.*?)</td>", r) for r in re.findall(r"<tr><td>.*?</tr>", diff)]
    assert [r[0] for r in rows] == ["0", "1", "2", "3", "– / 4", "4 / 5", "5 / 6", "6 / 7", "7 / 8", "8 / 9"]
    assert "·her" in rows[-1][1] and "·her" in rows[-1][3] and "·and" in rows[4][3] and rows[4][1] == "–"
    assert "<th scope=\"col\">Positions (1 / 2)</th>" in diff and "matching tokens on one row" in diff
    data = json.loads(re.search(r'data-kind="compare".*?<script type="application/json" class="course-data">(.*?)</script>', out, re.S).group(1))
    assert data["align"]["to2"][8] == 9 and data["align"]["to1"][4] == 3


@pytest.mark.parametrize(
    "block, line, message",
    [
        ('model: bert\nsentence: "a b"\nlayer: 1\nhead: 1', 4, "attention: unknown model 'bert'"),  # the option's line
        ('model: tiny\nsentence: "a b"\nlayer: 9\nhead: 1', 6, "attention: layer 9 is out of range for tiny"),
        ('model: tiny\nsentence: "a: b\nlayer: 1', 5, "attention: malformed YAML at column 11: the quote \" is never closed"),  # the quote's own line
        ('model: tiny\nsentence: "a b"\nlayer: 1\nhead: 1\ncolour: red', 8, "attention: unknown option 'colour'"),
    ],
)
def test_bad_blocks_raise_superfences_exception_with_file_and_line(tmp_path, monkeypatch, block, line, message):
    from pymdownx.superfences import SuperFencesException

    monkeypatch.chdir(tmp_path)
    page = "# T\n\n```attention\n" + block + "\n```\n"
    with pytest.raises(SuperFencesException) as e:
        md_convert(tmp_path, page)
    assert str(e.value).startswith(f"content/page.md:{line}: {message}"), str(e.value)
    assert "Fix: " in str(e.value)


def test_bad_block_inside_tabs_names_its_line(tmp_path, monkeypatch):
    from pymdownx.superfences import SuperFencesException

    monkeypatch.chdir(tmp_path)
    page = "---\ntitle: x\n---\n\n# T\n\n=== \"Story\"\n\n    Text.\n\n    ```attention\n    model: bert\n    sentence: a\n    ```\n"
    with pytest.raises(SuperFencesException, match=r"^content/page.md:12: attention: unknown model 'bert'"):
        md_convert(tmp_path, page)


def test_bad_refs_name_their_line(tmp_path, monkeypatch):
    from pymdownx.superfences import SuperFencesException

    monkeypatch.chdir(tmp_path)
    page = PAGE.replace("In layer {{ lily.layer }}", "In layer {{ lily.weight(her, cat) }}")
    with pytest.raises(SuperFencesException, match=r"^content/page.md:18: reference \{\{ lily.weight\(her, cat\) \}\}: .*no token 'cat'"):
        md_convert(tmp_path, page, [lily_trace()])
    page = PAGE.replace("Intro: {{ lily.weight(her, Lily) }}", "Intro: {{ lilly.layer }}")
    with pytest.raises(SuperFencesException, match=r"^content/page.md:7: reference \{\{ lilly.layer \}\}: no figure with id 'lilly'"):
        md_convert(tmp_path, page, [lily_trace()])


def test_find_source_skips_front_matter(tmp_path):
    from generator.lessons.source import find_source

    (tmp_path / "a.md").write_text("---\ntitle: A\n---\n\nbody line\nmore\n", encoding="utf-8")
    (tmp_path / "b.md").write_text("other\n", encoding="utf-8")
    assert find_source("body line\nmore", tmp_path) == (tmp_path / "a.md", 5)
    assert find_source("other", tmp_path) == (tmp_path / "b.md", 1)
    assert find_source("nowhere", tmp_path) is None


def test_annotate_source_marks_fences_and_refs():
    lines = ["x {{ a.b }} `{{ c.d }}`", "    ```attention", "    model: tiny", "    ```", "{{ e.f }}"]
    out = refs.annotate_source(lines, "content/p.md", 10)
    assert out[0] == "x {{ a.b  @10}} `{{ c.d }}`"
    assert out[2] == "    # @source content/p.md:11"
    assert out[-1] == "{{ e.f  @14}}"
    assert refs.parse_ref("a.b  @10", "content/p.md").where == "content/p.md:10"


def test_a_figure_that_failed_adds_no_second_mistake_where_a_diagram_or_grid_names_it(tmp_path, monkeypatch):
    """A damaged store (or any mistake) failing an attention figure also said that the architecture
    diagram's `here` and the ablation's `grid` named no figure: the page now says the figure's own
    mistake only."""
    monkeypatch.chdir(tmp_path)
    page = ("# P\n\n```attention\nmodel: tiny\nsentence: \"" + LILY + "\"\nlayer: 9\nhead: 1\nid: lily\n```\n\n"
            "```architecture\nmodel: tiny\nhere: [lily, MLP2]\n```\n\n"
            "```ablation\nmodel: tiny\nsentence: \"" + LILY + "\"\ntoken: her\ngrid: lily\n```\n")
    with pytest.raises(LessonError) as e:
        md_convert(tmp_path, page, traces=[lily_trace()])
    lines = str(e.value).splitlines()
    assert len(lines) == 1 and "layer 9" in lines[0], lines
