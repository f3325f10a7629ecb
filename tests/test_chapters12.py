"""Chapters 1 and 2: the six figure kinds (goldens, references and their numbers), the
BPE replay against the committed merge lists, vectors.json (checks on read, determinism, that the
committed file is what the model gives), and that chapters 1-2 introduce every glossary term
chapter 3 uses."""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

import numpy as np
import pytest

from vector_fixtures import LILY, synthetic_vectors, write_vectors
from conftest import REPO, lily_trace, write_traces
from test_render import check_golden, text_of
from generator import bpe, render, tokens
from generator.store import vectors_file
from generator.render import vector_data
from generator.lessons import directives as D
from generator.lessons import refs
from generator.lessons.errors import LessonError
from generator.render.context import Ctx, Missing
from generator.store import TraceStore
from generator.store.files import DamagedFile

BLOCKS = {
    "tokens": 'sentences: ["Lily wanted to play with her", "Mommy said the sandcastle was beautiful."]\nid: tk\ncaption: "Two tokenizers."\n',
    "merges": 'model: tiny\nword: " playing"\nid: mg\n',
    "embedding": f'model: tiny\nsentence: "{LILY}"\nid: emb\n',
    "layernorm": f'model: tiny\nsentence: "{LILY}"\ntoken: her\nid: ln\n',
    "neighbours": "model: tiny\nwords: [her, Lily]\npairs: [[her, she], [Lily, Ben]]\nid: nb\n",
    "map": "model: tiny\nmark: [her, she, ball]\nid: mp\n",
}


def ctx_with_vectors(root: Path, doc: dict | None = None) -> Ctx:
    write_traces(root, [lily_trace()])
    write_vectors(root, doc)
    return Ctx(store=TraceStore(root), page="content/page.md")


def render_kind(kind: str, ctx: Ctx) -> str:
    return render.render(D.parse_directive(kind, BLOCKS[kind], "content/page.md:3"), ctx)


def ref(text: str, ctx: Ctx) -> str:
    return text_of(render.render_ref(refs.parse_ref(text, "content/page.md:20"), ctx))


@pytest.mark.parametrize("kind", list(BLOCKS))
def test_golden(kind, tmp_path, update_golden):
    check_golden(kind, render_kind(kind, ctx_with_vectors(tmp_path)), update_golden)


# ---------------------------------------------------------------- tokens and merges


def test_tokens_figure_matches_both_tokenizers_and_names_the_differences(tmp_path):
    ctx = ctx_with_vectors(tmp_path)
    html = render_kind("tokens", ctx)
    for model in ("tiny", "gpt2"):
        ids = [tokens.bos_id(model)] + tokens.tokenizer(model).encode(LILY, add_special_tokens=False).ids
        assert ref(f"tk.count({model})", ctx) == str(len(ids) - 1)
        data = json.loads(re.search(r'class="course-data">(.*?)</script>', html).group(1))
        assert [t["id"] for t in data["sentences"][0]["tokens"][model]] == ids
    assert ref("tk.split(gpt2, Lily)", ctx) == "L + ily" and ref("tk.pieces(tiny, Lily)", ctx) == "1"
    assert ref("tk.split(tiny, sandcastle, 2)", ctx) == "·sand + c + ast + le"
    assert "“Lily” is Lily (1 token) for the tiny model and L + ily (2 tokens) for GPT-2." in text_of(html)
    assert ref("tk.differ(1)", ctx) == "1" and ref("tk.vocab(gpt2)", ctx) == "50,257" and ref("tk.eot(gpt2)", ctx) == "50256"


WORDS = [" playing", "Lily", " Lily", " happily", " sandcastle", " wanted", " teddy", "Mommy", " beautiful", " her"]


