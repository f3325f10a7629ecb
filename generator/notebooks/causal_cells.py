"""The causal chapter's part of its notebook: the tiny model written out in numpy from its
committed safetensors weights, then each causal measurement of the chapter redone with it and
checked against the trace: a head removed (zeros, then its average output), direct logit
attribution, activation patching and the logit lens (the rest of the notebooks' text is
cells.py's).

The forward pass is written once (:func:`forward`), by the first causal section of a notebook;
the later sections call its ``run``. Nothing here knows a number of a trace: the cells read them
from the files at run time, as every notebook does."""

from __future__ import annotations

from .cells import Section


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
W_U = P["transformer.wte.weight"]  # (vocab, width): the unembedding is the embedding, tied


def layer_norm(x, name):
    mean = x.mean(-1, keepdims=True)
    variance = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(variance + eps) * P[name + ".weight"] + P[name + ".bias"]


def gelu(x):  # GPT-2's "gelu_new"
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))


def run(ids, replace=None):
    """The tiny model on `ids`. `replace` maps (layer, head), from 0, to what that head's output
    becomes at every position, (token, head_dim) or (head_dim,). Returns a dict:
    logits (token, vocab); stages (layer + 1, token, width), the residual stream before each
    block and before the final layer norm; outs (layer, head, token, head_dim), each head's
    output before W_O; mlps (layer, token, width), each MLP's output."""
    replace = replace or {}
    T = len(ids)
    x = P["transformer.wte.weight"][ids] + P["transformer.wpe.weight"][:T]  # (token, width)
    below = np.tril(np.ones((T, T), dtype=bool))  # (query, key)
    stages, outs, mlps = [], [], []
    for l in range(n_layer):
        p = f"transformer.h.{l}."
        stages.append(x)
        qkv = layer_norm(x, p + "ln_1") @ P[p + "attn.c_attn.weight"] + P[p + "attn.c_attn.bias"]  # (token, 3 width)
        q, k, v = np.split(qkv, 3, axis=-1)  # (token, width) each
        heads = []
        for h in range(n_head):
            c = slice(h * head_dim, (h + 1) * head_dim)
            scaled = np.where(below, q[:, c] @ k[:, c].T / np.sqrt(head_dim), -np.inf)  # (query, key)
            w = np.exp(scaled - scaled.max(1, keepdims=True))  # (query, key)
            w = w / w.sum(1, keepdims=True)
            out = w @ v[:, c]  # (token, head_dim)
            heads.append(np.broadcast_to(replace[l, h], out.shape) if (l, h) in replace else out)
        outs.append(heads)
        x = x + np.concatenate(heads, axis=1) @ P[p + "attn.c_proj.weight"] + P[p + "attn.c_proj.bias"]  # (token, width)
        hidden = gelu(layer_norm(x, p + "ln_2") @ P[p + "mlp.c_fc.weight"] + P[p + "mlp.c_fc.bias"])  # (token, 4 width)
        mlps.append(hidden @ P[p + "mlp.c_proj.weight"] + P[p + "mlp.c_proj.bias"])  # (token, width)
        x = x + mlps[-1]
    stages.append(x)
    return {"logits": layer_norm(x, "transformer.ln_f") @ W_U.T, "stages": np.array(stages),
            "outs": np.array(outs), "mlps": np.array(mlps)}


def logits(ids, removed=None):
    """(token, vocab): the next-token logits with `removed` = (layer, head), from 0, replaced by zeros."""
    return run(ids, None if removed is None else {removed: np.zeros(head_dim)})["logits"]


def softmax_rows(z):
    e = np.exp(z - z.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)
'''


def forward() -> Section:
    s = Section(files=["tiny/model.safetensors", "tiny/config.json"])
    s.md("""
## The tiny model in numpy

Every test of this chapter changes the model's own computation, so here is the tiny model itself,
written out in numpy from its committed weights (`data/tiny/model.safetensors`): GPT-2's
architecture at 4 layers × 4 heads × width 128. `run` can replace any head's output, and keeps
what the later sections read: the residual stream before each layer, each head's output and each
MLP's.
""")
    s.code(FORWARD)
    return s


def _targets_cell(trace_file: str, pos: int, targets: list[tuple[int, str]]) -> str:
    (a, a_text), (b, b_text) = targets
    return f'''
