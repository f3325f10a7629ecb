"""Each chapter's Python notebook, as text: which sections a lesson's figures get and where each
one looks (generator/site/notebook_files.py writes them into the built site).

A notebook has a section for the first figure of each kind it knows (:data:`SECTIONS`): the
tokens and ids and the merges (chapter 1), embedding plus position, cosine similarity, the map and
layer norm (chapter 2), one head step by step (the first attention or compare figure: chapter 3,
GPT-2's chapter) and one head on two sentences (the first compare figure),
head-type scores from their definitions (a scoreboard), and the tiny model in numpy (written
once, by the first causal section) redoing each causal figure of the tiny model with two targets:
ablation with zeros and with the head's mean, direct logit attribution, patching, the logit lens.
A page with causal figures and no Code tab on the walk gets no walk (:data:`WALK_STEPS`). The cells that a Code tab shows as its Python view are named steps
(steps.py's STEPS), so page and notebook hold the same text. The cells are cells.py's and causal_cells.py's;
this module works out where each one looks (a file, a layer and head, a position) from the same
traces and pick rules as the figures.

Deterministic: cell ids are their places (``cell-07``), no outputs, no execution counts, JSON as
nbformat writes it (sorted keys), so the same inputs give the same bytes. No torch.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from .. import heads
from ..lessons import pages
from ..lessons.source import iter_markdown, shown_path
from ..registry import CONFIG_FILES
from ..render import causal_data, pending as pending_render, stepper
from ..render.compare import align
from ..render.context import Ctx, load_panel
from ..render.pick import pick_head
from ..render.token_names import resolve_token
from ..store import TraceStore, circuits_file
from ..store.vectors_file import read as read_vectors
from . import causal_cells, cells, input_cells, rope_cells
from .names import shared_names
from .steps import MARK_RE

NBFORMAT_MINOR = 5  # 4.5: cells have ids (set here, not random)
# Files of the model's own folder (generator/tiny_model/) rather than of traces/<model>/.
MODEL_FILES = ("model.safetensors", "config.json", "tokenizer.json")

@dataclass
class Notebook:
    page: str  # site-relative page, "attention.html"
    text: str  # the .ipynb, as written
    files: list[str] = field(default_factory=list)  # data files it reads, "tiny/<key>.json"
    where: list[str | None] = field(default_factory=list)  # per cell: "path:line" of the figure it is for
    answer_where: dict[str, str | None] = field(default_factory=dict)  # exercise name -> the same


# ---------------------------------------------------------------- sections, one per figure kind


def _trace_file(ctx: Ctx, model: str, text: str, ids=None) -> str | None:
    path = ctx.store.listed_file(model, text, ids) if ctx.store is not None else None
    return None if path is None else f"{model}/{path.name}"


def _tokens(d, ctx: Ctx, done: set) -> cells.Section:
    for text in d.sentences:
        name = _trace_file(ctx, "tiny", text)
        if name:
            done.add("byte-level")  # the section defines byte_level: a later merges section needs it once
            return input_cells.tokens(name, text)
    return cells.pending("Tokens and their ids", "tiny")


def _merges(d, ctx: Ctx, done: set) -> cells.Section | None:
    if d.model != "tiny":
        return None  # the notebook ships the tiny model's tokenizer only; a later tiny figure may come
    with_byte_level = "byte-level" not in done  # not when a tokens section wrote it (a pending one did not)
    done.add("byte-level")
    return input_cells.merges(d.word, d.model, with_byte_level=with_byte_level)


def _sentence_index(d, ctx: Ctx) -> int | None:
    vectors = read_vectors(ctx.store.root, d.model)
    if vectors is None:
        return None
    texts = [s["text"] for s in vectors.doc["sentences"]]
    return texts.index(d.sentence) if d.sentence in texts else None


def _vector_focus(d, ctx: Ctx, i: int) -> tuple[int, str]:
    """The position the figure follows (its `token:`, else the sentence's last) and its label."""
    toks = read_vectors(ctx.store.root, d.model).doc["sentences"][i]["tokens"]
    token = getattr(d, "token", None)
    pos = len(toks) - 1 if token is None else resolve_token(token, toks, d.where, f"{d.kind}: token")
    return pos, toks[pos]["display"]


def _embedding(d, ctx: Ctx, done: set) -> cells.Section:
    i = _sentence_index(d, ctx)
    return cells.pending("Embedding plus position", d.model) if i is None else input_cells.embedding(i, d.sentence, *_vector_focus(d, ctx, i))


def _neighbours(d, ctx: Ctx, done: set) -> cells.Section | None:
    return input_cells.neighbours() if "embedding" in done else None  # it compares the embedding section's rows


def _map(d, ctx: Ctx, done: set) -> cells.Section:
    vectors = read_vectors(ctx.store.root, d.model)
    return input_cells.vector_map() if d.model == "tiny" and vectors is not None and "map" in vectors.doc else cells.pending("The map", d.model)


def _layernorm(d, ctx: Ctx, done: set) -> cells.Section:
    i = _sentence_index(d, ctx)
    return cells.pending("Layer norm", d.model) if i is None else input_cells.layernorm(i, *_vector_focus(d, ctx, i))


def _attention(d, ctx: Ctx, done: set) -> cells.Section:
    text = d.sentence if d.kind == "attention" else d.sentences[0]
    panel = load_panel(d, d.model, text, ctx)
    if panel is None:
        return cells.pending("One head, step by step", d.model)
    layer, head = pick_head(d.pick, panel, d.where, d.kind, ctx)
    focus = len(panel.tokens) - 1 if d.token is None else resolve_token(d.token, panel.tokens, d.where, f"{d.kind}: token")
    return cells.attention(_trace_file(ctx, d.model, text), d.model, text, layer, head, focus, panel.tokens[focus]["display"])


def _pair(d, ctx: Ctx, done: set) -> cells.Section:
    """A compare figure's two sentences in its head (the first compare figure of a chapter)."""
    panel = load_panel(d, d.model, d.sentences[0], ctx)
    second = load_panel(d, d.model, d.sentences[1], ctx)
    files = [_trace_file(ctx, d.model, text) for text in d.sentences[:2]]
    if panel is None or second is None or None in files:
        return cells.pending("One head, two sentences", d.model)
    layer, head = pick_head(d.pick, panel, d.where, d.kind, ctx)
    focus = len(panel.tokens) - 1 if d.token is None else resolve_token(d.token, panel.tokens, d.where, f"{d.kind}: token")
    # the second sentence's row is the focus token's partner, as the figure shows it: the two
    # sentences may differ in length, so the same index can name another token or none
    rows = (focus, align(panel.tokens, second.tokens).to2[focus])
    return cells.pair((files[0], files[1]), (d.sentences[0], d.sentences[1]), d.model, layer, head, rows, panel.tokens[focus]["display"])


def _toy(d, ctx: Ctx, done: set) -> cells.Section:
    nums = stepper.numbers(d)
    return cells.toy(list(d.tokens), d.query, d.key, d.value, d.focus, stepper.rounding_notes(d, nums))


def _scoreboard(d, ctx: Ctx, done: set) -> cells.Section:
    scores = ctx.scores(d.model, d.where, d.kind)
    if scores is None or not {"previous-token", "induction"} <= set(scores.doc["scores"]):
        return cells.pending("Head-type scores", d.model)
    on = scores.doc["scoredOn"]
    files = {kind: [f"{d.model}/{key}.json" for key in on[kind]["traces"]] for kind in ("previous-token", "induction")}
    return cells.head_scores(d.model, scores.doc["definitions"], files["previous-token"], files["induction"])


# ---------------------------------------------------------------- the causal tests, redone in numpy


def _causal_panel(d, ctx: Ctx, sentence: str, title: str):
    """(the figure's panel, None), or (None, a pending section) where its trace is missing or was
    made with other weights than the committed ones that the notebook runs."""
    panel = load_panel(d, d.model, sentence, ctx)
    if panel is None:
        return None, cells.pending(title, d.model)
    weights = CONFIG_FILES["tiny"].parent / "model.safetensors"
    if hashlib.sha256(weights.read_bytes()).hexdigest()[:12] != panel.meta.get("revision"):
        return None, cells.pending(f"{title} (the committed weights are not the traced ones)", d.model)
    return panel, None


def _with_forward(section: cells.Section, done: set) -> cells.Section:
    """The section, after the numpy model when no earlier section of the notebook wrote it."""
    if "forward" in done:
        return section
    done.add("forward")
    first = causal_cells.forward()
    return cells.Section(first.cells + section.cells, first.answers + section.answers, first.files + section.files)


def _focus(d, panel) -> tuple[int, str]:
    """The position a figure follows (its `token:`, else the sentence's last) and its label."""
    token = getattr(d, "token", None)  # a lens figure has none: it shows every position
    pos = len(panel.tokens) - 1 if token is None else resolve_token(token, panel.tokens, d.where, f"{d.kind}: token")
    return pos, panel.tokens[pos]["display"]


def _mean_reference(ctx: Ctx, panel) -> list[str] | None:
    """The trace files of the texts that mean-ablation averaged over, when the trace says they are
    heads.SCORING_SENTENCES as they stand and every one is traced; else None."""
    record = panel.trace["causal"].get("meanReference") or {}
    if record.get("texts") != "heads.SCORING_SENTENCES" or record.get("sha") != heads.texts_digest(heads.SCORING_SENTENCES):
        return None
    files = [_trace_file(ctx, "tiny", text) for text in heads.SCORING_SENTENCES]
    return None if None in files else files


def _ablation(d, ctx: Ctx, done: set) -> cells.Section | None:
    if d.model != "tiny" or len(d.targets) != 2:
        return None  # the notebook removes a head of the tiny model and measures a logit difference
    panel, pending = _causal_panel(d, ctx, d.sentence, "Removing a head")
    if panel is None:
        return pending
    pos, pos_text = _focus(d, panel)
    targets = causal_data.target_tokens(d.model, d.targets, d.where, d.kind)
    effects = causal_data.ablation_effects(panel, pos, targets, "zero")  # (layer, head)
    layer, head, _ = causal_data.ranked_heads(effects)[0]
    return _with_forward(causal_cells.ablation(
        _trace_file(ctx, d.model, d.sentence), d.sentence, pos, pos_text, [(t["id"], t["display"]) for t in targets],
        layer, head, _mean_reference(ctx, panel) if "mean" in panel.trace["causal"]["ablations"] else None), done)


def _attribution(d, ctx: Ctx, done: set) -> cells.Section | None:
    if d.model != "tiny" or len(d.targets) != 2:
        return None  # the notebook splits a logit difference
    panel, pending = _causal_panel(d, ctx, d.sentence, "Direct logit attribution")
    if panel is None:
        return pending
    pos, pos_text = _focus(d, panel)
    targets = causal_data.target_tokens(d.model, d.targets, d.where, d.kind)
    shares = causal_data.dla_parts(panel, pos, targets)  # (part,)
    L, H = panel.weights.shape[:2]
    layer, head, _ = causal_data.ranked_heads(shares[1:1 + L * H].reshape(L, H))[0]  # the heads are parts 1 … L·H
    return _with_forward(causal_cells.attribution(
        _trace_file(ctx, d.model, d.sentence), d.sentence, pos, pos_text, [(t["id"], t["display"]) for t in targets],
        layer, head), done)


def _patching(d, ctx: Ctx, done: set) -> cells.Section | None:
    if d.model != "tiny" or len(d.targets) != 2:
        return None
    panel, pending = _causal_panel(d, ctx, d.sentences[0], "Activation patching")
    files = [_trace_file(ctx, d.model, text) for text in d.sentences[:2]]
    if panel is None or None in files:
        return pending or cells.pending("Activation patching", d.model)
    targets = causal_data.target_tokens(d.model, d.targets, d.where, d.kind)
    entry = circuits_file.find_pair(ctx.store, d.model, d.sentences[0], d.sentences[1], [t["id"] for t in targets],
                                    len(panel.tokens), *panel.weights.shape[:2])
    if entry is None:
        return cells.pending("Activation patching", d.model)
    pos, pos_text = _focus(d, panel)
    gap = entry["patched"][:, :, pos, 0] - entry["patched"][:, :, pos, 1]  # (layer, head)
    layer, head, _ = causal_data.ranked_heads(gap - (entry["cleanA"][pos, 0] - entry["cleanA"][pos, 1]))[0]
    return _with_forward(causal_cells.patching(
        (files[0], files[1]), (d.sentences[0], d.sentences[1]), pos, pos_text,
        [(t["id"], t["display"]) for t in targets], layer, head), done)


def _lens(d, ctx: Ctx, done: set) -> cells.Section | None:
    if d.model != "tiny":
        return None
    panel, pending = _causal_panel(d, ctx, d.sentence, "The logit lens")
    if panel is None:
        return pending
    pos, pos_text = _focus(d, panel)
    return _with_forward(causal_cells.lens(_trace_file(ctx, d.model, d.sentence), d.sentence, pos, pos_text), done)


def _rope(d, ctx: Ctx, done: set) -> cells.Section:
    """Chapter 7's rotary figure: its pair turned with numpy from the trace's unrotated q and k."""
    from ..render.pick import best_head
    from ..store import StoreError, rotary_file

    panel = load_panel(d, d.model, d.sentence, ctx)
    try:
        rot = rotary_file.read(ctx.store.root, d.model) if ctx.store is not None else None
    except StoreError:
        rot = None
    heads = panel.trace["layers"][0]["heads"] if panel is not None else []
    if panel is None or rot is None or rot.revision != panel.meta["revision"] or not heads or "qUnrotated" not in heads[0]:
        return cells.pending("Position by rotation", d.model)
    layer, head = best_head(d.pick, d.model, ctx, d.where, d.kind) if d.pick.rule == "best" else (d.pick.layer - 1, d.pick.head - 1)
    query = len(panel.tokens) - 1 if d.token is None else resolve_token(d.token, panel.tokens, d.where, f"{d.kind}: token")
    key = query - 1 if d.key is None else resolve_token(d.key, panel.tokens, d.where, f"{d.kind}: key")
    return rope_cells.rope_distance(_trace_file(ctx, d.model, d.sentence), f"{d.model}/{rotary_file.FILE}", d.model, d.sentence,
                                    layer, head, query, key, panel.tokens[query]["display"], panel.tokens[key]["display"])


# figure kind -> its section, for the first figure of the kind that gets one (a section may
# return None: the next figure of its kind is tried). A compare figure counts as an attention one
# too (the first of either is the head walked step by step), and the first compare figure also
# gets its own section, the two sentences side by side.
SECTIONS = {
    "tokens": _tokens,
    "merges": _merges,
    "embedding": _embedding,
    "neighbours": _neighbours,
    "map": _map,
    "layernorm": _layernorm,
    "attention": _attention,
    "pair": _pair,
    "stepper": _toy,
    "scoreboard": _scoreboard,
    "ablation": _ablation,
    "attribution": _attribution,
    "patching": _patching,
    "lens": _lens,
    "rope-distance": _rope,
}
CAUSAL_KINDS = ("ablation", "attribution", "patching", "lens")
# The steps of the head walked step by step (cells.attention): a page with causal figures
# gets the walk only when one of its Code tabs shows one of them; the others start from the causal tests.
WALK_STEPS = frozenset({"grid", "head", "scores", "softmax", "row", "values", "concat"})
SAME_AS = {"compare": ("attention", "pair")}


def page_title(md: Path) -> str:
    for line in md.read_text(encoding="utf-8").splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return md.stem


def build_notebook(md: Path, page: str, ctx: Ctx) -> Notebook | None:
    """The notebook of one lesson (None for a page without figures)."""
    directives = pages.parse_file(md, shown_path(md))  # a figure's where names the file as messages do
    if not directives:
        return None
    title = page_title(md)
    opening = cells.opening(title)
    sections, done = [opening], set()
    viewed = {name for line in md.read_text(encoding="utf-8").splitlines()
              if (m := MARK_RE.match(line)) for name in m.group(2).split()}
    if any(d.kind in CAUSAL_KINDS for d in directives) and not viewed & WALK_STEPS:
        done.add("attention")
        sections.append(cells.Section())
        sections[-1].md("This notebook starts from what heads *do*. Computing a head's weights from "
                        "its queries and keys, step by step, is in the notebook of the chapter on "
                        "attention.")
    for d in directives:
        for kind in SAME_AS.get(d.kind, (d.kind,)):
            if kind in done or kind not in SECTIONS:
                continue
            section = SECTIONS[kind](d, ctx, done)
            if section is not None:
                done.add(kind)
                section.name, section.where = kind, d.where
                sections.append(section)
    # the figures that give the notebook a section: a guess or a drawn diagram gives none, so it
    # cannot make a page that lacks a model's traces look as if it had something to recompute
    models = [getattr(d, "model", None) for d in directives
              if any(kind in SECTIONS for kind in SAME_AS.get(d.kind, (d.kind,)))]
    if models and all(m and pending_render.lacks_model(ctx.store, m) for m in models):  # one short notebook, not a run of pending parts
        parts = [s.pending for s in sections if s.pending]
        sections = [cells.without_model(title, pending_render.reader_names(models), parts)]
    elif len(sections) == 1:
        sections.append(cells.Section())
        sections[-1].md("This chapter's figures need no traces: there is nothing here to recompute.")
    shared = shared_names([(s.name or "the opening", [c.source for c in s.cells if c.kind == "code"] + [a for _, a in s.answers])
                           for s in sections])
    if shared:  # a bug of this package, not the author's: the notebook would compute with another figure's names
        raise AssertionError(f"{md}: notebook sections share names: {'; '.join(shared)}")
    where = [s.where for s in sections for _ in s.cells]
    answer_where = {name: s.where for s in sections for name, _ in s.answers}
    if answer_where:
        where += [None, None]  # the answers' heading and cell (each answer names its own figure)
    return Notebook(page, notebook_json(sections), sorted({f for s in sections for f in s.files}), where, answer_where)


def notebook_json(sections: list[cells.Section]) -> str:
    import nbformat
    from nbformat import v4

    nb = v4.new_notebook(metadata={
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
    })
    nb.nbformat_minor = NBFORMAT_MINOR
    answers = [a for s in sections for a in s.answers]
    all_cells = [c for s in sections for c in s.cells]
    for n, c in enumerate(all_cells):
        meta = {"course": {"exercise": c.exercise}} if c.exercise else {"course": {"step": c.step}} if c.step else {}
        make = v4.new_code_cell if c.kind == "code" else v4.new_markdown_cell
        nb.cells.append(make(source=c.source, id=f"cell-{n:02d}", metadata=meta))
    if answers:
        nb.cells.append(v4.new_markdown_cell(source="## Answers\n\nTry the exercises first. The cell below is hidden: click it to show it.",
                                             id=f"cell-{len(all_cells):02d}"))
        nb.cells.append(v4.new_code_cell(source=cells.answers_cell(answers), id=f"cell-{len(all_cells) + 1:02d}", metadata={
            "collapsed": True, "jupyter": {"source_hidden": True}, "tags": ["answers"],
        }))
    nbformat.validate(nb)
    text = nbformat.writes(nb, version=4)
    return text if text.endswith("\n") else text + "\n"


# ---------------------------------------------------------------- every page's notebook


def data_source(name: str, traces_dir: Path) -> Path:
    """Where a data file a notebook reads comes from: traces/<model>/ or the model's own folder."""
    model, file = name.split("/", 1)
    if file in MODEL_FILES:
        return CONFIG_FILES[model].parent / file
    return traces_dir / model / file


def build_notebooks(content_dir: Path, traces_dir: Path) -> list[Notebook]:
    """Every page's notebook, in the order of the pages' paths. A LessonError names the page."""
    content_dir, traces_dir = Path(content_dir), Path(traces_dir)
    out = []
    for md in iter_markdown(content_dir):
        page = md.relative_to(content_dir).with_suffix(".html").as_posix()
        ctx = Ctx(store=TraceStore(traces_dir), page=str(md))
        nb = build_notebook(md, page, ctx)
        if nb is not None:
            out.append(nb)
    return out
