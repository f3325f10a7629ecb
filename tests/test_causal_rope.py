"""The causal data and the score split of a rotary, grouped-key model (issue 52) through the one
code path of generator/model/causal.py, robust.py, circuits.py, pronoun_sweep.py and
score_parts.py, checked against routes that do not go through model/arch.py: hooks on the Llama
modules by their own names, and transformers' own rotation (apply_rotary_pos_emb, repeat_kv).

The model is a random tiny-rope (training.recipe("tiny-rope"), seeded, eval, eager), its q and k
weights scaled up so that its heads look somewhere (at the recipe's 0.02 init every pattern is
near uniform and a wrong key would hardly show)."""

from __future__ import annotations

import copy
import dataclasses

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from generator import heads, schema  # noqa: E402
from generator.model import causal, circuits, load as models, pronoun_sweep, robust, score_parts, training  # noqa: E402
from generator.store import splits_file  # noqa: E402

pytestmark = pytest.mark.slow
ATOL = 1e-4
LILY = "Lily wanted to play with the red ball"
HEAD_DIM = 32


@pytest.fixture(scope="module")
def rope():
    torch.set_num_threads(1)
    cfg = dataclasses.replace(training.recipe("tiny-rope"), seed=5)
    model = training.build_model(cfg, 0)
    model.config._attn_implementation = "eager"
    with torch.no_grad():
        for layer in model.model.layers:
            layer.self_attn.q_proj.weight.mul_(12.0)
            layer.self_attn.k_proj.weight.mul_(12.0)
    # not marked a stand-in, so that the figure test below renders it (a page refuses stand-in traces)
    return models.from_parts("tiny-rope", models._eval(model), models.tiny_tokenizer(), "random-test-rope", stand_in=False)


def _attn(lm, layer):
    return lm.model.model.layers[layer].self_attn


def _zeroing(lm, layer, head):
    """A pre-hook on o_proj, named as Llama names it, that zeroes head `head`'s columns."""
    def pre(_m, args):
        x = args[0].clone()
        x[..., head * HEAD_DIM:(head + 1) * HEAD_DIM] = 0
        return (x,)
    return _attn(lm, layer).o_proj.register_forward_pre_hook(pre)


def _logits(lm, ids, layer=None, head=None):
    handle = None if layer is None else _zeroing(lm, layer, head)
    try:
        with torch.inference_mode():
            return lm.model(torch.tensor([list(ids)]), use_cache=False).logits[0].double().numpy()
    finally:
        if handle is not None:
            handle.remove()


def _log_softmax(x):
    x = x - x.max(-1, keepdims=True)
    return x - np.log(np.exp(x).sum(-1, keepdims=True))


def test_the_random_model_is_rotary_with_grouped_keys(rope):
    c = rope.model.config
    assert c.model_type == "llama" and c.num_key_value_heads == 2 and c.num_attention_heads == 4


def test_zero_ablation_equals_zeroing_the_heads_slice_of_o_proj(rope):
    ids = rope.ids_of(LILY)
    cap_v = [torch.zeros(2, len(ids), HEAD_DIM)] * 4  # value norms are tested below
    block = causal.sentence_block(rope, ids, cap_v, targets=[rope.tokenizer_encode(" her")[0]])
    m = block["ablations"].index("zero")
    clean = _logits(rope, ids)
    idx = np.asarray(block["followed"])
    for layer, head in [(0, 1), (1, 2), (3, 3), (2, 0)]:
        got = _logits(rope, ids, layer, head)
        want = np.take_along_axis(got, idx, -1) - np.take_along_axis(clean, idx, -1)
        assert np.abs(block["dLogit"][m, layer, head] - want).max() < ATOL
        lp, clean_lp = _log_softmax(got), _log_softmax(clean)
        kl = (np.exp(clean_lp) * (clean_lp - lp)).sum(-1)
        assert np.abs(block["kl"][m, layer, head] - kl).max() < ATOL


