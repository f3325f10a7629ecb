"""The text of the chapters' notebooks (build.py puts them together): Python a learner
runs with numpy alone, cell by cell.

Each function returns a :class:`Section`: its cells (Markdown or code, in order), the exercises'
answers (for the collapsed cell at the end) and the data files it reads. Nothing here knows a
number of a trace: every number a cell checks against is read from the trace files at run time
(the ``expect(...)`` lines); the build fills in only where to look (a file name, a layer and head,
a position), which it worked out from the same traces (build.py).

The cells that a lesson's Code tab shows as its Python view (``[[python: scores]]``,
generator/markdown/python_view.py) are steps.py's :data:`STEPS`, placed here: the same
text in the page and in the notebook, so they cannot drift apart.

Every exercise cell ends with ``check(X, "name")``: ``X`` starts as ``None`` ("not done yet"), and
check compares an answer with the trace's number to 1e-4 plus the half step that the file rounds
that number to (int16 × scale: half the scale; 5 significant digits in vectors.json), and fails
with one line naming the first number that is off.
"""

from __future__ import annotations

from dataclasses import dataclass, field


from .steps import STEPS, step  # noqa: F401 (python_view and the tests read them here too)

# The exercise cells' placeholder, which the tests replace with a wrong answer or the right one.
TODO = "None  # your answer here"


@dataclass
class Cell:
    kind: str  # "markdown" | "code"
    source: str
    exercise: str | None = None  # the name check() knows it by, for an exercise cell
    step: str | None = None  # its name in STEPS, for a cell that a Code tab shows too


@dataclass
class Section:
    cells: list[Cell] = field(default_factory=list)
    answers: list[tuple[str, str]] = field(default_factory=list)  # (exercise name, answer code)
    files: list[str] = field(default_factory=list)  # paths under data/, as "tiny/150b0f363c38.json"
    name: str = ""  # the figure kind it is for ("" for the opening), in notebooks/names.py's lines
    where: str | None = None  # "path:line" of the figure it is for, for an error that names it
    pending: str | None = None  # a part whose traces are missing: its title (pending())

    def md(self, text: str) -> None:
        self.cells.append(Cell("markdown", text.strip("\n")))

    def code(self, text: str) -> None:
        self.cells.append(Cell("code", text.strip("\n")))

    def step(self, name: str) -> None:
        self.cells.append(Cell("code", step(name), step=name))

    def exercise(self, name: str, task: str, variable: str, answer: str) -> None:
        """A Markdown task, a code cell `variable = None` + check, and the answer for the end."""
        self.md(f"**Exercise `{name}`.** {task}")
        self.cells.append(Cell("code", f"{variable} = {TODO}\ncheck({variable}, {name!r})", exercise=name))
        self.answers.append((name, f"{answer.strip()}\ncheck({variable}, {name!r})"))


# ---------------------------------------------------------------- the start of every notebook

DECODER = '''
import base64, json, struct
from pathlib import Path

import numpy as np

DATA = Path("data")  # the trace files this notebook reads, shipped beside it


def load_json(name):
    return json.loads((DATA / name).read_text(encoding="utf-8"))


def decode(o):
    """One encoded array of a trace file: little-endian int16 × scale, row by row. Weights keep
    only the cells on and below the diagonal ("tril": true); the cells above are 0."""
    flat = np.frombuffer(base64.b64decode(o["int16"]), dtype="<i2") * o["scale"]
    if not o.get("tril"):
        return flat.reshape(o["shape"])
    full = np.zeros(o["shape"])
    full[np.tril_indices(o["shape"][0], m=o["shape"][1])] = flat
    return full


def stored_head(trace, layer, head):
    """One head's encoded arrays: its own (q, scores, weights, out) and its key/value head's k and v
    (a file keeps those once for the query heads that share them: head h reads group h // (nHead / nKvHead))."""
    here = trace["layers"][layer]
    group = head // (len(here["heads"]) // len(here["kvHeads"]))
    return {**here["heads"][head], **here["kvHeads"][group]}


def head_arrays(trace, layer, head):
    """q, k, v, scores, weights, out of one head (layer and head count from 0, as in the file)."""
    return {f: decode(o) for f, o in stored_head(trace, layer, head).items()}


def half_steps(trace, layer, head):
    """The half step each of the head's arrays was rounded to (half its scale): how far the
    stored numbers can be from the model's."""
    return {f: o["scale"] / 2 for f, o in stored_head(trace, layer, head).items()}
'''

