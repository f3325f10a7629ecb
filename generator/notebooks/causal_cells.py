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
d_head, eps = width // n_head, config["layer_norm_epsilon"]
W_U = P["transformer.wte.weight"]  # (vocab, width): the unembedding is the embedding, tied


def layer_norm(x, name):
    mean = x.mean(-1, keepdims=True)
    variance = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(variance + eps) * P[name + ".weight"] + P[name + ".bias"]


def gelu(x):  # GPT-2's "gelu_new"
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))


def run(ids, replace=None):
    """The tiny model on `ids`. `replace` maps (layer, head), from 0, to what that head's output
    becomes at every position, (token, d_head) or (d_head,). Returns a dict:
    logits (token, vocab); stages (layer + 1, token, width), the residual stream before each
    block and before the final layer norm; outs (layer, head, token, d_head), each head's
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
            c = slice(h * d_head, (h + 1) * d_head)
            scaled = np.where(below, q[:, c] @ k[:, c].T / np.sqrt(d_head), -np.inf)  # (query, key)
            w = np.exp(scaled - scaled.max(1, keepdims=True))  # (query, key)
            w = w / w.sum(1, keepdims=True)
            out = w @ v[:, c]  # (token, d_head)
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
    return run(ids, None if removed is None else {removed: np.zeros(d_head)})["logits"]


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


def _targets_cell(trace_file: str, pos: int, targets: list[tuple[int, str]], p: str) -> str:
    """The figure's trace, position and targets, each name starting with `p` (its section's own,
    notebooks/names.py: two causal figures may read other sentences)."""
    (a, a_text), (b, b_text) = targets
    return f'''
{p}trace = load_json({trace_file!r})
{p}ids = [t["id"] for t in {p}trace["tokens"]]
{p}causal = {p}trace["causal"]
{p}followed = np.array({p}causal["followed"])  # (token, followed): the ids each position follows
{p}T, {p}n = {p}followed.shape
{p}pos = {pos}
{p}a_id, {p}b_id = {a}, {b}  # {a_text}, {b_text}
{p}a = int(np.flatnonzero({p}followed[{p}pos] == {p}a_id)[-1])  # their columns in the trace's arrays
{p}b = int(np.flatnonzero({p}followed[{p}pos] == {p}b_id)[-1])
'''


def _replaced_exercise(s: Section, name: str, variable: str, task: str, ids: str, source: str, layer: int, head: int,
                       targets: list[tuple[int, str]], pos: int, p: str) -> None:
    """An exercise that runs the model with one head's output replaced by `source[layer, head]`
    and measures the targets' logit difference (at `{p}pos`, of `{p}a_id` and `{p}b_id`)."""
    (_, a_text), (_, b_text) = targets
    s.exercise(name, f"{task} and measure logit({a_text}) − logit({b_text}) at position {pos}.", variable, f'''
{variable}_logits = run({ids}, {{({layer}, {head}): {source}[{layer}, {head}]}})["logits"]  # (token, vocab)
{variable} = {variable}_logits[{p}pos, {p}a_id] - {variable}_logits[{p}pos, {p}b_id]''')


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
    s.code(_targets_cell(trace_file, pos, targets, "ab_") + f'''
clean = decode(ab_causal["cleanLogit"]).reshape(ab_T, ab_n)
change = decode(ab_causal["dLogit"]).reshape(len(ab_causal["ablations"]), n_layer, n_head, ab_T, ab_n)  # (ablation, layer, head, token, followed)
zero = change[ab_causal["ablations"].index("zero")]
step = ab_causal["cleanLogit"]["scale"] + ab_causal["dLogit"]["scale"]  # two logits, each half a step
expect("clean", clean[ab_pos, ab_a] - clean[ab_pos, ab_b], ab_causal["cleanLogit"]["scale"])
expect("removed", clean[ab_pos, ab_a] - clean[ab_pos, ab_b] + zero[{layer}, {head}, ab_pos, ab_a] - zero[{layer}, {head}, ab_pos, ab_b], step)
print("the page's number, from the trace:", f"{{float(EXPECT['removed'][0]):.2f}}")
''')
    s.code('''
clean_logits = logits(ab_ids)  # (token, vocab)
clean_gap = clean_logits[ab_pos, ab_a_id] - clean_logits[ab_pos, ab_b_id]
check(clean_gap, "clean")
''')
    s.exercise("removed", f"Remove layer {layer + 1}, head {head + 1} (`removed=({layer}, {head})`, from 0) "
               f"and measure logit({a_text}) − logit({b_text}) at position {pos} (`ab_pos`) again.",
               "removed", f'''
without = logits(ab_ids, removed=({layer}, {head}))  # (token, vocab)
removed = without[ab_pos, ab_a_id] - without[ab_pos, ab_b_id]''')
    if reference:
        s.md(f"""
### With its average output instead

Zeros are a value the head never outputs. *Mean-ablation* replaces the head's output by its
average over fixed reference texts instead, every position but `<|endoftext|>` (the trace names
them: `ab_causal["meanReference"]`). The reference texts' traces are in `data/tiny/`; their token ids
are all we need, since the averages come from our own forward pass.
""")
        s.code(f'''
reference = [load_json(name) for name in {reference!r}]
summed_outs, positions = np.zeros((n_layer, n_head, d_head)), 0
for t in reference:
    ref_outs = run([tok["id"] for tok in t["tokens"]])["outs"]  # (layer, head, token, d_head)
    summed_outs += ref_outs[:, :, 1:].sum(axis=2)  # every position but <|endoftext|>
    positions += len(t["tokens"]) - 1
means = summed_outs / positions  # (layer, head, d_head)
assert positions == ab_causal["meanReference"]["positions"], (positions, ab_causal["meanReference"])
mean_change = change[ab_causal["ablations"].index("mean")]  # (layer, head, token, followed)
expect("averaged", clean[ab_pos, ab_a] - clean[ab_pos, ab_b] + mean_change[{layer}, {head}, ab_pos, ab_a] - mean_change[{layer}, {head}, ab_pos, ab_b], step + 1e-4)
''')
        _replaced_exercise(s, "averaged", "averaged", f"Replace layer {layer + 1}, head {head + 1}'s output by its average "
                           f"(`means[{layer}, {head}]`, through `run`'s `replace`)", "ab_ids", "means", layer, head, targets, pos, "ab_")
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
    s.code(_targets_cell(trace_file, pos, targets, "dla_") + '''
dla = decode(dla_causal["dla"]).reshape(len(dla_causal["parts"]), dla_T, dla_n)  # (part, token, followed)
shares = dla[:, dla_pos, dla_a] - dla[:, dla_pos, dla_b]  # (part,)
expect("parts", shares, dla_causal["dla"]["scale"])
expect("share", shares[dla_causal["parts"].index("L{layer}H{head}")], dla_causal["dla"]["scale"])
for part_name, part_share in sorted(zip(dla_causal["parts"], shares), key=lambda p: -abs(p[1]))[:5]:
    print(f"{part_name:>9} {part_share:+.3f}")
'''.replace("{layer}", str(layer + 1)).replace("{head}", str(head + 1)))
    s.code('''
clean_run = run(dla_ids)
stream = clean_run["stages"][-1][dla_pos]  # (width,): the stream the final layer norm reads here
sigma = np.sqrt(stream.var() + eps)  # its scale, frozen
direction = (W_U[dla_a_id] - W_U[dla_b_id]) * P["transformer.ln_f.weight"]  # (width,)


def share(part):
    """A part's direct share of the difference: centred, divided by the frozen scale, read off."""
    return (part - part.mean()) / sigma @ direction
''')
    s.exercise("share", f"Layer {layer + 1}, head {head + 1}'s share: its output at position {pos} "
               f"(`clean_run[\"outs\"][{layer}, {head}, dla_pos]`) through its rows of W_O "
               f"(`P[\"transformer.h.{layer}.attn.c_proj.weight\"]`, rows {head} × d_head to "
               f"{head + 1} × d_head), then `share`.",
               "share_of_head", f'''
W_O = P["transformer.h.{layer}.attn.c_proj.weight"][{head} * d_head:{head + 1} * d_head]  # (d_head, width)
share_of_head = share(clean_run["outs"][{layer}, {head}, dla_pos] @ W_O)''')
    s.md("Every part the same way; the shares add up to the logit difference itself.")
    s.code('''
parts = [clean_run["stages"][0][dla_pos]]  # the embedding: token plus position
for l in range(n_layer):
    W_O = P[f"transformer.h.{l}.attn.c_proj.weight"]  # (width, width): the heads' rows, one block each
    parts += [clean_run["outs"][l, h, dla_pos] @ W_O[h * d_head:(h + 1) * d_head] for h in range(n_head)]
parts += [clean_run["mlps"][l, dla_pos] for l in range(n_layer)]
parts.append(sum(P[f"transformer.h.{l}.attn.c_proj.bias"] for l in range(n_layer)))  # the biases
print("the parts add up to the stream within", np.abs(sum(parts) - stream).max())
my_shares = np.array([share(p) for p in parts])  # (part,)
my_shares[-1] += P["transformer.ln_f.bias"] @ (W_U[dla_a_id] - W_U[dla_b_id])  # the layer norm's own offset goes with the biases
print("their sum:", my_shares.sum(), "the logit difference:", clean_run["logits"][dla_pos, dla_a_id] - clean_run["logits"][dla_pos, dla_b_id])
check(my_shares, "parts")
''')
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
pt_pos, pt_a_id, pt_b_id = {pos}, {a}, {b}  # {pos_text}; {a_text}, {b_text}
entry = next(p for p in load_json("tiny/patching.json")["pairs"]
             if p["a"] == into["text"] and p["b"] == source["text"] and p["targets"] == [pt_a_id, pt_b_id])
