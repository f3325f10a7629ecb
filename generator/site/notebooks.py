"""Each chapter's Python notebook: `python -m generator site` writes them into the built site.

For every page with figures, ``notebooks/<page>.ipynb`` (``<page>`` as the one-file chapter names
it, generator/site/downloads.py), and beside them ``notebooks/data/<model>/…``: the trace files,
vectors, head scores and, for the causal chapter, the tiny model's weights that the notebooks read.
The offline zip holds that folder as it is (every page in it links to its notebook); for the
hosted site and the one-file chapters, ``downloads/<page>-notebook.zip`` holds one chapter's
notebook with the data it reads.

A notebook has a section for the first figure of each kind it knows (:data:`SECTIONS`): the
tokens and ids and the merges (chapter 1), embedding plus position, cosine similarity, the map and
layer norm (chapter 2), one head step by step (the first attention or compare figure: chapter 3,
GPT-2's chapter, the causal chapter) and one head on two sentences (the first compare figure),
head-type scores from their definitions (a scoreboard), and a head removed in numpy (an ablation
with two targets). The cells that a Code tab shows as its Python view are named steps
(notebook_cells.STEPS), so page and notebook hold the same text. The cells are generator/render/notebook_cells.py's and notebook_causal.py's;
this module works out where each one looks (a file, a layer and head, a position) from the same
traces and pick rules as the figures.

Deterministic: cell ids are their places (``cell-07``), no outputs, no execution counts, JSON as
nbformat writes it (sorted keys), so the same inputs give the same bytes. No torch.
"""

from __future__ import annotations

import hashlib
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from ..lessons import pages
from ..lessons.source import iter_markdown
from ..registry import CONFIG_FILES
from ..render import causal_data
from ..render.context import Ctx, load_panel
from ..render.pick import pick_head
from ..render.token_names import resolve_token
from ..store import TraceStore
from ..store.vectors_file import read as read_vectors
from . import downloads
from ..render import notebook_causal, notebook_cells as cells

NOTEBOOKS_DIR = downloads.NOTEBOOKS_DIR  # inside the site, and so inside the offline zip
DATA_DIR = "data"  # beside the notebooks; the notebooks read data/<model>/<file>
BUNDLE_SUFFIX = downloads.NOTEBOOK_BUNDLE_SUFFIX  # downloads/<page>-notebook.zip: one notebook and its data
NBFORMAT_MINOR = 5  # 4.5: cells have ids (set here, not random)
# Files of the model's own folder (generator/tiny_model/) rather than of traces/<model>/.
MODEL_FILES = ("model.safetensors", "config.json", "tokenizer.json")

@dataclass
class Notebook:
    page: str  # site-relative page, "attention.html"
    text: str  # the .ipynb, as written
    files: list[str] = field(default_factory=list)  # data files it reads, "tiny/<key>.json"

    @property
    def name(self) -> str:
        return notebook_name(self.page)


def notebook_name(page: str) -> str:
    """`attention.html` -> `attention.ipynb`; `part/ch.html` -> `part-ch.ipynb`."""
    return downloads.onefile_name(page).removesuffix(".html") + ".ipynb"


def bundle_name(page: str) -> str:
    return downloads.onefile_name(page).removesuffix(".html") + BUNDLE_SUFFIX


# ---------------------------------------------------------------- sections, one per figure kind


def _trace_file(ctx: Ctx, model: str, text: str, ids=None) -> str | None:
    path = ctx.store.lookup(model, text, ids) if ctx.store is not None else None
    return None if path is None else f"{model}/{path.name}"


def _tokens(d, ctx: Ctx, done: set) -> cells.Section:
    for text in d.sentences:
        name = _trace_file(ctx, "tiny", text)
        if name:
            return cells.tokens(name, text)
    return cells.pending("Tokens and their ids", "tiny")


def _merges(d, ctx: Ctx, done: set) -> cells.Section | None:
    if d.model != "tiny":
        return None  # the notebook ships the tiny model's tokenizer only; a later tiny figure may come
    return cells.merges(d.word, d.model, with_byte_level="tokens" not in done)


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
    return cells.pending("Embedding plus position", d.model) if i is None else cells.embedding(i, d.sentence, *_vector_focus(d, ctx, i))


def _neighbours(d, ctx: Ctx, done: set) -> cells.Section | None:
    return cells.neighbours() if "embedding" in done else None  # it compares the embedding section's rows


def _map(d, ctx: Ctx, done: set) -> cells.Section:
    vectors = read_vectors(ctx.store.root, d.model)
    return cells.vector_map() if d.model == "tiny" and vectors is not None and "map" in vectors.doc else cells.pending("The map", d.model)


def _layernorm(d, ctx: Ctx, done: set) -> cells.Section:
    i = _sentence_index(d, ctx)
    return cells.pending("Layer norm", d.model) if i is None else cells.layernorm(i, *_vector_focus(d, ctx, i))


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
    files = [_trace_file(ctx, d.model, text) for text in d.sentences[:2]]
    if panel is None or None in files:
        return cells.pending("One head, two sentences", d.model)
    layer, head = pick_head(d.pick, panel, d.where, d.kind, ctx)
    focus = len(panel.tokens) - 1 if d.token is None else resolve_token(d.token, panel.tokens, d.where, f"{d.kind}: token")
    return cells.pair((files[0], files[1]), (d.sentences[0], d.sentences[1]), d.model, layer, head, focus, panel.tokens[focus]["display"])