trace = load_json({trace_file!r})
ids = [t["id"] for t in trace["tokens"]]
causal = trace["causal"]
followed = np.array(causal["followed"])  # (token, followed): the ids each position follows
T, n = followed.shape
pos = {pos}
a_id, b_id = {a}, {b}  # {a_text}, {b_text}
a = int(np.flatnonzero(followed[pos] == a_id)[-1])  # their columns in the trace's arrays
b = int(np.flatnonzero(followed[pos] == b_id)[-1])
'''


def _replaced_exercise(s: Section, name: str, variable: str, task: str, ids: str, source: str, layer: int, head: int,
                       targets: list[tuple[int, str]], pos: int) -> None:
    """An exercise that runs the model with one head's output replaced by `source[layer, head]`
    and measures the targets' logit difference."""
    (_, a_text), (_, b_text) = targets
    s.exercise(name, f"{task} and measure logit({a_text}) − logit({b_text}) at position {pos}.", variable, f'''
out = run({ids}, {{({layer}, {head}): {source}[{layer}, {head}]}})["logits"]  # (token, vocab)
{variable} = out[pos, a_id] - out[pos, b_id]''')


def ablation(trace_file: str, text: str, pos: int, pos_text: str, targets: list[tuple[int, str]],
             layer: int, head: int, reference: list[str] | None) -> Section:
    """`reference`: the trace files of the texts mean-ablation averages over, or None (no mean part)."""
    (a, a_text), (b, b_text) = targets
    s = Section(files=[trace_file, *(reference or [])])
    s.md(f"""
## Removing a head

The chapter's ablation figure measures logit({a_text}) − logit({b_text}) after “{text}” (at
position {pos}, {pos_text}) with each head removed: its output replaced by zeros at every
position. Its largest cell is layer {layer + 1}, head {head + 1}.
""")
    s.code(_targets_cell(trace_file, pos, targets) + f'''
clean = decode(causal["cleanLogit"]).reshape(T, n)
change = decode(causal["dLogit"]).reshape(len(causal["ablations"]), n_layer, n_head, T, n)  # (ablation, layer, head, token, followed)
zero = change[causal["ablations"].index("zero")]
step = causal["cleanLogit"]["scale"] + causal["dLogit"]["scale"]  # two logits, each half a step
expect("clean", clean[pos, a] - clean[pos, b], causal["cleanLogit"]["scale"])
expect("removed", clean[pos, a] - clean[pos, b] + zero[{layer}, {head}, pos, a] - zero[{layer}, {head}, pos, b], step)
print("the page's number, from the trace:", f"{{float(EXPECT['removed'][0]):.2f}}")
''')
    s.code('''
out = logits(ids)  # (token, vocab)
mine = out[pos, a_id] - out[pos, b_id]
check(mine, "clean")
''')
    s.exercise("removed", f"Remove layer {layer + 1}, head {head + 1} (`removed=({layer}, {head})`, from 0) "
               f"and measure logit({a_text}) − logit({b_text}) at position {pos} again.",
               "removed", f'''
without = logits(ids, removed=({layer}, {head}))  # (token, vocab)
removed = without[pos, a_id] - without[pos, b_id]''')
    if reference:
        s.md(f"""
### With its average output instead

Zeros are a value the head never outputs. *Mean-ablation* replaces the head's output by its
average over fixed reference texts instead, every position but `<|endoftext|>` (the trace names
them: `causal["meanReference"]`). The reference texts' traces are in `data/tiny/`; their token ids
are all we need, since the averages come from our own forward pass.
""")
        s.code(f'''
reference = [load_json(name) for name in {reference!r}]
total, positions = np.zeros((n_layer, n_head, head_dim)), 0
for t in reference:
    outs = run([tok["id"] for tok in t["tokens"]])["outs"]  # (layer, head, token, head_dim)
    total += outs[:, :, 1:].sum(axis=2)  # every position but <|endoftext|>
    positions += len(t["tokens"]) - 1