@pytest.mark.parametrize("model", ["tiny", "gpt2", "tiny-rope"])  # tiny-rope: tiny's tokenizer (it was an IndexError)
def test_merge_replay_uses_the_committed_list_and_ends_on_the_tokenizers_tokens(model):
    files = tokens.TOKENIZER_FILES[model]
    if model != "gpt2":
        listed = [tuple(m) for m in json.loads(files[0].read_text(encoding="utf-8"))["model"]["merges"]]
    else:
        listed = [tuple(line.split(" ")) for line in files[1].read_text(encoding="utf-8").splitlines()[1:] if line]
    to_chars = bpe.byte_chars()
    chars = lambda text: "".join(to_chars[b] for b in text.encode("utf-8"))  # noqa: E731
    for word in WORDS:
        start, steps = bpe.merge_steps(model, word)
        assert "".join(start) == word and len(start) == len(word.encode("utf-8"))
        for s in steps:  # each step is the list's own entry at its rank
            assert listed[s.rank - 1] == (chars(s.left), chars(s.right)), (word, s)
        ranks = [s.rank for s in steps]
        assert ranks == sorted(set(ranks)), f"BPE applies merges in list order: {word!r} {ranks}"
        final = steps[-1].pieces if steps else start
        assert [chars(p) for p in final] == tokens.tokenizer(model).encode(word, add_special_tokens=False).tokens


def test_a_replay_that_disagrees_with_the_tokenizer_is_refused(monkeypatch):
    bpe.merge_ranks.cache_clear()
    real = bpe.merge_list("tiny")
    monkeypatch.setattr(bpe, "merge_list", lambda model: tuple(reversed(real)))
    try:
        with pytest.raises(AssertionError, match="replaying the merges"):
            bpe.merge_steps("tiny", " playing")
    finally:
        monkeypatch.undo()
        bpe.merge_ranks.cache_clear()


def test_merges_references(tmp_path):
    ctx = ctx_with_vectors(tmp_path)
    render_kind("merges", ctx)
    start, steps = bpe.merge_steps("tiny", " playing")
    assert ref("mg.steps", ctx) == str(len(steps)) and ref("mg.start", ctx) == str(len(start))
    assert ref("mg.result", ctx) == "·playing" and ref("mg.pair(1)", ctx) == f"{steps[0].left} + {steps[0].right}"
    assert ref("mg.merges", ctx) == f"{len(bpe.merge_list('tiny')):,}" and ref("mg.bytes", ctx) == "256"


@pytest.mark.parametrize("model", ["tiny", "gpt2"])
def test_a_vocabulary_is_its_bytes_its_merges_and_endoftext(model):
    """Chapter 1 adds them up: 256 bytes + one token per merge + <|endoftext|> = the vocabulary,
    and every byte and every merge's result is a token of it."""
    vocab = tokens.tokenizer(model).get_vocab()
    assert tokens.vocab_size(model) == len(bpe.byte_chars()) + len(bpe.merge_list(model)) + 1 == len(vocab)
    assert set(bpe.byte_chars().values()) <= set(vocab) and all(a + b in vocab for a, b in bpe.merge_list(model))


# ---------------------------------------------------------------- vectors


def test_vector_references_follow_the_stored_numbers(tmp_path):
    doc = synthetic_vectors()
    ctx = ctx_with_vectors(tmp_path, doc)
    for kind in ("embedding", "layernorm", "neighbours", "map"):
        render_kind(kind, ctx)
    s = vectors_file.read(tmp_path, "tiny").sentence(LILY)  # as stored: rounded
    her = len(s["tokens"]) - 1
    assert ref("emb.value(her, 2, position)", ctx) == f"{s['position'][her][1]:.3f}"
    assert ref("emb.norm(her)", ctx) == f"{np.linalg.norm(s['token'][her]):.2f}"
    assert ref("emb.position(her)", ctx) == str(her)
    assert ref("ln.std(normalised)", ctx) == "1.00"
    assert ref("ln.mean(before)", ctx) == f"{np.mean(s['sum'][her]):.2f}".replace("-0.00", "0.00").replace("-", "\u2212")
    vec = vectors_file.read(tmp_path, "tiny")
    a, b = (np.array(vec.word(w)["vector"]) for w in ("her", "she"))
    assert ref("nb.dot(her, she)", ctx) == f"{a @ b:.2f}"
    assert ref("nb.cosine(her, she)", ctx) == f"{a @ b / np.linalg.norm(a) / np.linalg.norm(b):.2f}"
    assert ref("mp.explained(1)", ctx) == "40%" and ref("mp.count", ctx) == "20"
    unmarked = doc["map"]["tokens"][3]  # a token on the map that the figure does not mark
    assert ref(f"mp.x({unmarked['text'].strip()})", ctx) == vector_data.num(unmarked["x"])
    # a negative number reads with a true minus, as the course's other signed numbers
    negative = [t for t in doc["map"]["tokens"] if t["x"] <= -0.005]
    assert negative, "the synthetic map has a token left of the middle"
    for t in negative:
        assert ref(f"mp.x({t['text'].strip()})", ctx) == f"\u2212{abs(t['x']):.2f}"
    assert vector_data.num(-0.004) == "0.00" and vector_data.num(-0.004, 3) == "\u22120.004"