def _scoreboard(d, ctx: Ctx, done: set) -> cells.Section:
    scores = ctx.scores(d.model, d.where, d.kind)
    if scores is None or not {"previous-token", "induction"} <= set(scores.doc["scores"]):
        return cells.pending("Head-type scores", d.model)
    on = scores.doc["scoredOn"]
    files = {kind: [f"{d.model}/{key}.json" for key in on[kind]["traces"]] for kind in ("previous-token", "induction")}
    return cells.head_scores(d.model, scores.doc["definitions"], files["previous-token"], files["induction"])


def _ablation(d, ctx: Ctx, done: set) -> cells.Section | None:
    if d.model != "tiny" or len(d.targets) != 2:
        return None  # the notebook removes a head of the tiny model and measures a logit difference
    panel = load_panel(d, d.model, d.sentence, ctx)
    if panel is None:
        return cells.pending("Removing a head", d.model)
    weights = CONFIG_FILES["tiny"].parent / "model.safetensors"
    if hashlib.sha256(weights.read_bytes()).hexdigest()[:12] != panel.meta.get("revision"):
        return cells.pending("Removing a head (the committed weights are not the traced ones)", d.model)
    pos = len(panel.tokens) - 1 if d.token is None else resolve_token(d.token, panel.tokens, d.where, f"{d.kind}: token")
    targets = causal_data.target_tokens(d.model, d.targets, d.where, d.kind)
    effects = causal_data.ablation_effects(panel, pos, targets, "zero")  # (layer, head)
    layer, head, _ = causal_data.ranked_heads(effects)[0]
    return notebook_causal.ablation(_trace_file(ctx, d.model, d.sentence), d.sentence, pos, panel.tokens[pos]["display"],
                          [(t["id"], t["display"]) for t in targets], layer, head)


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
    "scoreboard": _scoreboard,
    "ablation": _ablation,
}
SAME_AS = {"compare": ("attention", "pair")}


def page_title(md: Path) -> str:
    for line in md.read_text(encoding="utf-8").splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return md.stem


def build_notebook(md: Path, page: str, ctx: Ctx) -> Notebook | None:
    """The notebook of one lesson (None for a page without figures)."""
    directives = pages.parse_file(md)
    if not directives:
        return None
    title = page_title(md)
    opening = cells.opening(title, page.removesuffix(".html") + ".md")
    sections, done = [opening], set()
    for d in directives:
        for kind in SAME_AS.get(d.kind, (d.kind,)):
            if kind in done or kind not in SECTIONS:
                continue
            section = SECTIONS[kind](d, ctx, done)
            if section is not None:
                done.add(kind)
                sections.append(section)
    if len(sections) == 1:
        sections.append(cells.Section())
        sections[-1].md("This chapter's figures need no traces: there is nothing here to recompute.")
    return Notebook(page, notebook_json(sections), sorted({f for s in sections for f in s.files}))


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


# ---------------------------------------------------------------- the site's notebooks folder


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


def _zip_write(zf: zipfile.ZipFile, name: str, data: bytes) -> None:
    info = zipfile.ZipInfo(name, date_time=downloads.ZIP_DATE)
    info.create_system = 3
    info.external_attr = downloads.ZIP_FILE_MODE << 16
    zf.writestr(info, data, compress_type=zipfile.ZIP_DEFLATED, compresslevel=downloads.ZIP_LEVEL)


def write_notebooks(content_dir: Path, traces_dir: Path, site_dir: Path, bundles: bool = True) -> list[Notebook]:
    """notebooks/ (every notebook and the data they read) into site_dir, and with `bundles` each
    chapter's downloads/<page>-notebook.zip. Returns the notebooks written."""
    site_dir, traces_dir = Path(site_dir), Path(traces_dir)
    notebooks = build_notebooks(content_dir, traces_dir)
    root = site_dir / NOTEBOOKS_DIR
    for nb in notebooks:
        root.mkdir(parents=True, exist_ok=True)
        (root / nb.name).write_text(nb.text, encoding="utf-8")
        for name in nb.files:
            target = root / DATA_DIR / name
            if not target.exists():
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data_source(name, traces_dir).read_bytes())
    if bundles:
        dl = site_dir / downloads.DOWNLOADS_DIR
        for nb in notebooks:
            dl.mkdir(parents=True, exist_ok=True)
            folder = nb.name.removesuffix(".ipynb")
            tmp = dl / f".{bundle_name(nb.page)}.tmp"
            with zipfile.ZipFile(tmp, "w") as zf:
                _zip_write(zf, f"{folder}/{nb.name}", nb.text.encode("utf-8"))
                for name in nb.files:
                    _zip_write(zf, f"{folder}/{DATA_DIR}/{name}", (root / DATA_DIR / name).read_bytes())
            tmp.replace(dl / bundle_name(nb.page))
    return notebooks


def sizes(site_dir: Path) -> list[str]:
    """One line per notebook for `make bench`: its bytes, its data's, its bundle's."""
    site_dir = Path(site_dir)
    out = []
    for p in sorted((site_dir / NOTEBOOKS_DIR).glob("*.ipynb")):
        bundle = site_dir / downloads.DOWNLOADS_DIR / (p.stem + BUNDLE_SUFFIX)
        size = f"{bundle.stat().st_size / 1e6:.2f} MB zipped with its data" if bundle.is_file() else "no bundle (--no-downloads)"
        out.append(f"notebook {p.name}: {p.stat().st_size / 1e3:.1f} kB, {size}")
    return out