means = total / positions  # (layer, head, head_dim)
assert positions == causal["meanReference"]["positions"], (positions, causal["meanReference"])
mean = change[causal["ablations"].index("mean")]  # (layer, head, token, followed)
expect("averaged", clean[pos, a] - clean[pos, b] + mean[{layer}, {head}, pos, a] - mean[{layer}, {head}, pos, b], step + 1e-4)
''')
        _replaced_exercise(s, "averaged", "averaged", f"Replace layer {layer + 1}, head {head + 1}'s output by its average "
                           f"(`means[{layer}, {head}]`, through `run`'s `replace`)", "ids", "means", layer, head, targets, pos)
    return s


def attribution(trace_file: str, text: str, pos: int, pos_text: str, targets: list[tuple[int, str]],
                layer: int, head: int) -> Section:
    (a, a_text), (b, b_text) = targets
    s = Section(files=[trace_file])
    s.md(f"""
## Direct logit attribution

The stream the final layer norm reads is a sum of parts: the embedding, every head's output
through its rows of W_O, every MLP's output, and the attention output biases. Freeze the layer
norm's scale at its value in the real run, and the logit difference logit({a_text}) −
logit({b_text}) after “{text}” (position {pos}, {pos_text}) splits into one share per part.
""")
    s.code(_targets_cell(trace_file, pos, targets) + '''
dla = decode(causal["dla"]).reshape(len(causal["parts"]), T, n)  # (part, token, followed)
shares = dla[:, pos, a] - dla[:, pos, b]  # (part,)
expect("parts", shares, causal["dla"]["scale"])
expect("share", shares[causal["parts"].index("L{layer}H{head}")], causal["dla"]["scale"])
for name, x in sorted(zip(causal["parts"], shares), key=lambda p: -abs(p[1]))[:5]:
    print(f"{name:>9} {x:+.3f}")
'''.replace("{layer}", str(layer + 1)).replace("{head}", str(head + 1)))
    s.code('''
r = run(ids)
x = r["stages"][-1][pos]  # (width,): the stream the final layer norm reads here
sigma = np.sqrt(x.var() + eps)  # its scale, frozen
direction = (W_U[a_id] - W_U[b_id]) * P["transformer.ln_f.weight"]  # (width,)


def share(part):
    """A part's direct share of the difference: centred, divided by the frozen scale, read off."""
    return (part - part.mean()) / sigma @ direction
''')
    s.exercise("share", f"Layer {layer + 1}, head {head + 1}'s share: its output at position {pos} "
               f"(`r[\"outs\"][{layer}, {head}, pos]`) through its rows of W_O "
               f"(`P[\"transformer.h.{layer}.attn.c_proj.weight\"]`, rows {head} × head_dim to "
               f"{head + 1} × head_dim), then `share`.",
               "share_of_head", f'''
W_O = P["transformer.h.{layer}.attn.c_proj.weight"][{head} * head_dim:{head + 1} * head_dim]  # (head_dim, width)
share_of_head = share(r["outs"][{layer}, {head}, pos] @ W_O)''')
    s.md("Every part the same way; the shares add up to the logit difference itself.")
    s.code('''
parts = [r["stages"][0][pos]]  # the embedding: token plus position
for l in range(n_layer):
    W_O = P[f"transformer.h.{l}.attn.c_proj.weight"]  # (width, width): the heads' rows, one block each
    parts += [r["outs"][l, h, pos] @ W_O[h * head_dim:(h + 1) * head_dim] for h in range(n_head)]
parts += [r["mlps"][l, pos] for l in range(n_layer)]
parts.append(sum(P[f"transformer.h.{l}.attn.c_proj.bias"] for l in range(n_layer)))  # the biases
print("the parts add up to the stream within", np.abs(sum(parts) - x).max())
mine = np.array([share(p) for p in parts])  # (part,)
mine[-1] += P["transformer.ln_f.bias"] @ (W_U[a_id] - W_U[b_id])  # the layer norm's own offset goes with the biases
print("their sum:", mine.sum(), "the logit difference:", r["logits"][pos, a_id] - r["logits"][pos, b_id])
check(mine, "parts")
''''')
    return s


def patching(files: tuple[str, str], texts: tuple[str, str], pos: int, pos_text: str,
             targets: list[tuple[int, str]], layer: int, head: int) -> Section:
    (a, a_text), (b, b_text) = targets
    s = Section(files=[*files, "tiny/patching.json"])
    s.md(f"""
## Activation patching

Run “{texts[1]}”, keep every head's output, then run “{texts[0]}” with one head's output swapped
for the first run's, at every position. `data/tiny/patching.json` holds the result for every head:
logit({a_text}) and logit({b_text}) at each position. The chapter's figure reads position {pos}
({pos_text}); its largest cell is layer {layer + 1}, head {head + 1}.
""")
    s.code(f'''