@pytest.mark.parametrize("text, message", [
    ("tk.count(gpt3)", "the figure shows no model 'gpt3' (its models: tiny, gpt2)"),
    ("tk.split(tiny, Lilly)", "no word 'Lilly' in 'Lily wanted to play with her'"),
    ("tk.id(gpt2, Lily)", "'Lily' is 2 tokens in gpt2, so it has no single id"),
    ("mg.pair(9)", "step '9' is not a number from 1 to 7"),
    ("emb.value(her, 5)", "dimension '5' is not a number from 1 to 4"),
    ("emb.norm(her, middle)", "unknown part 'middle'"),
    ("nb.cosine(her, dog)", "the figure has no word 'dog'"),
    ("mp.close(Lily)", "the map marks no word 'Lily'"),
    ("mp.x(qzxv)", "'qzxv' is neither marked nor one of the map's 20 tokens"),
    ("ln.mean(during)", "unknown part 'during'"),
])
def test_reference_mistakes_are_one_line(tmp_path, text, message):
    ctx = ctx_with_vectors(tmp_path)
    for kind in BLOCKS:
        render_kind(kind, ctx)
    with pytest.raises(LessonError) as e:
        ref(text, ctx)
    assert message in str(e.value) and "\n" not in str(e.value) and str(e.value).startswith("content/page.md:20: ")


def test_missing_vectors_give_a_pending_box_and_a_warning(tmp_path):
    write_traces(tmp_path, [lily_trace()])
    write_vectors(tmp_path, synthetic_vectors(words=("her",)))
    ctx = Ctx(store=TraceStore(tmp_path), page="content/page.md")
    html = render_kind("neighbours", ctx)
    assert 'data-pending="true"' in html and "Not computed in this copy" in html
    missing = list(ctx.missing)
    assert [m.text for m in missing] == ["the word 'Lily'", "the word 'she'", "the word 'Ben'"]
    assert missing[0].warning("content/page.md:3", "") == (
        "content/page.md:3: traces/tiny/vectors.json lacks the word 'Lily'; the page shows a pending box. "
        "Run `make traces` (the tiny model runs here in seconds).")
    assert ref("nb.norm(her)", ctx) == "pending"
    assert all(m.what == Missing.VECTORS for m in missing)


def damage(doc: dict, how: str) -> dict:
    doc = json.loads(json.dumps(doc))
    if how == "short-row":
        doc["sentences"][0]["sum"][2] = doc["sentences"][0]["sum"][2][:-1]
    elif how == "unsorted":
        doc["words"][0]["nearest"].reverse()
    elif how == "other-model":
        doc["model"] = "gpt2"
    elif how == "bool-id":
        doc["words"][0]["token"]["id"] = True
    elif how == "format":
        doc["format"] = 2
    elif how == "huge":  # JSON has no bound: 1e300 was printed as 300 digits
        doc["sentences"][0]["sum"][1][0] = 1e300
    elif how == "markup-display":  # the pages show a token's display as stored
        doc["words"][0]["token"]["display"] = "<b>Lily</b>"
    return doc


@pytest.mark.parametrize("how, problem", [
    ("short-row", "sentences[0].sum[2] is not a list of 4 finite numbers within ±1e9"),
    ("unsorted", "words[0].nearest is not sorted from the closest"),
    ("other-model", "is for model 'gpt2', not 'tiny'"),
    ("bool-id", "words[0].token is not a token {id, text, display, spoken}"),
    ("format", "has format 2, not 1"),
    ("huge", "sentences[0].sum[1] is not a list of 4 finite numbers within ±1e9"),
    ("markup-display", "words[0].token's display or spoken text is not its text's"),
])
def test_a_damaged_vectors_file_is_one_line_naming_it(tmp_path, how, problem):
    path = vectors_file.path(tmp_path, "tiny")
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(damage(synthetic_vectors(), how)), encoding="utf-8")
    with pytest.raises(DamagedFile) as e:
        vectors_file.read(tmp_path, "tiny")
    assert str(e.value) == f"{path}: {problem}. Fix: {vectors_file.FIX}"
    with pytest.raises(DamagedFile):  # and the writer refuses to write it
        vectors_file.write(tmp_path / "w", "tiny", damage(synthetic_vectors(), how))
    assert not vectors_file.path(tmp_path / "w", "tiny").exists()


