"""The causal chapter's part of its notebook: the tiny model written out in numpy from its
committed safetensors weights, a head removed, and the ablation figure's number reproduced
(the rest of the notebooks' text is notebook_cells.py's)."""

from __future__ import annotations

from .notebook_cells import Section


FORWARD = '''
def load_safetensors(path):
    """Every tensor of a .safetensors file: 8 bytes of header length, a JSON header, the data."""
    raw = Path(path).read_bytes()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    out = {}
    for name, info in header.items():
        if name != "__metadata__":
            assert info["dtype"] == "F32", info["dtype"]
            a, b = info["data_offsets"]
            out[name] = np.frombuffer(raw[8 + n + a:8 + n + b], dtype="<f4").reshape(info["shape"]).astype(np.float64)
    return out


P = load_safetensors(DATA / "tiny" / "model.safetensors")
config = load_json("tiny/config.json")
n_layer, n_head, width = config["n_layer"], config["n_head"], config["n_embd"]
head_dim, eps = width // n_head, config["layer_norm_epsilon"]


def layer_norm(x, name):
    mean = x.mean(-1, keepdims=True)
    variance = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(variance + eps) * P[name + ".weight"] + P[name + ".bias"]


def gelu(x):  # GPT-2's "gelu_new"
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))


def logits(ids, removed=None):
    """(token, vocab): the model's next-token logits; `removed` = (layer, head), from 0, is a head
    whose output is replaced by zeros at every position."""
    T = len(ids)
    x = P["transformer.wte.weight"][ids] + P["transformer.wpe.weight"][:T]  # (token, width)
    below = np.tril(np.ones((T, T), dtype=bool))  # (query, key)
    for l in range(n_layer):
        p = f"transformer.h.{l}."
        qkv = layer_norm(x, p + "ln_1") @ P[p + "attn.c_attn.weight"] + P[p + "attn.c_attn.bias"]  # (token, 3 width)
        q, k, v = np.split(qkv, 3, axis=-1)  # (token, width) each
        outs = []
        for h in range(n_head):
            c = slice(h * head_dim, (h + 1) * head_dim)
            scaled = np.where(below, q[:, c] @ k[:, c].T / np.sqrt(head_dim), -np.inf)  # (query, key)
            w = np.exp(scaled - scaled.max(1, keepdims=True))
            w = w / w.sum(1, keepdims=True)
            outs.append(np.zeros((T, head_dim)) if removed == (l, h) else w @ v[:, c])  # (token, head_dim)
        x = x + np.concatenate(outs, axis=1) @ P[p + "attn.c_proj.weight"] + P[p + "attn.c_proj.bias"]
        hidden = gelu(layer_norm(x, p + "ln_2") @ P[p + "mlp.c_fc.weight"] + P[p + "mlp.c_fc.bias"])
        x = x + hidden @ P[p + "mlp.c_proj.weight"] + P[p + "mlp.c_proj.bias"]
    return layer_norm(x, "transformer.ln_f") @ P["transformer.wte.weight"].T  # tied unembedding
'''


def ablation(trace_file: str, text: str, pos: int, pos_text: str, targets: list[tuple[int, str]], layer: int, head: int) -> Section:
    (a, a_text), (b, b_text) = targets
    s = Section(files=[trace_file, "tiny/model.safetensors", "tiny/config.json"])
    s.md(f"""
## Removing a head

The chapter's ablation figure measures logit({a_text}) − logit({b_text}) after “{text}” (at
position {pos}, {pos_text}) with each head removed: its output replaced by zeros at every
position. Its largest cell is layer {layer + 1}, head {head + 1}. Here is the tiny model itself,
written out in numpy from its committed weights (`data/tiny/model.safetensors`), so that you can
remove the head yourself.
""")
    s.code(FORWARD)
    s.code(f'''
trace = load_json({trace_file!r})
ids = [t["id"] for t in trace["tokens"]]
causal = trace["causal"]
followed = np.array(causal["followed"])  # (token, followed): the ids each position follows
a = int(np.flatnonzero(followed[{pos}] == {a})[-1])  # {a_text}
b = int(np.flatnonzero(followed[{pos}] == {b})[-1])  # {b_text}
T, n = followed.shape
clean = decode(causal["cleanLogit"]).reshape(T, n)
change = decode(causal["dLogit"]).reshape(len(causal["ablations"]), n_layer, n_head, T, n)[causal["ablations"].index("zero")]
step = causal["cleanLogit"]["scale"] + causal["dLogit"]["scale"]  # two logits, each half a step
expect("clean", clean[{pos}, a] - clean[{pos}, b], causal["cleanLogit"]["scale"])
expect("removed", clean[{pos}, a] - clean[{pos}, b] + change[{layer}, {head}, {pos}, a] - change[{layer}, {head}, {pos}, b], step)
print("the page's number, from the trace:", f"{{float(EXPECT['removed'][0]):.2f}}")
''')
    s.code(f'''
out = logits(ids)  # (token, vocab)
mine = out[{pos}, {a}] - out[{pos}, {b}]
check(mine, "clean")
''')
    s.exercise("removed", f"Remove layer {layer + 1}, head {head + 1} (`removed=({layer}, {head})`, from 0) "
               f"and measure logit({a_text}) − logit({b_text}) at position {pos} again.",
               "removed", f'''
without = logits(ids, removed=({layer}, {head}))  # (token, vocab)
removed = without[{pos}, {a}] - without[{pos}, {b}]''')
    return s