CHECK = '''
EXPECT = {}  # name -> (the trace's number, the half step it was rounded to)


def expect(name, value, step=0.0):
    EXPECT[name] = (np.asarray(value, dtype=float), np.asarray(step, dtype=float))


def check(mine, name, tol=1e-4):
    """Compare your answer with the trace: every number within tol plus the trace's half step."""
    want, step = EXPECT[name]
    if mine is None:
        print(f"{name}: not done yet (replace None with your answer; the answers are in the last cell)")
        return
    mine = np.asarray(mine, dtype=float)
    if mine.shape != want.shape:
        raise AssertionError(f"{name}: your answer has shape {mine.shape}, the trace's has shape {want.shape}")
    bound = tol + np.broadcast_to(step, want.shape)
    # A masked cell (-inf) must be masked in yours too; subtracting two -infs would warn, so the
    # masked cells are compared on their own and the rest by distance.
    masked = np.isinf(want)
    off = np.abs(np.where(masked, 0.0, mine) - np.where(masked, 0.0, want))
    off = np.where(masked & (mine != want), np.inf, off)
    off = np.where(np.isnan(off), np.inf, off)
    bad = off > bound
    if bad.any():
        i = np.unravel_index(int(np.argmax(np.where(bad, off - bound, -np.inf))), want.shape)
        at = f" at {tuple(int(j) for j in i)}" if want.ndim else ""
        raise AssertionError(
            f"{name}: wrong{at}: yours is {mine[i]:.6g}, the trace's is {want[i]:.6g} "
            f"(off by {off[i]:.3g}, allowed {bound[i]:.3g}; {int(bad.sum())} of {bad.size} numbers are off)")
    print(f"{name}: right (within {bound.max():.2g} of the trace)")
'''


def opening(title: str) -> Section:
    s = Section()
    s.md(f"""
# {title}: do it yourself in Python

This notebook recomputes numbers of the chapter *{title}* from the course's published
traces: the files in `data/` beside it, the very files the chapter's figures were drawn from. It
needs Python 3 and numpy, nothing else, and no network.

Run the cells in order. Each exercise ends with `check(X, "name")`, which compares your `X` with
the trace to 1e-4 (plus the half step the file rounds that number to) and says which number is
off. The answers are in the last cell, hidden: click it to show it.
""")
    s.md("""
## Reading a trace

A trace stores its big arrays as `{"int16": base64, "scale": s, "shape": [rows, cols]}`: each
number is a little-endian int16 times `s`. Attention weights store only the cells on and below
the diagonal (a token cannot look ahead). This is the whole decoder:
""")
    s.code(DECODER)
    s.code(CHECK)
    return s


def answers_cell(answers: list[tuple[str, str]]) -> str:
    """The collapsed last cell: every exercise's answer and its check, in order."""
    parts = ["# The answers, in order. Each one ends with its check."]
    for name, code in answers:
        parts.append(f"\n# --- {name}\n{code}")
    return "\n".join(parts)


def pending(what: str, model: str) -> Section:
    s = Section(pending=what)
    s.md(f"""
## {what}: traces pending

This copy of the course was built without the traces of model `{model}` that this part needs:
the model's weights could not be downloaded where the course was built. A copy built with them
has this part of the notebook, worked out from them.
""")
    return s


def without_model(title: str, names: str, parts: list[str]) -> Section:
    """The whole notebook of a chapter whose every figure needs a model this copy of the course
    was built without (`names`, as readers know it): what a copy built with its weights holds."""
    s = Section()
    listed = "".join(f"\n- {p[0].lower() + p[1:]}" for p in parts)
    s.md(f"""
# {title}: do it yourself in Python

This copy of the course was built without the weights of {names}, so it has none of the model's
numbers for this notebook to recompute. In a copy built with the weights, this notebook
recomputes, with numpy alone, the chapter's:
{listed}
""")
    return s


# ---------------------------------------------------------------- chapter 3: one head, step by step


