"""The drawn diagrams (issue 46, item 3): `architecture` (the model from its config) and `arrows`
(a stepper's vectors). Golden files of the SVG, the shape drawn from the config (4 × 4 for the
tiny model, 12 × 12 for GPT-2's), every number taken from the stepper, a text alternative on every
picture, one-line errors, byte-identical output, and the built chapters holding them as SVG."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser

import pytest

from conftest import REPO
from generator import registry, render
from generator.lessons.errors import LessonError
from test_render import check_golden, ctx_for, directive, ref

TOY = """\
    tokens: [Lily, ran, she]
    query: [[1, 0], [0, 1], [2, 0]]
    key: [[2, 0], [0, 1], [1, 1]]
    value: [[1, 0], [0, 1], [0.5, 0.5]]
    focus: she
    id: toy
"""


def with_stepper(tmp_path, body: str = TOY):
    ctx = ctx_for(tmp_path)
    render.render(directive("stepper", body, "content/page.md:1"), ctx)
    return ctx


def drawn(kind: str, body: str, ctx, where: str = "content/page.md:20") -> str:
    return render.render(directive(kind, body, where), ctx)


class Svgs(HTMLParser):
    """Each <svg> of a fragment: its attributes, the ids and texts of its <title>/<desc>, and
    its <rect class="course-dia-head"> per layer group; plus every <script> seen."""

    def __init__(self) -> None:
        super().__init__()
        self.svgs: list[dict] = []
        self.scripts = 0
        self._text_of: str | None = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "svg":
            self.svgs.append({"attrs": a, "texts": {}, "layers": []})
        elif tag == "script":
            self.scripts += 1
        elif tag in ("title", "desc") and self.svgs:
            self._text_of = a.get("id", "")
            self.svgs[-1]["texts"][self._text_of] = ""
        elif tag == "g" and "course-dia-layer" in a.get("class", ""):
            self.svgs[-1]["layers"].append(0)
        elif tag == "rect" and "course-dia-head" in a.get("class", "").split():
            self.svgs[-1]["layers"][-1] += 1

    def handle_endtag(self, tag):
        if tag in ("title", "desc"):
            self._text_of = None

    def handle_data(self, data):
        if self._text_of is not None:
            self.svgs[-1]["texts"][self._text_of] += data


def svgs_of(fragment: str) -> Svgs:
    p = Svgs()
    p.feed(fragment)
    return p


def assert_text_alternatives(fragment: str) -> None:
    """Every picture is role="img", named by a <title> and described by a <desc> of its own, both
    with words in them, and the figure needs no script."""
    p = svgs_of(fragment)
    assert p.svgs and p.scripts == 0
    for svg in p.svgs:
        assert svg["attrs"].get("role") == "img"
        ids = svg["attrs"]["aria-labelledby"].split()
        assert len(ids) == 2 and set(ids) == set(svg["texts"]), (ids, svg["texts"])
        assert all(len(svg["texts"][i].split()) >= 5 for i in ids), svg["texts"]


# ---------------------------------------------------------------- golden files


def test_golden_architecture(tmp_path, update_golden):
    check_golden("architecture", drawn("architecture", "model: tiny\nhere: [L2H3, MLP4]\nid: parts\n", ctx_for(tmp_path)), update_golden)


def test_golden_arrows(tmp_path, update_golden):
    check_golden("arrows", drawn("arrows", "stepper: toy\n", with_stepper(tmp_path)), update_golden)


def test_show_picks_the_steps(tmp_path):
    """All five steps by default (4 pictures); steps 1-3 (the plane and the bars) or 4-5 (two planes)."""
    ctx = with_stepper(tmp_path)
    titles = {show: re.findall(r"<title[^>]*>(Steps? \d)", drawn("arrows", f"stepper: toy\nshow: {show}\n", ctx, f"content/page.md:{20 + i * 5}"))
              for i, show in enumerate(("all", "scores", "mixing"))}
    assert titles == {"all": ["Step 1", "Steps 1", "Step 4", "Step 5"], "scores": ["Step 1", "Steps 1"], "mixing": ["Step 4", "Step 5"]}


# ---------------------------------------------------------------- the model, from its config


def heads_per_layer(fragment: str) -> list[int]:
    (svg,) = svgs_of(fragment).svgs
    return svg["layers"]


def test_the_tiny_model_is_drawn_4_by_4_and_gpt2_12_by_12(tmp_path):
    ctx = ctx_for(tmp_path)
    assert heads_per_layer(drawn("architecture", "model: tiny\n", ctx)) == [4] * 4
    gpt2 = drawn("architecture", "model: gpt2\nhere: L12H12\n", ctx)
    assert heads_per_layer(gpt2) == [12] * 12
    assert "50,257 tokens" in gpt2 and "768 numbers" in gpt2, "the boxes' numbers come from GPT-2's config too"


def test_the_shape_is_read_from_the_config_file(tmp_path, monkeypatch):
    """A model of another shape draws another picture: nothing is drawn from a fixed count."""
    cfg = json.loads(registry.CONFIG_FILES["tiny"].read_text(encoding="utf-8")) | {"n_layer": 3, "n_head": 6, "n_embd": 96}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg), encoding="utf-8")
    monkeypatch.setitem(registry.CONFIG_FILES, "tiny", path)
    out = drawn("architecture", "model: tiny\n", ctx_for(tmp_path))
    assert heads_per_layer(out) == [6] * 3
    assert "3 layers of 6 heads" in out and "96 numbers" in out


def test_here_marks_the_parts_named_and_the_head_of_an_attention_figure(tmp_path):
    ctx = ctx_for(tmp_path)
    out = drawn("architecture", "model: tiny\nhere: [L2H3, MLP4, unembedding]\n", ctx)
    marked = re.findall(r'<rect class="course-dia-(\w+) course-dia-here"', out)
    assert marked == ["head", "mlp", "box"]
    assert out.count(">◀ here<") == 3
    assert "Marked “here”: layer 2, head 3, the MLP of layer 4 and the unembedding." in out
    from conftest import lily_trace
    from test_render import LILY_BLOCK
    ctx = ctx_for(tmp_path, [lily_trace()])
    render.render(directive("attention", LILY_BLOCK, "content/page.md:1"), ctx)
    layer, head = ref("lily.layer", ctx), ref("lily.head", ctx)
    out = drawn("architecture", "model: tiny\nhere: lily\n", ctx)
    assert f"Marked “here”: layer {layer}, head {head}." in out
    heads = re.findall(r'<rect class="course-dia-head( course-dia-here)?"', out)
    assert [i for i, h in enumerate(heads) if h] == [(int(layer) - 1) * 4 + int(head) - 1]


# ---------------------------------------------------------------- the stepper's numbers, drawn


def test_the_arrows_show_the_steppers_own_numbers(tmp_path):
    ctx = with_stepper(tmp_path)
    scores = drawn("arrows", "stepper: toy\nshow: scores\n", ctx)
    bars = re.findall(r'<text class="course-dia-num"[^>]*>([^<]*)</text>', scores)
    tokens = ["Lily", "ran", "she"]
    want = [ref(f"toy.{name}(she, {t})", ctx) for t in tokens for name in ("score", "scaled", "weight")]
    # the bars are written column by column: every score, then every scaled score, then every share
    assert bars == [want[i * 3 + c] for c in range(3) for i in range(3)]
    assert f"divided by {ref('toy.sqrtd', ctx)}" in scores
    assert f"the query of she, {ref('toy.query(she)', ctx)}" in scores
    mixing = drawn("arrows", "stepper: toy\nshow: mixing\n", ctx, "content/page.md:30")
    assert f"the result of she: {ref('toy.out(she)', ctx)}" in mixing
    assert f"Lily’s {ref('toy.value(Lily)', ctx)} × {ref('toy.weight(she, Lily)', ctx)}" in mixing


def test_other_vectors_draw_other_arrows(tmp_path):
    """The picture follows the stepper's vectors: change a key and its arrow moves."""
    a = drawn("arrows", "stepper: toy\n", with_stepper(tmp_path))
    b = drawn("arrows", "stepper: toy\n", with_stepper(tmp_path, TOY.replace("[1, 1]]", "[-1, 1]]")))
    assert a != b and "key (she)" in b
    assert "she −2" in b  # the new key’s score, −1 × 2 + 1 × 0, in its description


