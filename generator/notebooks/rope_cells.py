"""The notebook cells of chapter 7's rotary figure (`rope-distance`): score against distance from
the trace's unrotated queries and keys, turned with numpy, and the query heads of one group reading
the same keys. The trace is schema 5's (a rotary model's heads keep `qUnrotated`, its key/value
heads `kvHeads[g]` keep `k`, `v` and `kUnrotated`); rotary.json gives θ and the curve to check."""

from __future__ import annotations

from .cells import Section


def rope_distance(trace_file: str, rotary_file: str, model: str, text: str, layer: int, head: int,
                  query: int, key: int, query_text: str, key_text: str) -> Section:
    s = Section(files=[trace_file, rotary_file])
    s.md(f"""
## Position by rotation

The chapter's rotary figure: model `{model}`, “{text}”, layer {layer + 1}, head {head + 1}, the query
of {query_text} (position {query}) and the key of {key_text} (position {key}). The trace keeps each
head's query and each key/value head's key *before* the turn, so we can turn them ourselves.
""")
    s.code(f'''
rope_trace = load_json({trace_file!r})
rotary = load_json({rotary_file!r})
rope_layer, rope_head = {layer}, {head}  # layer {layer + 1}, head {head + 1} on the page, which counts from 1
qi, kj = {query}, {key}  # the query's and the key's positions (from 0, <|endoftext|> is 0)
heads = rope_trace["layers"][rope_layer]["heads"]
groups = rope_trace["layers"][rope_layer]["kvHeads"]  # one entry per key/value head
per_group = len(heads) // len(groups)  # query heads that share one key and value
group = rope_head // per_group  # the key/value head this query head reads
q_plain = decode(heads[rope_head]["qUnrotated"])  # (token, rope_dim), before the turn
k_plain = decode(groups[group]["kUnrotated"])  # (token, rope_dim)
rope_dim = q_plain.shape[1]
theta = rotary["ropeTheta"]
print("rope_dim", rope_dim, "theta", theta, "query heads per key:", per_group)
''')
    s.md("""
**The turn.** Dimension i is paired with dimension i + rope_dim/2, and each pair turns by
position × θ^(−2i/rope_dim) radians: the first pairs fast, the last slowly.
""")
    s.code('''
speeds = theta ** (-np.arange(0, rope_dim, 2) / rope_dim)  # (rope_dim/2,) radians per position


def turn(x, position):
    """x (…, rope_dim) turned as the model turns a query or key at `position`."""
    angle = np.concatenate([position * speeds, position * speeds])  # (rope_dim,)
    half = np.concatenate([-x[..., rope_dim // 2:], x[..., :rope_dim // 2]], axis=-1)
    return x * np.cos(angle) + half * np.sin(angle)


# the score depends only on the distance: turning the query by d and the key by 0 is the same as
# turning them by their own positions when they stand d apart
real = turn(q_plain[qi], qi) @ turn(k_plain[kj], kj) / np.sqrt(rope_dim)
same = turn(q_plain[qi], qi - kj) @ k_plain[kj] / np.sqrt(rope_dim)
print("real score", round(float(real), 4), "turned by the distance alone", round(float(same), 4))
''')
    s.code('''
rope_pair = next(p for s in rotary["sentences"] for p in s["pairs"] if (p["query"], p["key"]) == (qi, kj))
stored = np.array(rope_pair["curve"][rope_layer][rope_head][: rotary["maxDistance"] + 1])
# the trace's numbers are rounded: allow what that rounding can move a dot product
slack = (np.abs(q_plain[qi]).sum() * heads[rope_head]["qUnrotated"]["scale"] + np.abs(k_plain[kj]).sum()
         * groups[group]["kUnrotated"]["scale"]) / np.sqrt(rope_dim)
expect("curve", stored, slack)
''')
    s.exercise("curve", "The pair's score at every distance 0 … `rotary['maxDistance']`: turn the query "
               "by d, leave the key unturned, dot them and divide by √rope_dim.",
               "curve", '''
curve = np.array([turn(q_plain[qi], d) @ k_plain[kj] for d in range(rotary["maxDistance"] + 1)]) / np.sqrt(rope_dim)''')
    s.md("The curve as a text chart, one row per distance (`#` for the part above the lowest score):")
    s.code('''
low, high = stored.min(), stored.max()
for d, value in enumerate(stored[:17]):
    print(f"{d:3d} {value:7.2f} " + "#" * int(round(40 * (value - low) / (high - low or 1))))
''')
    s.md("""
**One key, several heads.** The trace keeps one key per key/value head. Every query head of the
group scores its own (turned) query against that same key:
""")
    s.code('''
k_shared = decode(groups[group]["k"])  # (token, rope_dim), turned
for h in range(group * per_group, (group + 1) * per_group):
    q_turned = decode(heads[h]["q"])  # (token, rope_dim), turned
    mine = np.tril(q_turned @ k_shared.T)
    theirs = np.tril(decode(heads[h]["scores"]))
    print(f"layer {rope_layer + 1}, head {h + 1}: reads key/value head {group + 1};",
          "its scores are its query times the shared key:", np.allclose(mine, theirs, atol=0.05 * np.abs(theirs).max()))
''')
    return s