def attention(trace_file: str, model: str, text: str, layer: int, head: int, focus: int, focus_text: str) -> Section:
    s = Section(files=[trace_file])
    s.md(f"""
## One head, step by step

The chapter's first grid: model `{model}`, “{text}”, layer {layer + 1}, head {head + 1}.
""")
    s.code(f'''
trace = load_json({trace_file!r})
layer, head = {layer}, {head}  # layer {layer + 1}, head {head + 1} on the page, which counts from 1
i = {focus}  # {focus_text}, the figure's focus token (positions count from 0)
''')
    s.md("Its weights: one row per token that looks, one column per token it can look at.")
    s.step("grid")
    s.md("Each token has a query `q`, a key `k` and a value `v`, one row each.")
    s.step("head")
    s.md("""
**Scores.** Token i's score for token j is the dot product of i's query with j's key: all of
them at once, `q @ k.T`. The file stores the model's own scores, so ours can be compared with
them:
""")
    s.step("scores")
    s.md("""
The file's numbers are rounded, so `check` allows for what the rounding of q and k can move a
dot product. From here on, `scores` is the model's own:
""")
    s.code('''
half = half_steps(trace, layer, head)  # how far rounding may have moved each stored number
rounding = np.abs(q).sum(1)[:, None] * half["k"] + np.abs(k).sum(1)[None, :] * half["q"] + head_dim * half["q"] * half["k"]
expect("scores", arrays["scores"], half["scores"] + rounding)
check(scores, "scores")
scores = arrays["scores"]
below = np.tril(np.ones(scores.shape, dtype=bool))  # (query, key): on or below the diagonal
expect("scaled", np.where(below, arrays["scores"] / np.sqrt(head_dim), -np.inf), half["scores"] / np.sqrt(head_dim))
expect("weights", arrays["weights"], half["weights"] + half["scores"] / np.sqrt(head_dim))
expect("mixed", arrays["out"], half["out"] + half["v"] + half["weights"] * np.abs(v).sum(0))
''')
    s.exercise("scaled", "Divide the scores by √head_dim, and mask the future: every cell above the "
               "diagonal (a later token) becomes `-np.inf`. Use `below`.",
               "scaled", "scaled = np.where(below, scores / np.sqrt(head_dim), -np.inf)")
    s.exercise("weights", "Softmax each row of `scaled`: exponentiate (after subtracting the row's "
               "largest value, which changes nothing but keeps the numbers small) and divide by the "
               "row's sum. Masked cells become 0.",
               "weights", '''
e = np.exp(scaled - scaled.max(axis=1, keepdims=True))
weights = e / e.sum(axis=1, keepdims=True)''')
    s.md("The same softmax for one list of scores at a time: only the gaps between scores matter.")
    s.step("softmax")
    s.md(f"Row {focus}, {focus_text}, the figure's focus token, from its scores to its weights:")
    s.step("row")
    s.md("Its three largest weights:")
    s.code('''
for j in np.argsort(-arrays["weights"][i])[:3]:
    print(repr(trace["tokens"][j]["text"]), round(float(arrays["weights"][i][j]), 4))
''')
    s.exercise("mixed", "What the head hands each token: its weights times the values, "
               "`weights @ v`, one row per token. The file calls it the head's `out`.",
               "mixed", "mixed = arrays[\"weights\"] @ v")
    s.md("For the focus token alone:")
    s.step("values")
    s.md("A layer's heads work side by side; their outputs, one after another, make one row per token.")
    s.step("concat")
    return s


