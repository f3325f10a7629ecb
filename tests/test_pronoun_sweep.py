"""The her/his test over many sentences (issue 47): traces/tiny/pronouns.json, its reader, the
`pronouns` figure and its references.

The data test recomputes a few cases with its own hook on the model (not pronoun_sweep's code):
the committed numbers must be what the model gives."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from conftest import REPO
from generator import render
from generator.lessons import directives as D
from generator.lessons import refs
from generator.lessons.errors import LessonError
from generator.render.context import Ctx
from generator.store import DamagedFile, TraceStore, pronouns_file
from test_render import check_golden

TRACES = REPO / "traces"
CASES = [("{} wanted to play with", "Lily"), ("{} hugged", "Ben"), ("{} found", "Emma"), ("{} ran to", "Jack")]


def committed() -> dict:
    return json.loads((TRACES / "tiny" / pronouns_file.FILE).read_text(encoding="utf-8"))


# ---------------------------------------------------------------- the data


@pytest.fixture(scope="module")
def tiny():
    from generator.model import load

    return load.load("tiny")


def her_minus_his(lm, text: str, zero: tuple[int, int] | None = None) -> float:
    """logit(·her) − logit(·his) after `text`, with head (layer, head) from 0 zeroed if given."""
    import torch

    from generator import tokens

    ids = torch.tensor([[lm.bos_id] + list(lm.tokenizer_encode(text))])  # (1, token)
    her, his = tokens.vocab_token("tiny", "her").id, tokens.vocab_token("tiny", "his").id
    handle = None
    if zero is not None:
        layer, head = zero
        d = lm.model.config.n_embd // lm.model.config.n_head

        def pre(_mod, args):
            x = args[0].clone()  # (batch, token, width): the heads' outputs side by side
            x[:, :, head * d : (head + 1) * d] = 0
            return (x,)

        handle = lm.model.transformer.h[layer].attn.c_proj.register_forward_pre_hook(pre)
    try:
        with torch.inference_mode():
            logits = lm.model(ids).logits[0, -1]  # (vocab,)
    finally:
        if handle is not None:
            handle.remove()
    return float(logits[her] - logits[his])


def test_the_committed_set_is_the_recorded_one():
    from generator.model import pronoun_sweep

    doc = committed()
    assert doc["set"] == pronoun_sweep.record(pronoun_sweep.SweepConfig())
    assert len(doc["set"]["female"]) == len(doc["set"]["male"]) >= 6 and len(doc["set"]["templates"]) >= 12


@pytest.mark.parametrize("template,name", CASES)
def test_committed_numbers_are_the_models(tiny, template, name):
    doc = committed()
    s = doc["set"]
    t, i = s["templates"].index(template), (s["female"] + s["male"]).index(name)
    text = template.format(name)
    layer, head = s["head"][0] - 1, s["head"][1] - 1
    clean = her_minus_his(tiny, text)
    assert doc["clean"][t][i] == pytest.approx(clean, abs=1e-3)
    assert doc["zero"][t][i] == pytest.approx(her_minus_his(tiny, text, (layer, head)), abs=1e-3)
    changes = {(l + 1, h + 1): her_minus_his(tiny, text, (l, h)) - clean for l in range(4) for h in range(4)}
    top = max(changes, key=lambda k: abs(changes[k]))
    assert tuple(doc["topHead"][t][i]) == top
    assert doc["topChange"][t][i] == pytest.approx(changes[top], abs=1e-3)


def test_the_gpt2_shaped_path_runs_small():
    """The stand-in's path: a 2-layer GPT-2-shaped model with the tiny tokenizer, the small set."""
    from generator.model import causal, load, pronoun_sweep

    lm = load.from_parts("gpt2", load.random_model(2, 2, 32, 64, 4096), load.tiny_tokenizer(), "test")
    config = pronoun_sweep.SIZES["small"]
    out = pronoun_sweep.sweep(lm, causal.reference(lm), config)
    shape = (len(config.templates), len(config.female) + len(config.male))
    assert out["clean"].shape == out["zero"].shape == out["mean"].shape == shape
    assert np.isfinite(out["clean"]).all() and (out["topHead"] >= 1).all()


# ---------------------------------------------------------------- the reader


def damaged(doc: dict, tmp_path, change) -> str:
    change(doc)
    (tmp_path / "tiny").mkdir(exist_ok=True)
    (tmp_path / "tiny" / pronouns_file.FILE).write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(DamagedFile) as e:
        pronouns_file.read(tmp_path, "tiny", 4, 4)
    return str(e.value)


@pytest.mark.parametrize("change,words", [
    (lambda d: d.update(formatVersion=0), "is not a format-1 file"),
    (lambda d: d["set"].pop("templates"), "set does not record"),
    (lambda d: d["clean"].pop(), "clean is not 12 templates × 12 names"),
    (lambda d: d["zero"][0].__setitem__(0, "x"), "zero holds 'x'"),
    (lambda d: d["clean"][0].__setitem__(0, 1e300), "clean holds 1e+300, not a finite number within ±1e9"),
    (lambda d: d["set"].__setitem__("head", [5, 1]), "is not a head of a 4 × 4 model"),
    (lambda d: d["topHead"][3].__setitem__(2, [1, 9]), "topHead holds [1, 9]"),
    (lambda d: d["set"]["templates"].__setitem__(0, "no name here"), "has no {} for the name"),
])
def test_a_damaged_file_is_one_line(tmp_path, change, words):
    text = damaged(committed(), tmp_path, change)
    assert "\n" not in text and words in text and "pronouns.json" in text and "make traces" in text