def test_robust_zero_and_pronoun_sweep_zero_equal_the_independent_hook(rope):
    length = 4
    vocab = heads.vocab_for("tiny-rope", dict(rope.meta))
    test = robust.texts(vocab, length, 2, seed=47, name="test")
    source = robust.texts(vocab, length, 2, seed=47, name="source")
    out, clean = robust.ablated_losses(rope, test, source, causal.reference(rope), length)
    zero = robust.METHODS.index("zero")
    for layer, head in [(0, 3), (2, 1)]:
        for i, t in enumerate(test):
            lp = _log_softmax(_logits(rope, list(t), layer, head))
            want = np.mean([-lp[j - 1, t[j]] for j in range(length + 2, 2 * length + 1)])
            assert abs(out[zero, layer * 4 + head, i] - want) < ATOL
    config = pronoun_sweep.SweepConfig(female=("Lily",), male=("Ben",), templates=("{} hugged",), head=(2, 2))
    sweep = pronoun_sweep.sweep(rope, causal.reference(rope), config)
    her, his = (rope.tokenizer_encode(" " + w)[0] for w in config.targets)
    for n, name in enumerate(config.female + config.male):
        last = _logits(rope, rope.ids_of(f"{name} hugged"), 1, 1)[-1]
        assert abs(sweep["zero"][0, n] - (last[her] - last[his])) < ATOL


def _own_scores(lm, ids):
    """Every head's scaled scores (layer, head, query, key) from q_proj / k_proj outputs, turned
    by transformers' apply_rotary_pos_emb and shared by repeat_kv: no model/arch.py."""
    from transformers.models.llama.modeling_llama import apply_rotary_pos_emb, repeat_kv

    seen = {}
    handles = []
    for l, layer in enumerate(lm.model.model.layers):
        a = layer.self_attn
        handles.append(a.q_proj.register_forward_hook(lambda _m, _a, o, l=l: seen.__setitem__(("q", l), o.detach())))
        handles.append(a.k_proj.register_forward_hook(lambda _m, _a, o, l=l: seen.__setitem__(("k", l), o.detach())))
    try:
        with torch.inference_mode():
            res = lm.model(torch.tensor([list(ids)]), use_cache=False, output_attentions=True)
            T = len(ids)
            cos, sin = lm.model.model.rotary_emb(torch.zeros(1, T, 1), torch.arange(T)[None])
            out = []
            for l in range(len(lm.model.model.layers)):
                q = seen[("q", l)].view(1, T, 4, HEAD_DIM).transpose(1, 2)  # (1, head, token, d)
                k = seen[("k", l)].view(1, T, 2, HEAD_DIM).transpose(1, 2)  # (1, kv_head, token, d)
                q, k = apply_rotary_pos_emb(q.double(), k.double(), cos.double(), sin.double())
                k = repeat_kv(k, 2)  # (1, head, token, d)
                out.append((q @ k.transpose(-1, -2))[0] * HEAD_DIM ** -0.5)  # (head, query, key)
    finally:
        for h in handles:
            h.remove()
    return torch.stack(out).numpy(), torch.stack([a[0] for a in res.attentions]).double().numpy()


def test_the_score_split_adds_up_to_the_models_own_attention_scores(rope):
    ids = rope.ids_of(LILY)
    split = score_parts.split_scores(rope, ids)
    want, weights = _own_scores(rope, ids)
    below = np.tril(np.ones((len(ids), len(ids))))
    # the model really looks somewhere: the test would see a wrong key
    assert weights.max(-1)[..., 2:].min() < 0.9 and weights.max() > 0.5
    for l in range(4):
        parts = schema.split_parts(l, 4, "rotary")
        assert "position" not in parts and "biases" not in parts
        for h in range(4):
            assert np.abs(split["score"][(l, h)] - want[l, h] * below).max() < ATOL
            for side in ("key", "query"):
                assert split[side][(l, h)].shape[0] == len(parts)
                assert np.abs(split[side][(l, h)].sum(0) - want[l, h] * below).max() < ATOL
    assert not split["table"], "a rotary model's layer 1 has no position part to make a table of"