def test_vectors_from_another_revision_than_the_traces_are_refused(tmp_path):
    ctx = ctx_with_vectors(tmp_path, synthetic_vectors(revision="abcdef0123456789"))
    with pytest.raises(DamagedFile, match="was written from model revision abcdef012345, but the traces are from synthetic-00"):
        render_kind("embedding", ctx)


def test_lesson_words_name_vocabulary_entries():
    assert vectors_file.word_token("tiny", "her") == (318, " her")
    assert vectors_file.word_token("tiny", "·Lily")[1] == " Lily"
    with pytest.raises(vectors_file.UnknownWord, match=r"'qzxv' is not one token of tiny's vocabulary \(' qzxv' is ' ' \+ 'q'"):
        vectors_file.word_token("tiny", "qzxv")


def test_a_lesson_word_that_is_no_token_stops_the_vectors_step_with_its_line(tmp_path, capsys):
    from generator.model import vectors

    (tmp_path / "content").mkdir()
    (tmp_path / "content" / "a.md").write_text("# A\n\n```map\nmodel: tiny\nmark: [her, qzxv]\n```\n", encoding="utf-8")
    rc = vectors.write_for_lessons(["tiny"], tmp_path / "traces", tmp_path / "content")
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and err[0].startswith(f"{tmp_path / 'content' / 'a.md'}:3: 'qzxv' is not one token")
    assert not (tmp_path / "traces").exists()


def test_the_committed_vectors_are_what_the_model_gives_and_the_same_twice(tmp_path):
    """Determinism and freshness: the stage, run twice on the committed model and lessons, writes
    the committed file's bytes."""
    pytest.importorskip("torch")
    import torch

    from generator.model import vectors

    before = torch.get_num_threads()
    torch.set_num_threads(1)  # as `make traces` pins it
    try:
        for run in ("a", "b"):
            assert vectors.write_for_lessons(["tiny"], tmp_path / run, REPO / "content") == 0
    finally:
        torch.set_num_threads(before)
    a, b = (vectors_file.path(tmp_path / r, "tiny").read_bytes() for r in ("a", "b"))
    assert a == b
    assert a == vectors_file.path(REPO / "traces", "tiny").read_bytes(), "traces/tiny/vectors.json is stale: run `make traces`"


def test_stored_vectors_of_this_revision_and_these_words_are_kept(tmp_path, capsys):
    """`make traces` keeps a vectors.json that is this model revision's and covers exactly the
    lessons' sentences and words (recomputed on another machine, its last digits can move);
    --force, another revision or a damaged file writes it again."""
    pytest.importorskip("torch")
    import json
    import shutil

    from generator.model import vectors

    store = tmp_path / "traces"
    shutil.copytree(REPO / "traces" / "tiny", store / "tiny")
    p = vectors_file.path(store, "tiny")
    doc = json.loads(p.read_text(encoding="utf-8"))
    doc["words"][0]["norm"] = planted = doc["words"][0]["norm"] + 0.25
    p.write_text(json.dumps(doc), encoding="utf-8")
    assert vectors.write_for_lessons(["tiny"], store, REPO / "content") == 0
    assert "kept (written already)" in capsys.readouterr().out
    assert json.loads(p.read_text(encoding="utf-8"))["words"][0]["norm"] == planted
    assert vectors.write_for_lessons(["tiny"], store, REPO / "content", force=True) == 0
    assert json.loads(p.read_text(encoding="utf-8"))["words"][0]["norm"] != planted
    doc["revision"] = "another"
    p.write_text(json.dumps(doc), encoding="utf-8")
    assert vectors.write_for_lessons(["tiny"], store, REPO / "content") == 0
    again = json.loads(p.read_text(encoding="utf-8"))
    assert again["revision"] != "another" and again["words"][0]["norm"] != planted


