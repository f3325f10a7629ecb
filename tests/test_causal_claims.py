"""What chapters 3, 5 and the head types page claim about heads, checked against the causal
numbers they stand on (the committed traces, circuits.json and patching.json), and against the
built pages, so that a retrained model whose numbers no longer back a sentence fails here, and an
old wording drawn from weights alone does not come back."""

from __future__ import annotations

import numpy as np
import pytest
from test_prose_claims import article, prose, section, text_of

from generator.store import circuits_file
from generator import heads, tokens
from generator.store import TraceStore
from course_builds import shared_course

REPO_TRACES = TraceStore(__import__("conftest").REPO / "traces")
LILY, BEN = "Lily wanted to play with", "Ben wanted to play with"


@pytest.fixture(scope="module")
def site():
    return shared_course() / "build" / "site"


def her_his(text: str, mode: str = "zero"):
    """(clean logit(her) − logit(his) at the last token, the change with each head removed)."""
    c = REPO_TRACES.load("tiny", text)["causal"]
    pos = len(c["followed"]) - 1
    her, his = (int(np.flatnonzero(c["followed"][pos] == tokens.vocab_token("tiny", n).id)[-1]) for n in ("her", "his"))
    m = c["ablations"].index(mode)
    clean = c["cleanLogit"][pos, her] - c["cleanLogit"][pos, his]
    return clean, c["dLogit"][m, :, :, pos, her] - c["dLogit"][m, :, :, pos, his]


@pytest.fixture(scope="module")
def circ():
    return circuits_file.load_circuits(REPO_TRACES, "tiny", tuple(heads.KINDS), 4, 4)


def test_removing_the_head_of_chapter_3_flips_her_to_his_and_no_other_head_comes_close():
    clean, eff = her_his(LILY)
    assert clean > 0 and clean + eff[1, 2] < 0, "the page says: the model now prefers ·his"
    others = np.abs(np.delete(eff.ravel(), 1 * 4 + 2))
    assert others.max() < 0.25 * abs(eff[1, 2])
    _, mean_eff = her_his(LILY, "mean")
    assert np.sign(mean_eff[1, 2]) == np.sign(eff[1, 2]) and abs(mean_eff[1, 2]) > 0.5 * clean


def test_chapter_3_concludes_from_the_test_not_from_the_weights(site):
    page = article(site, "attention.html")
    myth = prose(section(page, "A common myth"))
    for gone in ("takes the name, whoever it is", "does not do it alone", "its subject", "That is an induction head"):
        assert gone not in prose(page), gone
    assert "the model now expects ·his" not in myth  # reworded; the verdict is the reference's
    assert "carries most of the choice of ·her" in myth
    assert "data-kind=\"ablation\"" in section(page, "A common myth")
    many = prose(section(page, "Many heads, many layers"))
    assert 'looks like "look at ·ball"' in many and "only a pattern" in many
    intro = text_of(page[: page.index("<h2")])
    assert "bound to point at Lily" in intro and "heads put Lily first for ·her" in intro


def test_the_induction_example_sentence_cannot_tell_induction_from_looking_at_ball():
    """The page's reason: ·the₉ has no earlier copy and still looks at ·ball₅."""
    t = REPO_TRACES.load("tiny", "Tom had a red ball. Tom gave the red ball to Sam.")
    w = np.asarray(t["layers"][3]["heads"][3]["weights"], dtype=float)
    assert w[9, 5] > 0.5 and w[10, 5] > 0.5 and w[7, 2] < 0.5


def test_the_induction_head_leans_on_the_duplicate_token_head_not_first_on_the_previous_token_head(circ):
    k = circ["kinds"].index("induction")
    zero = circ["ablations"].index("zero")
    without = circ["ablatedScores"][zero, :, k, 3, 3]  # (removed head,)
    best_prev = heads.load_scores(REPO_TRACES, "tiny").top("previous-token", 1)[0][:2]
    best_dup = heads.load_scores(REPO_TRACES, "tiny").top("duplicate-token", 1)[0][:2]
    earlier = [a for a in range(12)]
    order = sorted(earlier, key=lambda a: without[a])
    assert divmod(order[0], 4) == tuple(best_dup), "the page: removing the duplicate-token head hurts most"
    assert divmod(order[0], 4) != tuple(best_prev), "'Not the previous-token head'"
    prev_a = best_prev[0] * 4 + best_prev[1]
    assert without[order[0]] < without[prev_a] < circ["cleanScores"][k, 3, 3], "'it matters, but less'"
    first, second = circ["iclClean"]
    assert second < 0.5 * first, "the model copies"
    assert circ["iclAblated"][zero, order[0], 1] > 0.85 * first, "'close to the first copy's'"
    mean = circ["ablations"].index("mean")
    assert circ["ablatedScores"][mean, order[0], k, 3, 3] > without[order[0]], "'zeros change more than the usual output'"
    assert circ["composition"][:, :3, :, 3, 3].max() < 2 * circ["compositionBaseline"], "'every head here scores close to that'"


def test_the_sink_rests_on_natural_text_and_copies_on_repeated_tokens(circ):
    c = REPO_TRACES.load("tiny", LILY)["causal"]
    kl = c["kl"][c["ablations"].index("zero"), :, :, -1]
    sink = heads.load_scores(REPO_TRACES, "tiny").top("sink", 1)[0][:2]
    assert kl[tuple(sink)] < 0.05 < kl.max()
    a = sink[0] * 4 + sink[1]
    assert circ["iclAblated"][0, a, 1] > 2 * circ["iclClean"][1], "'without it the loss on the second copy rises'"
    norms = c["valueNorms"][sink[0], sink[1]]
    assert norms[0] < 0.25 * np.median(norms[1:]), "the value at <|endoftext|> is small"


def test_patching_the_head_from_bens_sentence_closes_most_of_the_gap():
    ids = [tokens.vocab_token("tiny", n).id for n in ("her", "his")]
    p = circuits_file.find_pair(REPO_TRACES, "tiny", LILY, BEN, ids, 6, 4, 4)
    a = p["cleanA"][5, 0] - p["cleanA"][5, 1]
    b = p["cleanB"][5, 0] - p["cleanB"][5, 1]
    moved = p["patched"][1, 2, 5, 0] - p["patched"][1, 2, 5, 1] - a
    assert moved / (b - a) > 0.5


def test_chapter_5_reads_its_findings_from_references(site):
    page = article(site, "causal.html")
    words = prose(page)
    assert "It flips." in words and "carries most of the model's choice of ·her" in words
    assert "·her first comes out on top after layer 2, the layer where the head sits" in words
    for kind in ("ablation", "attribution", "patching", "lens", "circuit"):
        assert f'data-kind="{kind}"' in page, kind


def test_the_head_types_page_says_how_it_was_trained_and_what_a_score_is_not(site):
    words = prose(article(site, "heads.html"))
    assert "75 % of its training windows repeat a stretch, and 45 % of all windows repeat a run of random tokens" in words
    for gone in ("does not get there", "saw when induction heads form"):
        assert gone not in words
    assert "A high score is only a pattern" in words
    assert "(not the token itself)" in text_of(article(site, "heads.html"))