def test_the_committed_file_reads():
    assert pronouns_file.read(TRACES, "tiny", 4, 4)["set"]["head"] == [2, 3]


# ---------------------------------------------------------------- the figure and its references


def ctx() -> Ctx:
    return Ctx(store=TraceStore(TRACES), page="content/page.md")


def figure(body: str, c: Ctx) -> str:
    return render.render(D.parse_directive("pronouns", body, "content/page.md:3"), c)


def ref(text: str, c: Ctx) -> str:
    return render.render_ref(refs.parse_ref(text, "content/page.md:20"), c)


def test_golden_pronouns(update_golden):
    check_golden("pronouns", figure("model: tiny\nid: sw\n", ctx()), update_golden)


def test_the_table_reads_without_javascript():
    html = figure("model: tiny\nablation: mean\nid: sw\n", ctx())
    assert "<script" not in html and "<table" in html and "replaced by its average" in html
    assert html.count('<th scope="row">') == 12 and "… hugged" in html


@pytest.mark.parametrize("body,line,words", [
    ("model: tiny\nablation: half\n", 5, "'ablation' must be one of zero, mean, not 'half'"),
    ("model: tiny\nablaton: zero\n", 5, "unknown option 'ablaton'"),
    ("ablation: zero\n", 3, "missing option 'model'"),
])
def test_bad_options_are_one_line_at_their_line(body, line, words):
    with pytest.raises(LessonError) as e:
        D.parse_directive("pronouns", body, "content/page.md:3")
    text = str(e.value)
    assert "\n" not in text and words in text and " Fix: " in text and text.startswith("content/page.md:")


def test_references_count_what_the_file_holds():
    """Recounted here from the file, as a reader would from the table (2 decimals)."""
    doc, c = committed(), ctx()
    figure("model: tiny\nid: sw\n", c)
    shown = lambda g: np.vectorize(lambda x: float(f"{x:.2f}") > 0)(np.asarray(g))  # noqa: E731
    clean, zero = shown(doc["clean"]), shown(doc["zero"])
    assert ref("sw.cases", c) == "144"
    assert ref("sw.flips", c) == str(int((clean != zero).sum()))
    assert ref("sw.her(female)", c) == str(int(zero[:, :6].sum()))
    assert ref("sw.her(male, clean)", c) == str(int(clean[:, 6:].sum()))
    assert ref("sw.top", c) == str(sum(cell == [2, 3] for row in doc["topHead"] for cell in row))
    t = doc["set"]["templates"].index("{} hugged")
    assert ref("sw.removed(hugged, Ben)", c) == f"{doc['zero'][t][6]:+.2f}".replace("-", "\u2212")
    assert ("“… hugged”" in ref("sw.turn", c)) == bool(zero[t, 6:].any())


@pytest.mark.parametrize("text,words", [
    ("sw.clean(at, Ben)", "'at' is in 2 of the figure's templates"),
    ("sw.clean(hugged, Bob)", "no name 'Bob'"),
    ("sw.her(boys)", "unknown group 'boys'"),
    ("sw.flips(half)", "unknown mode 'half'"),
    ("sw.verdict", "has no 'verdict'"),
])
def test_bad_references_are_one_line(text, words):
    c = ctx()
    figure("model: tiny\nid: sw\n", c)
    with pytest.raises(LessonError) as e:
        ref(text, c)
    assert "\n" not in str(e.value) and words in str(e.value) and str(e.value).startswith("content/page.md:20")


def test_without_the_file_the_figure_is_pending(tmp_path):
    shutil.copytree(TRACES / "tiny", tmp_path / "tiny", ignore=shutil.ignore_patterns(pronouns_file.FILE))
    shutil.copy(TRACES / "index.json", tmp_path / "index.json") if (TRACES / "index.json").exists() else None
    html = figure("model: tiny\nid: sw\n", Ctx(store=TraceStore(tmp_path), page="content/page.md"))
    assert 'data-pending="true"' in html and "pronouns.json" in html


def test_a_template_from_the_file_is_text_in_a_reference(tmp_path):
    """The sweep's templates come from pronouns.json: in the prose references that list them (turn,
    survive) they are escaped, as the figure's table escapes them."""
    import shutil

    shutil.copytree(TRACES / "tiny", tmp_path / "tiny")
    path = tmp_path / "tiny" / "pronouns.json"
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["set"]["templates"] = [t + " <b>&amp;</b>" for t in doc["set"]["templates"]]
    path.write_text(json.dumps(doc), encoding="utf-8")
    c = Ctx(store=TraceStore(tmp_path), page="content/page.md")
    figure("model: tiny\nid: sw\n", c)
    listed = [ref("sw.turn", c), ref("sw.survive", c)]
    assert any("“" in r for r in listed), listed  # at least one template is listed
    for r in listed:
        assert "<b>" not in r and ("&lt;b&gt;&amp;amp;&lt;/b&gt;" in r or r == "none"), r