def test_every_picture_has_a_text_alternative_and_no_script(tmp_path):
    ctx = with_stepper(tmp_path)
    for kind, body in [("architecture", "model: tiny\nhere: residual\n"), ("architecture", "model: gpt2\n"),
                       ("arrows", "stepper: toy\n"), ("arrows", "stepper: toy\nshow: mixing\n")]:
        assert_text_alternatives(drawn(kind, body, ctx))


def test_a_diagram_is_byte_identical_every_time(tmp_path):
    def page() -> str:
        ctx = with_stepper(tmp_path)
        return "".join(drawn(k, b, ctx) for k, b in [("architecture", "model: gpt2\nhere: [embedding, L3]\n"),
                                                     ("arrows", "stepper: toy\n"), ("arrows", "stepper: toy\nshow: mixing\n")])
    assert page() == page()


# ---------------------------------------------------------------- mistakes: one line, at the option


@pytest.mark.parametrize("kind,body,line,words", [
    ("architecture", "model: tiny\nhere: L5H1\n", 22, "'here' names L5H1, but tiny has layers 1 to 4"),
    ("architecture", "model: tiny\nhere: L2H7\n", 22, "tiny's layers have heads 1 to 4"),
    ("architecture", "model: tiny\nhere: embeding\n", 22, "did you mean embedding?"),
    ("architecture", "model: tiny\nhere: [L1, L2, L3, L4, MLP1]\n", 22, "more than 4"),
    ("architecture", "model: tiny\nheer: L2\n", 22, "unknown option 'heer': did you mean here?"),
    ("architecture", "model: bert\n", 21, "unknown model 'bert'"),
    ("arrows", "stepper: toy\nshow: mixng\n", 22, "did you mean mixing?"),
    ("arrows", "stepper: [toy]\n", 21, "'stepper' must be the id of a stepper figure"),
    ("arrows", "show: scores\n", 20, "missing option 'stepper'"),
])
def test_bad_options_are_one_line_at_their_line(kind, body, line, words):
    with pytest.raises(LessonError) as e:
        directive(kind, body, "content/page.md:20")
    text = str(e.value)
    assert "\n" not in text and text.startswith(f"content/page.md:{line}: {kind}: ") and words in text and " Fix: " in text


