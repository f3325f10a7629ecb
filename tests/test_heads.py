"""Head-type scores (generator/heads.py): planted patterns, analytic values, heads.json bytes."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
from causal_helpers import fake_causal
import pytest

from generator import heads, schema
from generator.store import TraceRequest, TraceStore

N = 6  # random tokens per copy in the synthetic scoring texts
IDS = [50256] + list(range(1000, 1000 + N)) * 2  # <|endoftext|>, then a sequence repeated twice
T = len(IDS)


def one_hot(targets_per_row: list[int], T: int = T) -> np.ndarray:
    """A (query, key) grid whose row i puts all its weight on key targets_per_row[i]."""
    w = np.zeros((T, T))
    for i, j in enumerate(targets_per_row):
        assert 0 <= j <= i
        w[i, j] = 1.0
    return w


def grid(*heads_: np.ndarray) -> np.ndarray:
    """One layer holding the given heads: shape (1, head, query, key)."""
    return np.stack(heads_)[None]


def prev_head(T: int = T) -> np.ndarray:
    return one_hot([max(i - 1, 0) for i in range(T)], T)


def sink_head(T: int = T) -> np.ndarray:
    return one_hot([0] * T, T)


def self_head(T: int = T) -> np.ndarray:
    return one_hot(list(range(T)), T)


def dup_head() -> np.ndarray:  # second copy: its earlier copy; otherwise itself
    return one_hot([i - N if i > N else i for i in range(T)])


def induction_head() -> np.ndarray:  # second copy: the token after its earlier copy
    return one_hot([i - N + 1 if i > N else i for i in range(T)])


def uniform(T: int = T) -> np.ndarray:
    w = np.tril(np.ones((T, T)))
    return w / w.sum(axis=1, keepdims=True)


def all_scores(w: np.ndarray, ids=IDS) -> dict[str, np.ndarray]:
    return {k: heads.score(k, [(w, ids)]) for k in heads.KINDS}


def test_planted_patterns_score_exactly_one_on_their_own_kind_and_zero_elsewhere():
    w = grid(prev_head(), sink_head(), dup_head(), induction_head(), self_head())
    s = all_scores(w)
    #                                  prev sink dup induction self
    assert s["previous-token"][0].tolist() == [1, 0, 0, 0, 0]
    assert s["sink"][0].tolist() == [0, 1, 0, 0, 0]
    assert s["duplicate-token"][0].tolist() == [0, 0, 1, 0, 0]
    assert s["induction"][0].tolist() == [0, 0, 0, 1, 0]


def test_named_helpers_agree_with_score():
    w = grid(prev_head(), sink_head())
    assert heads.previous_token_score(w).tolist() == [[1, 0]]
    assert heads.sink_score(w).tolist() == [[0, 1]]
    assert heads.duplicate_token_score(grid(dup_head()), IDS).tolist() == [[1]]
    assert heads.induction_score(grid(induction_head()), IDS).tolist() == [[1]]


def test_uniform_attention_gives_the_analytic_share():
    # Row i spreads 1/(i+1) over its i+1 visible keys, so each pattern cell gets 1/(i+1).
    s = all_scores(grid(uniform()))
    from_third = np.mean([1 / (i + 1) for i in range(2, T)])
    second_copy = np.mean([1 / (i + 1) for i in range(N + 1, T)])  # one earlier copy each
    assert s["previous-token"][0, 0] == pytest.approx(from_third, abs=1e-12)
    assert s["sink"][0, 0] == pytest.approx(from_third, abs=1e-12)
    assert s["duplicate-token"][0, 0] == pytest.approx(second_copy, abs=1e-12)
    assert s["induction"][0, 0] == pytest.approx(second_copy, abs=1e-12)
    # the chance level is exactly this uniform head's score
    for kind in heads.KINDS:
        assert heads.chance(kind, [IDS]) == pytest.approx(s[kind][0, 0], abs=1e-12)


def test_half_on_the_pattern_scores_one_half():
    w = grid(0.5 * prev_head() + 0.5 * sink_head())
    s = all_scores(w)
    assert s["previous-token"][0, 0] == pytest.approx(0.5)
    assert s["sink"][0, 0] == pytest.approx(0.5)


def test_scores_pool_queries_over_several_texts():
    short = [7, 8, 9]  # one scored query (i = 2) each for previous-token and sink
    long_ = list(range(2, 12))  # eight scored queries
    w_short = grid(prev_head(3))
    w_long = grid(sink_head(10))
    s = heads.score("previous-token", [(w_short, short), (w_long, long_)])
    assert s[0, 0] == pytest.approx(1 / 9)


def test_duplicate_and_induction_count_every_earlier_copy():
    ids = [5, 1, 5, 5]  # the last 5 has two earlier copies (positions 0 and 2)
    w = np.zeros((4, 4))
    w[0, 0] = 1
    w[1, 1] = 1
    w[2, 1] = 1  # after the copy at 0 comes position 1: induction
    w[3, 0] = 0.25
    w[3, 2] = 0.25  # duplicate-token: 0.5 on earlier copies
    w[3, 1] = 0.25
    w[3, 3] = 0.25  # positions 1 and 3 follow the copies at 0 and 2: induction 0.5
    s_dup = heads.score("duplicate-token", [(grid(w), ids)])
    s_ind = heads.score("induction", [(grid(w), ids)])
    assert s_dup[0, 0] == pytest.approx((0.0 + 0.5) / 2)
    assert s_ind[0, 0] == pytest.approx((1.0 + 0.5) / 2)


def test_no_scoreable_query_is_an_error():
    with pytest.raises(ValueError, match="no query"):
        heads.score("induction", [(grid(uniform(4)), [1, 2, 3, 4])])
    with pytest.raises(ValueError, match="ids"):
        heads.score("sink", [(grid(uniform(4)), [1, 2, 3])])


def test_random_causal_weights_score_inside_zero_one():
    rng = np.random.default_rng(0)
    w = rng.random((3, 4, T, T)) * np.tril(np.ones((T, T)))
    w /= w.sum(-1, keepdims=True)
    for s in all_scores(w).values():
        assert s.shape == (3, 4)
        assert (s >= 0).all() and (s <= 1).all()


# ---------------------------------------------------------------- scoring texts


def test_scoring_requests_are_fixed_and_repeat_distinct_random_tokens(tmp_path):
    reqs = heads.scoring_requests("gpt2", {"standIn": False})
    assert reqs == heads.scoring_requests("gpt2", {"standIn": False})
    assert reqs == heads.scoring_requests({"model": "gpt2", "standIn": False})
    random = [r for r in reqs if r.ids is not None]
    assert len(random) == heads.N_RANDOM
    vocab = heads.VOCABS["gpt2"]
    for r in random:
        n = heads.RANDOM_LENGTH
        assert len(r.ids) == 1 + 2 * n and r.ids[0] == vocab.eot
        first, second = r.ids[1 : n + 1], r.ids[n + 1 :]
        assert first == second and len(set(first)) == n
        assert all(vocab.low <= i < vocab.high for i in first)
    assert len({r.ids for r in random}) == len(random)
    assert [r.text for r in reqs if r.ids is None] == list(heads.SCORING_SENTENCES)
    # Pinned: the draw is sha256-ranked, so no library's random-number generator can change it.
    assert random[0].ids[:5] == (50256, 3800, 3408, 9347, 18622)


def test_stand_in_draws_ids_its_tokenizer_can_decode(tmp_path):
    reqs = heads.scoring_requests("gpt2", {"standIn": True}, n_random=2, random_length=5)
    tiny = heads.VOCABS["tiny"]
    ids = [i for r in reqs if r.ids for i in r.ids]
    assert len(ids) == 2 * 11 and all(i == tiny.eot or tiny.low <= i < tiny.high for i in ids)


def test_scoring_texts_do_not_depend_on_the_lessons():
    # scoring_requests takes no content at all: a new lesson can never change a scoreboard.
    import inspect

    assert "content" not in " ".join(inspect.signature(heads.scoring_requests).parameters)
    texts = [r.text for r in heads.scoring_requests("tiny", {}) if r.ids is None]
    assert texts == list(heads.SCORING_SENTENCES)
    assert isinstance(heads.SCORING_SET_VERSION, int)


# ---------------------------------------------------------------- heads.json

META = {"model": "tiny", "revision": "abc123", "architecture": "gpt2", "nLayer": 1, "nHead": 3, "nKvHead": 3, "positions": "learned",
        "ropeTheta": None, "headDim": 1, "vocabSize": 4096}


def zero_head(T: int, w: np.ndarray) -> dict:
    tri = [[0.0] * (i + 1) + [None] * (T - i - 1) for i in range(T)]
    vec = [[0.0] for _ in range(T)]
    return {"q": vec, "k": vec, "v": vec, "scores": [[0.0] * T] * T, "scaledMasked": tri, "weights": w.tolist(), "out": vec}


def fake_trace(req: TraceRequest, meta: dict = META) -> dict:
    """A stored-trace document whose weights are what the scores read: 3 heads, one of each
    of previous-token, sink and induction (the other activations are zeros of the right shape,
    so that the store's checks pass)."""
    ids = list(req.ids) if req.ids is not None else [100 + (i % 7) for i in range(len(req.text.split()) + 1)]
    T = len(ids)
    ind = np.zeros((T, T))
    for i in range(T):
        earlier = [j for j in range(i) if ids[j] == ids[i]]
        ind[i, earlier[-1] + 1 if earlier else i] = 1
    doc = {
        "schemaVersion": schema.SCHEMA_VERSION,
        "model": req.model,
        "text": req.text,
        "meta": dict(meta),
        "tokens": [{"id": i, "text": f"t{i}", "display": f"t{i}", "spoken": f"t{i}"} for i in ids],
        "layers": [{"heads": [zero_head(T, w) for w in (prev_head(T), sink_head(T), ind)], "attnConcat": [[0.0] * 3] * T}],
        "predictions": [[] for _ in ids],
        "causal": fake_causal(1, 3, T, vocab_size=int(meta.get("vocabSize", 4096))),
    }
    if req.ids is not None:
        doc["ids"] = ids
    return doc


def fill_store(root, order=1, meta: dict = META, **kw) -> TraceStore:
    store = TraceStore(root)
    reqs = heads.scoring_requests(meta["model"], meta, **kw)
    for r in reqs[::order]:
        store.write(fake_trace(r, meta))
    return store


def test_write_scores_gives_the_planted_heads_and_identical_bytes(tmp_path):
    a = fill_store(tmp_path / "a")
    b = fill_store(tmp_path / "b", order=-1)  # written in the other order
    pa = heads.write_scores(a, "tiny")
    pb = heads.write_scores(b, "tiny")
    assert pa == tmp_path / "a" / "tiny" / "heads.json"
    first = pa.read_bytes()
    assert first == pb.read_bytes()
    assert heads.write_scores(a, "tiny").read_bytes() == first
    assert first.endswith(b"\n") and not list((tmp_path / "a" / "tiny").glob(".*tmp"))

    doc = json.loads(first)
    assert doc["scores"]["previous-token"] == [[1.0, 0.0, 0.0]]
    assert doc["scores"]["sink"] == [[0.0, 1.0, 0.0]]
    assert doc["scores"]["induction"][0][2] == 1.0
    ex = doc["examples"]["induction"]
    assert ex["ids"] is not None and ex["text"].startswith("Random tokens")
    assert (tmp_path / "a" / "tiny" / f"{ex['key']}.json").is_file()
    assert doc["examples"]["sink"]["text"] == heads.SCORING_SENTENCES[0]
    assert doc["scoredOn"]["induction"]["queries"] == heads.N_RANDOM * heads.RANDOM_LENGTH
    # every random trace has the same length, so chance is the mean of 1/(i+1) over the second copy
    n = heads.RANDOM_LENGTH
    assert doc["chance"]["induction"] == pytest.approx(np.mean([1 / (i + 1) for i in range(n + 1, 2 * n + 1)]), rel=1e-4)

    examples = heads.example_requests(tmp_path / "a", "tiny")
    assert [r.ids is not None for r in examples] == [False, True]  # natural sentence, repeated random tokens
    assert heads.example_requests(tmp_path / "nowhere", "tiny") == []

    loaded = heads.load_scores(tmp_path / "a", "tiny")
    assert loaded.chance("induction") == doc["chance"]["induction"]
    assert loaded.top("sink", 1) == [(0, 1, 1.0)]
    assert loaded.ranked("previous-token")[0] == (0, 0, 1.0)
    assert loaded.ranked("duplicate-token")[-1][2] == 0.0


def test_missing_or_stale_scores_load_as_none(tmp_path):
    assert heads.load_scores(tmp_path, "tiny") is None
    store = fill_store(tmp_path)
    heads.write_scores(store, "tiny")
    newer = dict(META, revision="def456")  # retrained: new traces, old heads.json
    store.write(fake_trace(TraceRequest("tiny", "A new sentence here"), newer))
    assert heads.load_scores(tmp_path, "tiny") is None


def test_missing_scoring_trace_names_the_remedy(tmp_path):
    store = TraceStore(tmp_path)
    store.write(fake_trace(TraceRequest("tiny", "Only this one")))
    with pytest.raises(Exception, match="generator traces"):
        heads.write_scores(store, "tiny")


def test_stand_in_scores_are_refused_unless_allowed(tmp_path):
    meta = dict(META, model="gpt2", revision="stand-in-random-init", standIn=True)
    store = fill_store(tmp_path, meta=meta, n_random=2, random_length=4)
    heads.write_scores(store, "gpt2", n_random=2, random_length=4)
    with pytest.raises(heads.StandInRefused, match="stand-in"):
        heads.load_scores(tmp_path, "gpt2")
    assert heads.load_scores(tmp_path, "gpt2", allow_stand_in=True).doc["standIn"] is True


def _grow_a_layer(doc):
    """nLayer 2, every grid given a second layer: consistent in itself, not the traced model's 1 × 3."""
    doc["nLayer"] = 2
    for kind in doc["scores"]:
        doc["scores"][kind] = doc["scores"][kind] * 2


@pytest.mark.parametrize("edit, says", [
    (lambda d: d["definitions"].pop("previous-token"), "has no definition of previous-token"),
    (lambda d: d.__setitem__("definitions", 5), "has no definitions (an object of each kind's definition)"),
    (lambda d: d.pop("scoredOn"), "has no scoredOn"),
    (lambda d: d["scoredOn"]["induction"].__setitem__("traces", ["../../etc"]), "scoredOn.induction is not {traces: a list of trace keys"),
    (lambda d: d["scoredOn"]["sink"].pop("queries"), "scoredOn.sink is not"),
    (lambda d: d["examples"]["sink"].__setitem__("ids", {}), "the sink example is not {text, ids: null or a list of token ids"),
    (lambda d: d["examples"]["induction"].__setitem__("ids", [-7, 3]), "the induction example is not"),
    (_grow_a_layer, "says 2 layers × 3 heads, but the traces of tiny have 1 × 3"),
])
def test_a_damaged_heads_json_is_one_line_naming_it(tmp_path, edit, says):
    """What the notebooks and the scoreboard read from heads.json (definitions, scoredOn, the
    examples' ids) and its grids' shape against the traced model are checked where it is read, so
    a damaged file stops the build with its name, not a KeyError in the notebooks' step or a lesson
    line blamed for a head that "does not show" its kind (these loaded before)."""
    from generator.store import DamagedFile

    store = fill_store(tmp_path)
    path = heads.write_scores(store, "tiny")
    assert heads.load_scores(tmp_path, "tiny") is not None
    doc = json.loads(path.read_text())
    edit(doc)
    path.write_text(json.dumps(doc))
    for read in (lambda: heads.load_scores(tmp_path, "tiny"), lambda: heads.example_requests(tmp_path, "tiny")):
        with pytest.raises(DamagedFile) as e:
            read()
        line = str(e.value)
        assert "\n" not in line and line.startswith(f"{path}: ") and says in line, line
        assert line.count("Fix: ") == 1 and line.endswith("Fix: run `make traces`: it rewrites heads.json from the stored traces")


def test_scores_of_another_revision_are_stale_whatever_their_shape(tmp_path):
    """A heads.json from other traces (a retrained model of another shape) is stale, not damaged."""
    store = fill_store(tmp_path)
    path = heads.write_scores(store, "tiny")
    doc = json.loads(path.read_text())
    _grow_a_layer(doc)
    doc["revision"] = "older1"
    path.write_text(json.dumps(doc))
    assert heads.load_scores(tmp_path, "tiny") is None


def test_heads_module_needs_no_torch():
    code = "import sys, generator.heads; assert 'torch' not in sys.modules, 'torch imported'"
    subprocess.run([sys.executable, "-c", code], check=True)


# ---------------------------------------------------------------- real traces


def test_scores_of_a_real_traced_model_lie_in_zero_one(tmp_path):
    pytest.importorskip("torch")
    from tokenizers import Tokenizer, models, pre_tokenizers

    from generator.model import load as gm
    from generator.model import tracing

    vocab = {"<|endoftext|>": 0} | {f"w{i}": i for i in range(1, 64)}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<|endoftext|>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    lm = gm.from_parts("tiny", gm.random_model(2, 2, 16, 64, 64, seed=1), tok, "rand01")
    store = TraceStore(tmp_path)
    reqs = [TraceRequest("tiny", heads.RANDOM_TEXT.format(n=1, total=1), [0] + list(range(10, 16)) * 2)]
    reqs += [TraceRequest("tiny", " ".join(f"w{i}" for i in range(1, 9)))]
    for r in reqs:
        store.write(tracing.trace(lm, r.text, r.ids))
    doc = heads.compute(store, "tiny", reqs)
    for kind in heads.KINDS:
        m = np.asarray(doc["scores"][kind])
        assert m.shape == (2, 2) and (m >= 0).all() and (m <= 1).all()


REPO = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("model", ["tiny", "gpt2"])
def test_stored_head_scores_are_fresh_and_in_zero_one(tmp_path, model):
    """traces/<model>/heads.json is exactly what write_scores makes from the stored traces and the
    lessons of content/ (run `make traces` after changing either), and every score is a share."""
    src = REPO / "traces" / model
    if not (src / heads.HEADS_FILE).is_file():
        pytest.skip(f"no traces/{model}/heads.json (run `make traces`)")
    shutil.copytree(src, tmp_path / model)
    (tmp_path / model / heads.HEADS_FILE).unlink()
    made = heads.write_scores(TraceStore(tmp_path), model)
    assert made.read_bytes() == (src / heads.HEADS_FILE).read_bytes(), f"traces/{model}/heads.json is stale: run `make traces`"
    doc = json.loads(made.read_bytes())
    for kind in heads.KINDS:
        m = np.asarray(doc["scores"][kind])
        assert m.shape == (doc["nLayer"], doc["nHead"]) and (m >= 0).all() and (m <= 1).all()
        assert 0 < doc["chance"][kind] < 1