into, source = load_json({files[0]!r}), load_json({files[1]!r})
ids_into, ids_source = [t["id"] for t in into["tokens"]], [t["id"] for t in source["tokens"]]
pos, a_id, b_id = {pos}, {a}, {b}  # {pos_text}; {a_text}, {b_text}
entry = next(p for p in load_json("tiny/patching.json")["pairs"]
             if p["a"] == into["text"] and p["b"] == source["text"] and p["targets"] == [a_id, b_id])
clean_into, clean_source, patched = (np.array(entry[k]) for k in ("cleanA", "cleanB", "patched"))
digits = lambda x: 5e-5 * np.abs(x)  # the file keeps 5 significant digits
gap = lambda lg: lg[..., 0] - lg[..., 1]  # logit({a_text}) − logit({b_text})
expect("patched", gap(patched[{layer}, {head}, pos]), digits(patched[{layer}, {head}, pos]).sum() + 1e-4)
print("into:", gap(clean_into[pos]), " source:", gap(clean_source[pos]), " patched:", gap(patched[{layer}, {head}, pos]))
''')
    s.code('''
kept = run(ids_source)["outs"]  # (layer, head, token, head_dim): every head's output on the source sentence
''')
    _replaced_exercise(s, "patched", "patched_gap", f"Run the first sentence with layer {layer + 1}, head {head + 1}'s output "
                       "taken from `kept` (`run`'s `replace`),", "ids_into", "kept", layer, head, targets, pos)
    s.code(f'''
closed = (gap(patched[{layer}, {head}, pos]) - gap(clean_into[pos])) / (gap(clean_source[pos]) - gap(clean_into[pos]))
print(f"this one head closes {{closed:.0%}} of the gap between the two sentences")
''')
    return s


def lens(trace_file: str, text: str, pos: int, pos_text: str) -> Section:
    s = Section(files=[trace_file])
    s.md(f"""
## The logit lens

Read the stream after the embedding and after each layer as if it were the last: through the
final layer norm and the unembedding, then softmax. The trace keeps the top guesses at every
position; here, “{text}” at position {pos} ({pos_text}).
""")
    s.code(f'''
trace = load_json({trace_file!r})
ids = [t["id"] for t in trace["tokens"]]
causal = trace["causal"]
pos = {pos}
lens_ids = np.array(causal["lensIds"])  # (stage, token, k): stage 0 is the embedding
S, T, k = lens_ids.shape
lens_probs = decode(causal["lensProbs"]).reshape(S, T, k)
for s in range(S):
    where = "the embedding" if s == 0 else f"layer {{s}}"
    print(f"after {{where}}: {{causal['tokenTexts'][str(lens_ids[s, pos, 0])]!r}} {{lens_probs[s, pos, 0]:.3f}}")
expect("lens", lens_probs[:, pos, 0], causal["lensProbs"]["scale"] / 2 + 1e-5)
''')
    s.exercise("lens", f"The top probability after each stage at position {pos}: the stream before "
               "each layer and before the final layer norm (`run(ids)[\"stages\"]`), through "
               "`layer_norm(…, \"transformer.ln_f\")` and `W_U.T`, then `softmax_rows`.",
               "lens", '''
probs = softmax_rows(layer_norm(run(ids)["stages"][:, pos], "transformer.ln_f") @ W_U.T)  # (stage, vocab)
assert (probs.argmax(-1) == lens_ids[:, pos, 0]).all()  # the same guesses
lens = probs.max(-1)''')
    return s