@pytest.mark.parametrize("body,stepper,words", [
    ("stepper: nosuch\n", TOY, "stepper 'nosuch' is not the id of a stepper figure above on this page (steppers above: toy)"),
    ("stepper: toy\n", TOY.replace("[[1, 0], [0, 1], [2, 0]]", "[[1, 0, 0], [0, 1, 0], [2, 0, 0]]").replace("[[2, 0], [0, 1], [1, 1]]", "[[2, 0, 0], [0, 1, 0], [1, 1, 0]]"),
     "the queries and keys of stepper 'toy' have 3 numbers, and only 2 can be drawn"),
    ("stepper: toy\nshow: mixing\n", TOY.replace("[0.5, 0.5]]", "[0.5, 0.5]]").replace("value: [[1, 0], [0, 1], [0.5, 0.5]]", "value: [[1], [0], [2]]"),
     "the values of stepper 'toy' have 1 numbers"),
])
def test_a_stepper_that_cannot_be_drawn_is_one_line_at_the_option(tmp_path, body, stepper, words):
    ctx = with_stepper(tmp_path, stepper)
    with pytest.raises(LessonError) as e:
        drawn("arrows", body, ctx)
    text = str(e.value)
    assert "\n" not in text and text.startswith("content/page.md:21: arrows: ") and words in text, text


def test_here_naming_no_figure_above_is_one_line(tmp_path):
    with pytest.raises(LessonError) as e:
        drawn("architecture", "model: tiny\nhere: lily\n", ctx_for(tmp_path))
    assert str(e.value).startswith("content/page.md:22: architecture: 'here' names 'lily', which is no part of the model")


# ---------------------------------------------------------------- the built chapters


@pytest.mark.slow
def test_the_chapters_hold_the_diagrams_as_svg_with_text_alternatives():
    """Chapters 2, 3 and 5 show the model as a picture, chapter 3 the stepper's arrows too, and
    chapter 4 GPT-2's picture (12 × 12, from its published config, so it needs no weights), beside
    the tiny one's 4 × 4; each is SVG in the page itself (shown without JavaScript), with its title
    and description."""
    from course_builds import shared_course

    site = shared_course() / "build" / "site"
    want = {"vectors.html": ["architecture"], "attention.html": ["arrows", "architecture"], "causal.html": ["architecture"],
            "gpt2.html": ["architecture"]}
    for page, kinds in want.items():
        text = (site / page).read_text(encoding="utf-8")
        figures = re.findall(r'<figure class="course-fig course-diagram" id="fig-\d+" data-kind="(\w+)".*?</figure>', text, re.S)
        assert figures == kinds, (page, figures)
        for fragment in re.findall(r'<figure class="course-fig course-diagram".*?</figure>', text, re.S):
            assert_text_alternatives(fragment)
    gpt2 = re.search(r'<figure class="course-fig course-diagram"[^>]*data-kind="architecture"[^>]*>.*?</figure>',
                     (site / "gpt2.html").read_text(encoding="utf-8"), re.S)[0]
    assert 'data-model="gpt2"' in gpt2 and ">Layer 12<" in gpt2 and ">Layer 13<" not in gpt2