def test_the_map_bears_out_what_chapter_2_says_of_it():
    """content/vectors.md, "A map of the vectors": the first direction puts pieces of words far left
    of the whole words they begin; the marked words are all to the right; on the second direction
    the marked pronouns sit above the marked names."""
    m = vectors_file.read(REPO / "traces", "tiny").doc["map"]
    at = {t["text"].strip(): t for t in m["tokens"] + m["marks"]}
    for piece, word in (("happ", "happy"), ("somet", "something")):
        assert at[piece]["x"] < 0 < at[word]["x"], (piece, word)
    assert min(t["x"] for t in m["marks"]) > 0
    assert min(at[w]["y"] for w in ("her", "she", "him")) > max(at[w]["y"] for w in ("Lily", "Ben", "Tom"))


def test_the_committed_vectors_hold_together():
    """Relations the numbers must satisfy, checked from the file alone."""
    vec = vectors_file.read(REPO / "traces", "tiny")
    ln = vec.doc["layerNorm"]
    for s in vec.doc["sentences"]:
        tok, pos, total = (np.array(s[k]) for k in ("token", "position", "sum"))  # (token, width)
        assert np.allclose(tok + pos, total, atol=1e-4)
        norm = np.array(s["normalised"])  # (token, width)
        assert np.allclose(norm.mean(1), 0, atol=1e-3) and np.allclose(norm.std(1), 1, atol=2e-3)
        assert np.allclose(norm * ln["weight"] + ln["bias"], s["ln1"], atol=1e-3)
    for w in vec.doc["words"]:
        assert w["nearest"][0]["cosine"] <= 1 and w["token"]["id"] not in [n["token"]["id"] for n in w["nearest"]]
    assert len(vec.doc["map"]["tokens"]) == vectors_file.CONFIG.map_tokens


# ---------------------------------------------------------------- reading order


def glossary_slugs(html: str) -> set[str]:
    return set(re.findall(r'class="course-term" href="glossary\.html#([^"]+)"', html))


NAV_ORDER = ["index", "tokens", "vectors", "attention", "play", "heads", "gpt2", "causal"]


def terms_too_early(site: Path, order: list[str]) -> list[str]:
    """'page: slug' for each glossary term a built page links (its pop-up) whose `introduced:`
    page comes later in `order`. Read from the built pages, apart from the check that stops the
    build (markdown.reading_path), which reads the sources."""
    from generator.markdown import lesson

    intro = {t.slug: t.introduced.partition("#")[0].removesuffix(".md") for t in lesson.load_glossary(REPO / "content" / "glossary.yml")}
    found = []
    for k, page in enumerate(order):
        for slug in sorted(glossary_slugs((site / f"{page}.html").read_text(encoding="utf-8"))):
            if order.index(intro[slug]) > k:
                found.append(f"{page}: {slug}")
    return found


def test_no_built_page_links_a_term_that_a_later_page_introduces(tmp_path):
    """Chapter 3 introduces its own terms (softmax, the causal mask, queries); chapters 1 and 2 do
    not name them first, and no page's pop-ups lead ahead of the chapter that explains them."""
    from generator import cli

    assert cli.main(["site", "-f", str(REPO / "mkdocs.yml"), "-d", str(tmp_path / "site"), "--no-downloads"]) == 0
    site = tmp_path / "site"
    assert glossary_slugs((site / "attention.html").read_text(encoding="utf-8")) >= {"softmax", "causal-mask", "query"}
    assert terms_too_early(site, NAV_ORDER) == []
    swapped = ["index", "tokens", "attention", "vectors", "play", "heads", "gpt2", "causal"]
    assert "attention: dot-product" in terms_too_early(site, swapped)  # the check can fail


def test_every_number_in_the_chapters_prose_is_a_reference():
    """No digit stands in the prose of chapters 1 and 2 outside references, code, formulas, links
    and the list of sources (author-year citations)."""
    for name in ("tokens.md", "vectors.md"):
        text = (REPO / "content" / name).read_text(encoding="utf-8")
        text = text.split("## Go deeper")[0].split("---", 2)[2]
        text = re.sub(r"(?ms)^(\s*)```.*?^\1```", "", text)  # figures and code blocks
        text = re.sub(r"(?s)\$\$.*?\$\$", "", text)
        for pattern in (r"\{\{.*?\}\}", r"`[^`]*`", r"\$[^$]*\$", r"\]\([^)]*\)", r"\([A-Z][a-z]+(?: et al\.| and [A-Z][a-z]+)?, \d{4}\)", r"<kbd>.*?</kbd>"):
            text = re.sub(pattern, "", text)
        text = re.sub(r"(?m)^=== .*$", "", text)
        found = [m.group(0) for m in re.finditer(r"(?<![\w-])-?\d+(?:[.,]\d+)*", text)]
        allowed = {"1", "0", "-1", "2", "3", "4"}  # chapter numbers and "1 for the same direction"
        assert set(found) <= allowed, f"{name}: numbers typed by hand: {sorted(set(found) - allowed)}"