def toy(tokens: list[str], query, key, value, focus: int, notes: list[str]) -> Section:
    """The chapter's made-up example (a stepper figure) in numpy, every digit kept, and where the
    page's rounded tables worked by hand land a little off (stepper.rounding_notes): the page
    leaves those checks out so that its step-through reads straight on."""
    s = Section()
    s.md(f"""
## The made-up example, by hand

The chapter's small example: {len(tokens)} tokens, each with a query, a key and a value of
{len(query[0])} numbers, followed for the token {tokens[focus]!r}.
""")
    s.code(f'''
# toy_ names: the rest of the notebook's q, k, v and i are the real head's, and stay so
toy_tokens = {list(tokens)!r}
toy_q = np.array({[list(r) for r in query]!r})  # (token, d)
toy_k = np.array({[list(r) for r in key]!r})  # (token, d)
toy_v = np.array({[list(r) for r in value]!r})  # (token, d_v)
toy_i = {focus}  # {tokens[focus]}
toy_scaled = toy_q[toy_i] @ toy_k[: toy_i + 1].T / np.sqrt(toy_q.shape[1])  # its scores with the tokens it can see, ÷ √d
toy_shares = np.exp(toy_scaled) / np.exp(toy_scaled).sum()
print(toy_scaled, np.exp(toy_scaled), toy_shares, sep="\\n")
print(toy_shares[:, None] * toy_v[: toy_i + 1])  # what it takes from each backpack
print(toy_shares @ toy_v[: toy_i + 1])  # its result
''')
    if notes:
        s.md("The page shows every number rounded to two decimals, so its tables, worked by hand, can land "
             "a little off the numbers it shows, which come from the unrounded ones:\n\n" + "\n".join(f"- {n}" for n in notes))
    return s


def pair(files: tuple[str, str], texts: tuple[str, str], model: str, layer: int, head: int, rows: tuple[int, int], focus_text: str) -> Section:
    s = Section(files=list(dict.fromkeys(files)))
    s.md(f"""
## One head, two sentences

The chapter's comparison: model `{model}`, layer {layer + 1}, head {head + 1}, on “{texts[0]}”
and “{texts[1]}”, row {rows[0]} ({focus_text}) of the first and its partner, row {rows[1]}, of the second.
""")
    s.code(f'''
first, second = load_json({files[0]!r}), load_json({files[1]!r})
L, H = {layer}, {head}  # layer {layer + 1}, head {head + 1} on the page
pair_rows = {rows[0]}, {rows[1]}  # {focus_text} in each sentence
''')
    s.step("pair")
    return s


# ---------------------------------------------------------------- head types: scores from their definition


def head_scores(model: str, definitions: dict[str, str], natural: list[str], repeated: list[str]) -> Section:
    s = Section(files=[f"{model}/heads.json", *natural, *repeated])
    s.md(f"""
## Head-type scores from their definitions

`data/{model}/heads.json` holds every head's score of each kind, measured on fixed texts (their
traces are in `data/{model}/`). A score is the average, over the rows where the pattern exists,
of the weight a row puts on the pattern's cells:

- previous-token: {definitions["previous-token"]};
- induction: {definitions["induction"]}.
""")
    s.code(f'''
board = load_json({f"{model}/heads.json"!r})
natural = [load_json(name) for name in {natural!r}]
repeated = [load_json(name) for name in {repeated!r}]


def all_weights(trace):
    """(layer, head, query, key): every head's weights, masked cells 0."""
    return np.array([[decode(h["weights"]) for h in layer["heads"]] for layer in trace["layers"]])


for kind in ("previous-token", "induction"):
    expect(kind, board["scores"][kind], 5e-6)  # heads.json keeps 5 significant digits
''')
    s.md("""
**Previous token**, worked: rows from position 2 on, the weight on the token just before,
averaged over every row of every natural sentence. Row 1 is left out of this score and of the sink
score: its previous token *is* `<|endoftext|>`, so that row cannot tell the two patterns apart.
""")
    s.code('''
on_previous, rows = 0.0, 0
for one in natural:
    every = all_weights(one)  # (layer, head, query, key)
    for query in range(2, every.shape[-1]):
        on_previous = on_previous + every[:, :, query, query - 1]
        rows += 1
previous = on_previous / rows
check(previous, "previous-token")
''')
    s.exercise("induction", "The induction score of every head, on the repeated random tokens: for "
               "each row `query` whose token appeared before (at k < query, same id), the weight on the token "
               "right after each earlier copy (k + 1), summed; then averaged over those rows.",
               "induction", '''
on_after, copies = 0.0, 0
for one in repeated:
    every, one_ids = all_weights(one), [t["id"] for t in one["tokens"]]
    for query in range(len(one_ids)):
        after = sorted({k + 1 for k in range(query) if one_ids[k] == one_ids[query]})
        if after:
            on_after = on_after + every[:, :, query, after].sum(axis=-1)
            copies += 1
induction = on_after / copies''')
    return s