def test_a_groups_shared_key_serves_both_its_query_heads(rope):
    """Heads 1 and 2 read key/value head 1, heads 3 and 4 head 2: the split's key pieces, the
    composition weights and the value norms all take the group's, not a key of their own."""
    ids = rope.ids_of(LILY)
    T = len(ids)
    split = score_parts.split_scores(rope, ids)
    want, _ = _own_scores(rope, ids)
    below = np.tril(np.ones((T, T)))
    for l in range(4):
        for h in range(4):  # with kv head h // 2, not h: head 2 (h=1) would read group 2's key
            assert np.abs(split["score"][(l, h)] - want[l, h] * below).max() < ATOL
    folded = circuits._folded(rope)
    for l, block in enumerate(rope.model.model.layers):
        gain = block.input_layernorm.weight.double()[:, None]
        wk = block.self_attn.k_proj.weight.double().T * gain  # (width, kv_head · d)
        wv = block.self_attn.v_proj.weight.double().T * gain
        for h in range(4):
            g = slice(h // 2 * HEAD_DIM, (h // 2 + 1) * HEAD_DIM)
            assert torch.equal(folded[l][h][1], wk[:, g]) and torch.equal(folded[l][h][2], wv[:, g])
    # value norms from values per key/value head, against o_proj's rows by the module's own name
    v = []
    hooks = [layer.self_attn.v_proj.register_forward_hook(lambda _m, _a, o: v.append(o[0].detach().view(T, 2, HEAD_DIM).transpose(0, 1)))
             for layer in rope.model.model.layers]
    try:
        with torch.inference_mode():
            rope.model(torch.tensor([ids]), use_cache=False)
    finally:
        for hd in hooks:
            hd.remove()
    norms = causal.value_norms(rope, v)
    for l, layer in enumerate(rope.model.model.layers):
        w_o = layer.self_attn.o_proj.weight.double().T  # (head · d, width)
        for h in range(4):
            want_n = (v[l][h // 2].double() @ w_o[h * HEAD_DIM:(h + 1) * HEAD_DIM]).norm(dim=-1).numpy()
            assert np.abs(norms[l, h] - want_n).max() < 1e-6


def test_the_unrotated_score_leaves_the_rotation_out(rope):
    from transformers.models.llama.modeling_llama import repeat_kv

    ids = rope.ids_of(LILY)
    T = len(ids)
    split = score_parts.split_scores(rope, ids, [(0, 0), (0, 3)])
    block = rope.model.model.layers[0]
    with torch.inference_mode():
        x = block.input_layernorm(rope.model.model.embed_tokens(torch.tensor([ids])))  # (1, token, width)
        q = block.self_attn.q_proj(x).view(T, 4, HEAD_DIM).transpose(0, 1).double()  # (head, token, d)
        k = repeat_kv(block.self_attn.k_proj(x).view(1, T, 2, HEAD_DIM).transpose(1, 2), 2)[0].double()  # (head, token, d)
    below = np.tril(np.ones((T, T)))
    for h in (0, 3):
        want = (q[h] @ k[h].T).numpy() * HEAD_DIM ** -0.5 * below
        assert np.abs(split["unrotated"][(0, h)] - want).max() < ATOL
        assert np.abs(split["unrotated"][(0, h)] - split["score"][(0, h)]).max() > 1e-3, "the rotation changes the score"


def test_splits_json_of_a_rotary_model_says_rotary_and_reads_back(rope, tmp_path):
    doc = score_parts.build(rope, {LILY: {(0, 1), (2, 3)}})
    assert doc["positions"] == "rotary"
    assert doc["parts"][0] == ["token"]
    splits_file.write(tmp_path, "tiny-rope", doc)
    back = splits_file.read(tmp_path, "tiny-rope")
    assert back.positions == "rotary"
    entry = back.head(LILY, 1, 2)
    assert "table" not in entry and len(entry["scoreUnrotated"]) == len(entry["score"])
    broken = dict(doc, positions="learned")
    with pytest.raises(splits_file.DamagedFile):
        splits_file.write(tmp_path, "tiny-rope", broken)  # learned positions name a position part


def test_circuits_of_a_rotary_model_say_that_composition_ignores_position(rope):
    comp = circuits.composition(rope)
    assert comp["scores"].shape == (3, 4, 4, 4, 4)
    assert np.isfinite(comp["scores"]).all()
    doc_keys = circuits.COMPOSITION_ROTARY
    assert "position" in doc_keys


FROG = "frog lamp seven river coat frog lamp seven river coat"


@pytest.fixture(scope="module")
def rope_store(rope, tmp_path_factory):
    """A store holding a trace of FROG filed as tiny-rope's and the random rope model's
    splits.json of that sentence under the trace's revision: what a score-split figure of a
    rotary model reads. The trace is the random model's own where the tracer takes a Llama
    (schema 5, branch rope-trace); before that, tiny's committed trace relabelled (the same
    tokenizer, so the same ids and tokens; the figure reads only tokens and weights from it)."""
    from conftest import REPO
    from generator.model import tracing
    from generator.store import TraceStore

    root = tmp_path_factory.mktemp("rope-store")
    try:
        doc = tracing.trace(rope, FROG)
    except AttributeError:  # a tracer that reads GPT-2's module names only
        doc = copy.deepcopy(dict(TraceStore(REPO / "traces").load("tiny", FROG)))
        doc["model"] = "tiny-rope"
        doc["meta"]["model"] = "tiny-rope"
    store = TraceStore(root)
    with store.writing():
        store.write(doc)
    splits = score_parts.build(rope, {FROG: None})
    splits["revision"] = doc["meta"]["revision"]
    splits_file.write(root, "tiny-rope", splits)
    return store


def _figure(store, body):
    from generator.lessons.directives import parse_directive
    from generator.render import score_split
    from generator.render.context import Ctx

    ctx = Ctx(store=store)
    d = parse_directive("score-split", f'model: tiny-rope\nsentence: "{FROG}"\n' + body, "content/modern.md:3")
    return score_split.render(d, ctx), ctx


def test_a_rotary_score_split_figure_has_no_position_row_and_says_why(rope_store):
    import re

    from generator.lessons.refs import Ref
    from generator.render import score_split

    html, ctx = _figure(rope_store, "layer: 1\nhead: 2\ntoken: '#9'\nkey: '#8'\nid: f\n")
    parts = re.findall(r'<tr data-part="([^"]+)"', html)
    assert parts == ["token"], "layer 1 of a rotary model: the token part alone"
    assert "position enters only through the rotation" in html
    fig = ctx.figures["f"]
    e = splits_file.read(rope_store.root, "tiny-rope").head(FROG, 1, 2)
    cell = 9 * 10 // 2 + 8
    ref = lambda name: score_split.ref(Ref("f", name, (), "content/modern.md:9", name), fig)  # noqa: E731
    assert ref("unrotated") == f"{e['scoreUnrotated'][cell]:.2f}".replace("-", "\u2212")
    html4, _ = _figure(rope_store, "layer: 3\nhead: 4\ntoken: '#9'\nkey: '#3'\n")
    assert "position" not in re.findall(r'<tr data-part="([^"]+)"', html4) and "L2H3" in html4


def test_a_rotary_model_has_no_table_and_no_position_share(rope_store):
    from generator.lessons.directives import parse_directive
    from generator.lessons.errors import LessonError
    from generator.lessons.refs import Ref
    from generator.render import score_split

    with pytest.raises(LessonError, match="no position part: its positions enter only through the rotation"):
        parse_directive("score-split", f'model: tiny-rope\nsentence: "{FROG}"\nlayer: 1\nhead: 1\nside: table\n', "content/modern.md:3")
    _, ctx = _figure(rope_store, "layer: 2\nhead: 1\nid: f\n")
    with pytest.raises(LessonError, match="no position part"):
        score_split.ref(Ref("f", "share", ("position",), "content/modern.md:9", "f.share(position)"), ctx.figures["f"])