def test_directive_mistakes_are_one_line():
    # (kind, body) -> (message, the body line of the option it names, or 0 for the fence's line)
    cases = {
        ("tokens", 'sentences: ["a", "a"]\n'): ("tokens: a sentence is listed twice", 1),
        ("tokens", 'sentences: ["a"]\nmodels: [tiny, gpt3]\n'): ("tokens: unknown model 'gpt3'", 2),
        ("merges", 'word: "to play"\n'): ("merges: 'word' 'to play' is not one word", 1),
        ("embedding", 'model: gpt2\nsentence: "a"\n'): ("embedding: only the tiny model's vectors are frozen in this course, not gpt2's", 0),
        ("neighbours", "model: tiny\nwords: [her, her]\n"): ("neighbours: 'words' lists a word twice", 2),
        ("neighbours", "model: tiny\nwords: [her]\npairs: [[her]]\n"): ("neighbours: 'pairs' must be a list of two-word lists", 3),
        ("map", "model: tiny\nmark: [two words]\n"): ("map: 'mark' holds 'two words', which is not one word", 2),
        ("layernorm", "model: tiny\nsentence: a\ntoken: -1\n"): ("layernorm: 'token' position -1 is out of range", 3),
    }
    for (kind, body), (message, line) in cases.items():
        with pytest.raises(LessonError) as e:
            D.parse_directive(kind, textwrap.dedent(body), "content/x.md:4")
        assert str(e.value).startswith(f"content/x.md:{4 + line}: {message}") and "\n" not in str(e.value), str(e.value)


def test_make_traces_runs_the_vectors_step_after_the_traces(monkeypatch, tmp_path):
    """The hook in trace_run.main_traces: vectors are written only when tracing succeeded."""
    pytest.importorskip("torch")
    from generator.model import trace_run, vectors

    calls = []
    monkeypatch.setattr(vectors, "write_for_lessons", lambda *a, **k: calls.append((a, k)) or 0)
    (tmp_path / "content").mkdir()
    args = ["traces", "--models", "tiny", "--traces-dir", str(tmp_path / "t"), "--content", str(tmp_path / "content")]
    from generator import cli

    monkeypatch.setattr(trace_run, "run_traces", lambda *a, **k: 0)
    assert cli.main(args) == 0 and len(calls) == 1
    assert calls[0][0][0] == ["tiny"] and str(calls[0][0][1]) == str(tmp_path / "t")
    monkeypatch.setattr(trace_run, "run_traces", lambda *a, **k: 1)
    assert cli.main(args) == 1 and len(calls) == 1  # a failed trace run writes no vectors


def test_a_step_of_a_word_with_no_merges_says_there_is_none():
    from generator.lessons.refs import parse_ref
    from generator.render.ref_common import int_arg

    with pytest.raises(LessonError, match=r"there is no step to name here \(the figure has none\)"):
        int_arg(parse_ref("m.pair(1)", "content/x.md:3"), "1", "step", 1, 0)


def test_the_map_s_rule_from_the_file_is_text_in_a_reference(tmp_path):
    """{{ map.rule }} writes vectors.json's words: escaped, as the figure's own copy of them is."""
    from vector_fixtures import synthetic_vectors

    doc = synthetic_vectors()
    doc["map"]["rule"] = "20 <b>synthetic</b> tokens & more"
    ctx = ctx_with_vectors(tmp_path, doc)
    render_kind("map", ctx)
    out = render.render_ref(refs.parse_ref("mp.rule", "content/page.md:20"), ctx)
    assert "<b>" not in out and "20 &lt;b&gt;synthetic&lt;/b&gt; tokens &amp; more" in out, out
