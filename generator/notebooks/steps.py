"""The notebook cells that a lesson's Code tab shows as its Python view (a line
`[[python: scores]]`, generator/markdown/python_view.py): one text for the page and for the
notebook (cells.py places them), so the two cannot drift apart. A step reads the
variables that the notebook's cells before it set (`trace`, `layer`, `head`, `i`, ...; each section's
own names, notebooks/names.py), which carry the numbers of the build; the steps themselves hold
none. A step is short code a reader can run and follow (the trace, numpy); the checks against the
trace's rounding (`expect`, `check`) are cells of the notebook only (cells.py), never a step."""

from __future__ import annotations

import inspect
import re

from .. import bpe

# A lesson's line that shows steps in a Code tab (python_view expands it; build.py reads which
# steps a page shows).
MARK_RE = re.compile(r"^(\s*)\[\[python:([^\]]*)\]\]\s*$")

STEPS = {  # a step's cell, the same in the notebook and in a Code tab's Python view
    # chapter 1
    "tokens": '''
for position, t in enumerate(tokenized["tokens"]):
    print(position, t["id"], repr(t["text"]))  # a leading space is part of the token
''',
    "endoftext": '''
print(tokenized["tokens"][0])  # position 0: <|endoftext|>, in front of every sentence
print(vocab["<|endoftext|>"])  # its id in the vocabulary
''',
    "merges": "\n" + inspect.getsource(bpe.join_pair) + '''

merges = load_json("tiny/tokenizer.json")["model"]["merges"]  # the merge list, the earliest first
rank = {tuple(pair): r + 1 for r, pair in enumerate(merges)}  # a pair -> its place in the list, from 1
pieces = list(byte_level(word))  # one piece per byte; a space is "Ġ"
while True:
    ranked = [(rank[pair], pair) for pair in zip(pieces, pieces[1:]) if pair in rank]
    if not ranked:
        break  # no pair of the word is on the list: the pieces left are its tokens
    r, pair = min(ranked)
    pieces = join_pair(pieces, pair)  # every occurrence of the pair joined, left to right
    print(r, pair, pieces)  # the merge's place in the list, its pair, the word after it
print([vocab[p] for p in pieces])  # the tokens' ids
''',
    # chapter 2
    "embedding": '''
print([t["display"] for t in sentence["tokens"]])  # the rows of the figure
print(token_rows[focus])  # the focus token's row of the embedding matrix
print(position_rows[focus])  # the row of its position
print(token_rows[focus] + position_rows[focus])  # their sum: what layer 1 receives
''',
    "cosine": '''
cos = lambda a, b: a @ b / (np.linalg.norm(a) * np.linalg.norm(b))
print(cos(token_rows[focus], token_rows[focus]))  # 1: a vector points its own way
for t, other in zip(sentence["tokens"], token_rows):  # the focus token and each token of the sentence: how alike?
    print(t["display"], round(float(cos(token_rows[focus], other)), 3))
''',
    "map": '''
points = load_json("tiny/vectors.json")["map"]
print(points["rule"])  # which tokens the map shows
for t in points["marks"]:
    print(t["display"], t["x"], t["y"])  # a marked word: across, up
print(points["explained"])  # the share of the spread on each of the two directions
''',
    "layernorm": '''
vec = x[ln_focus]  # the figure's token's vector, as layer 1 receives it
print(vec.mean(), vec.std())
z = (vec - vec.mean()) / vec.std()  # numpy's std divides by the count, as layer norm does
print(z.mean(), z.std())  # mean 0, standard deviation 1
''',
    # chapter 3 (and every chapter's first head)
    "grid": '''
w = decode(trace["layers"][layer]["heads"][head]["weights"])  # (query, key)
print(w.sum(axis=1))  # every row sums to 1
print([t["display"] for t in trace["tokens"]])  # the row and column labels
''',
    "head": '''
arrays = head_arrays(trace, layer, head)  # the head's stored q, k, v, scores, weights and out
q, k, v = arrays["q"], arrays["k"], arrays["v"]  # (token, head_dim)
head_dim = q.shape[1]
print(q.shape, k.shape, v.shape)  # one row per token, head_dim numbers each
''',
    "scores": '''
scores = q @ k.T  # (query, key): each query's dot product with each key
print(scores[i].round(2))  # token i's scores
print(arrays["scores"][i].round(2))  # the same row, as the model computed it
''',
    "softmax": '''
def softmax(z):
    e = np.exp(np.asarray(z, dtype=float) - np.max(z))  # minus the largest: the same weights, smaller numbers
    return e / e.sum()


print(softmax([1, 0, 0]))  # three weights that add up to 1
print(softmax([1, 0, -np.inf]))  # the last one is hidden: exactly 0
print(softmax([101, 100, 100]))  # the same as the first line: only gaps matter
''',
    "row": '''
row = np.where(np.arange(len(scores)) <= i, scores[i] / np.sqrt(head_dim), -np.inf)  # token i's scores ÷ √d, later tokens masked
print(softmax(row))  # the weights ...
print(arrays["weights"][i])  # ... as stored
''',
    "values": '''
print(arrays["weights"][i] @ v)  # weights · values, for token i
print(arrays["out"][i])  # the model's own result
''',
    "concat": '''
outs = [decode(h["out"]) for h in trace["layers"][layer]["heads"]]  # each (token, head_dim)
concat = np.concatenate(outs, axis=1)  # (token, width): the layer's heads side by side, before W_O
print(concat.shape)
print(concat[i, head * head_dim:(head + 1) * head_dim])  # this head's part of row i: its out[i]
''',
    "pair": '''
for t, pair_row in zip((first, second), pair_rows):
    print(t["text"], decode(t["layers"][L]["heads"][H]["weights"])[pair_row].round(3))  # the focus token's row, in each sentence
on_first = decode(first["layers"][L]["heads"][H]["weights"])[pair_rows[0], 0]  # the weight the focus token puts on the first token
sizes = decode(first["causal"]["valueNorms"]).reshape(len(first["layers"]), -1, len(first["tokens"]))  # (layer, head, token): ‖v_j W_O‖
print(on_first * sizes[L, H, 0])  # weight times the size of v W_O: how much the first token hands over
''',
}


def step(name: str) -> str:
    return STEPS[name].strip("\n")
