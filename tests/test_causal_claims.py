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
    # chapter 3 ends on attention: the test that removes the head, and its logits, are chapter 5's
    assert "data-kind=\"ablation\"" not in page and "logit" not in text_of(page)
    # the myth's question and chapter 5's test are the same question (issue 47): who "her" is
    # stays unanswered, and the testable one, the choice of ·her at ·with, is the one tested
    assert "no grid can answer, and no test in this course answers it either" in myth
    assert "help the model choose the pronoun that fits the name" in myth and "at ·with" in myth
    assert "removes the head there and watches the choice between ·her and ·his" in myth
    many = prose(section(page, "Many heads, many layers"))
    assert 'looks like "look at ·ball"' in many and "only a pattern" in many
    intro = text_of(page[: page.index("<h2")])
    assert "bound to point at Lily" in intro and "heads put Lily first for ·her" in intro


def test_the_induction_example_sentence_cannot_tell_induction_from_looking_at_ball():
    """The page's reason: ·the and ·Tom have no earlier copy (Tom at the start is another token
    than ·Tom) and still look at ·ball as the second ·red does."""
    t = REPO_TRACES.load("tiny", "Tom had a red ball. Tom gave the red ball to Sam.")
    ids = [tok["id"] for tok in t["tokens"]]
    assert ids.count(ids[9]) == 1 and ids.count(ids[7]) == 1 and ids[1] != ids[7], "·the and ·Tom occur once"
    w = np.asarray(t["layers"][3]["heads"][3]["weights"], dtype=float)
    assert w[9, 5] > 0.5 and w[10, 5] > 0.5 and w[7, 5] > 0.5


def test_the_induction_circuit_is_what_four_ways_of_removing_a_head_agree_on(circ):
    """Chapter 6's findings (issue 47), from circuits.json's robust block: the previous-token head
    of layer 1 first under resampling, with layer 3, head 4 among the top three; layer 3, head 3's
    zero-ablated loss above a uniform guess (flagged off-distribution) while resampling it barely
    matters; the strongest induction head changes with the repeat length; and the four-text table's
    zero and mean still disagree on what L4H4 leans on first, as the page says."""
    from generator.registry import config_facts

    r = circ["robust"]
    M = r["methods"]
    at = {e["length"]: e for e in r["lengths"]}
    ten = at[10]
    res = ten["rise"][M.index("resample"), :, 0]
    order = [int(a) for a in np.argsort(-res, kind="stable")]
    assert order[0] == 0 * 4 + 3 and 2 * 4 + 3 in order[:3], "'the previous-token head of layer 1 first ... layer 3, head 4 with it'"
    uniform = np.log(config_facts("tiny")["vocabSize"])
    assert ten["loss"][M.index("zero"), 2 * 4 + 2, 0] > uniform, "'more than a uniform guess's'"
    assert ten["rise"][M.index("resample"), 2 * 4 + 2, 0] < 0.25 * ten["rise"][M.index("zero"), 2 * 4 + 2, 0], "'raises the loss by only'"
    k = r["scoredKinds"].index("induction")
    lead = lambda e: int(np.argmax(e["scores"][k, 3, :, 0]))  # noqa: E731  (layer 4's strongest induction head)
    assert lead(at[min(at)]) != lead(at[max(at)]), "'which head scores highest depends on the length of the repeat'"
    ki = circ["kinds"].index("induction")
    zero, mean = circ["ablations"].index("zero"), circ["ablations"].index("mean")
    first = lambda m: int(np.argmin(circ["ablatedScores"][m, :12, ki, 3, 3]))  # noqa: E731
    assert first(zero) != first(mean), "the four-text table: zeros and averages point at different heads first"


def test_without_the_her_head_both_sentences_lead_to_his():
    lily_clean, lily = her_his(LILY)
    ben_clean, ben = her_his(BEN)
    assert lily_clean > 0 > ben_clean
    assert lily_clean + lily[1, 2] < 0 and ben_clean + ben[1, 2] < 0, "'without it, both sentences lead to ·his'"
    assert abs(ben[1, 2]) < 0.5 * abs(lily[1, 2]), "the head matters less after Ben"


def test_the_lens_echoes_each_token_straight_after_the_embedding():
    t = REPO_TRACES.load("tiny", LILY)
    assert [int(i) for i in t["causal"]["lensIds"][0, :, 0]] == [tk["id"] for tk in t["tokens"]], "'every token's top guess is itself'"


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
    back = circuits_file.find_pair(REPO_TRACES, "tiny", BEN, LILY, ids, 6, 4, 4)  # Lily's output into Ben's sentence
    a, b = (back[k][5, 0] - back[k][5, 1] for k in ("cleanA", "cleanB"))
    moved = back["patched"][1, 2, 5, 0] - back["patched"][1, 2, 5, 1] - a
    assert moved / (b - a) > 0.5, "'both say that this one head's output makes most of the difference'"


def test_chapters_5_and_6_read_their_findings_from_references(site):
    """Chapter 5 holds the her/his story whole (every test of the one head); chapter 6 the heads
    that work together (the induction circuit, the sink, the duplicate-token head)."""
    page, circuits = article(site, "causal.html"), article(site, "circuits.html")
    words, words6 = prose(page), prose(circuits)
    assert "It flips." in words and "carries most of the model's choice of ·her" in words
    assert "It depends on how the head is removed, so this section removes heads in four ways" in words6
    for gone in ("Not the previous-token head", "leans first on a duplicate-token head", "judged wrongly",
                 "cannot do better than guess", "depends most on a duplicate-token head", "took away"):
        assert gone not in words and gone not in words6, gone
    assert "·her first comes out on top after layer 2, the layer where the head sits" in words
    for kind in ("ablation", "attribution", "patching", "lens"):
        assert f'data-kind="{kind}"' in page, kind
    for kind in ("ablation", "circuit"):
        assert f'data-kind="{kind}"' in circuits, kind
    assert 'data-kind="circuit"' not in page and 'data-kind="patching"' not in circuits


def test_the_head_types_page_says_how_it_was_trained_and_what_a_score_is_not(site):
    words = prose(article(site, "heads.html"))
    assert "75% of its training windows repeat a stretch, and 45% of all windows repeat a run of random tokens" in words
    for gone in ("does not get there", "saw when induction heads form"):
        assert gone not in words
    assert "A high score is only a pattern" in words
    assert "(not the token itself)" in text_of(article(site, "heads.html"))