clean_into, clean_source, patched = (np.array(entry[key]) for key in ("cleanA", "cleanB", "patched"))
digits = lambda x: 5e-5 * np.abs(x)  # the file keeps 5 significant digits
gap = lambda lg: lg[..., 0] - lg[..., 1]  # logit({a_text}) − logit({b_text})
expect("patched", gap(patched[{layer}, {head}, pt_pos]), digits(patched[{layer}, {head}, pt_pos]).sum() + 1e-4)
print("into:", gap(clean_into[pt_pos]), " source:", gap(clean_source[pt_pos]), " patched:", gap(patched[{layer}, {head}, pt_pos]))
''')
    s.code('''
kept = run(ids_source)["outs"]  # (layer, head, token, d_head): every head's output on the source sentence
''')
    _replaced_exercise(s, "patched", "patched_gap", f"Run the first sentence with layer {layer + 1}, head {head + 1}'s output "
                       "taken from `kept` (`run`'s `replace`),", "ids_into", "kept", layer, head, targets, pos, "pt_")
    s.code(f'''
closed = (gap(patched[{layer}, {head}, pt_pos]) - gap(clean_into[pt_pos])) / (gap(clean_source[pt_pos]) - gap(clean_into[pt_pos]))
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
lens_trace = load_json({trace_file!r})
lens_token_ids = [t["id"] for t in lens_trace["tokens"]]
lens_causal = lens_trace["causal"]
lens_pos = {pos}
lens_ids = np.array(lens_causal["lensIds"])  # (stage, token, top): stage 0 is the embedding
lens_probs = decode(lens_causal["lensProbs"]).reshape(lens_ids.shape)
for stage in range(len(lens_ids)):
    where = "the embedding" if stage == 0 else f"layer {{stage}}"
    print(f"after {{where}}: {{lens_causal['tokenTexts'][str(lens_ids[stage, lens_pos, 0])]!r}} {{lens_probs[stage, lens_pos, 0]:.3f}}")
expect("lens", lens_probs[:, lens_pos, 0], lens_causal["lensProbs"]["scale"] / 2 + 1e-5)
''')
    s.exercise("lens", f"The top probability after each stage at position {pos} (`lens_pos`): the stream before "
               "each layer and before the final layer norm (`run(lens_token_ids)[\"stages\"]`), through "
               "`layer_norm(…, \"transformer.ln_f\")` and `W_U.T`, then `softmax_rows`.",
               "lens", '''
probs = softmax_rows(layer_norm(run(lens_token_ids)["stages"][:, lens_pos], "transformer.ln_f") @ W_U.T)  # (stage, vocab)
assert (probs.argmax(-1) == lens_ids[:, lens_pos, 0]).all()  # the same guesses
lens = probs.max(-1)''')
    return s
