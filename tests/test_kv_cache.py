"""Chapter 7's KV cache and masks (issue 52): the cache's arithmetic against an independent reading
of each config.json, the literature file checked on read (a broken file is one line at its file
and line), the `kv-cache` table without JavaScript, the `masks` grids cell by cell (and a golden
file), and references to a model whose name has a hyphen."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from generator import registry, render
from generator.lessons import refs
from generator.lessons.errors import LessonError
from test_render import check_golden, ctx_for, directive, ref

LITERATURE = registry.LITERATURE_FILE


def independent(config: dict) -> tuple[int, int, int, int, int]:
    """(layers, query heads, key/value heads, numbers per key, context) read straight from a
    config.json, by its own keys, without the registry."""
    if "n_layer" in config:  # GPT-2's names: one key/value head per query head
        return config["n_layer"], config["n_head"], config["n_head"], config["n_embd"] // config["n_head"], config["n_positions"]
    heads = config["num_attention_heads"]
    return (config["num_hidden_layers"], heads, config.get("num_key_value_heads", heads),
            config.get("head_dim", config["hidden_size"] // heads), config["max_position_embeddings"])


@pytest.mark.parametrize("model", sorted(registry.MODELS))
def test_kv_arithmetic_matches_each_config_file(model):
    config = json.loads(registry.CONFIG_FILES[model].read_text(encoding="utf-8"))
    layers, heads, kv_heads, d, ctx = independent(config)
    kv = registry.kv_shape(model)
    numbers = 0
    for _layer in range(layers):  # count what is kept, head by head, rather than multiply
        for _head in range(kv_heads):
            numbers += d + d  # its key and its value
    assert kv.numbers_per_token == numbers
    assert kv.numbers_unshared == 2 * layers * heads * d
    assert kv.bytes_per_token(4) == numbers * 4 and kv.bytes_per_token(2) == numbers * 2
    assert kv.bytes_for(ctx, 4) == numbers * 4 * ctx
    assert kv.bytes_unshared_for(ctx, 4) == 2 * layers * heads * d * 4 * ctx


def test_sharing_keys_halves_the_tiny_rotary_models_cache():
    rope = json.loads(registry.CONFIG_FILES["tiny-rope"].read_text(encoding="utf-8"))
    assert rope["num_key_value_heads"] < rope["num_attention_heads"]  # the premise: it shares
    kv = registry.kv_shape("tiny-rope")
    assert kv.numbers_unshared // kv.numbers_per_token == rope["num_attention_heads"] // rope["num_key_value_heads"]


def test_model_references_give_the_cache_from_the_config_without_traces(tmp_path):
    ctx = ctx_for(tmp_path)  # an empty store: the config alone answers
    for model in registry.MODELS:
        config = json.loads(registry.CONFIG_FILES[model].read_text(encoding="utf-8"))
        layers, heads, kv_heads, d, n_ctx = independent(config)
        assert ref(f"model.{model}.kvNumbers", ctx) == f"{2 * layers * kv_heads * d:,}"
        assert ref(f"model.{model}.nKvHead", ctx) == str(kv_heads)
        assert ref(f"model.{model}.kvShare", ctx) == str(heads // kv_heads)
    assert ref("model.tiny.kvBytes", ctx) == "4,096 bytes"  # 2 × 4 × 4 × 32 numbers × 4 bytes
    assert ref("model.gpt2.kvContextBytes", ctx) == "75.5 MB"  # 18,432 numbers × 4 bytes × 1,024 tokens


def test_a_model_name_with_a_hyphen_can_be_referred_to(tmp_path):
    r = refs.parse_ref("model.tiny-rope.nLayer", "content/page.md:3")
    assert (r.target, r.name) == ("model", "tiny-rope.nLayer")
    assert ref("model.tiny-rope.kvNumbers", ctx_for(tmp_path)) == "512"


# ---------------------------------------------------------------- the literature file


def test_the_literature_file_reads_and_its_arithmetic_is_its_fields():
    models = registry.read_open_models()
    assert len(models) >= 4 and len({m.id for m in models}) == len(models)
    for m in models:
        assert m.source == f"https://huggingface.co/{m.repo}/blob/main/config.json" and m.confirmed
        kept_layers = {"none": 0, "all": m.layers, "alternate": m.layers // 2 + m.layers % 2}[m.window_layers]
        per_layer_token = 2 * m.kv_heads * m.head_dim * 2
        window = m.sliding_window or m.context
        expected = (m.layers - kept_layers) * m.context * per_layer_token + kept_layers * min(window, m.context) * per_layer_token
        assert m.kv.bytes_for(m.context, 2) == expected, m.id
        assert m.kv.numbers_per_token == 2 * m.layers * m.kv_heads * m.head_dim


def entry_text(**changes) -> str:
    """The literature file with its first entry changed (a field set to None is removed)."""
    text = LITERATURE.read_text(encoding="utf-8")
    for field, value in changes.items():
        first = re.compile(rf"^(- |  ){field}: .*$", re.M).search(text)
        text = text[: first.start()] + (f"{first[1]}{field}: {value}" if value is not None else "") + text[first.end():]
    return text


def line_of(text: str, pattern: str) -> int:
    return text[: re.search(pattern, text, re.M).start()].count("\n") + 1


@pytest.mark.parametrize("changes,pattern,words", [
    ({"kv_heads": "5"}, r"^  kv_heads: 5", "5 key/value heads cannot be shared evenly by 32 query heads"),
    ({"layers": "many"}, r"^  layers: many", "'layers' must be a positive whole number, not 'many'"),
    ({"heads": "0"}, r"^  heads: 0", "'heads' must be a positive whole number"),
    ({"learned_sinks": "maybe"}, r"^  learned_sinks: maybe", "'learned_sinks' must be true or false"),
    ({"window_layers": "some"}, r"^  window_layers: some", "'window_layers' must be none, all or alternate"),
    ({"sliding_window": "4096"}, r"^  window_layers: none", "'window_layers' is none but 'sliding_window' is 4096"),
    ({"source": "https://example.com/config.json"}, r"^  source: https://example", "'source' must be the config.json of"),
    ({"read": "last week"}, r"^  read: last week", "'read' must be a date as YYYY-MM-DD"),
    ({"id": "mistral-7b"}, r"^- id: mistral-7b\n  name: Mistral", "the id 'mistral-7b' is used twice"),
    ({"rope_theta": None}, r"^- id: llama-2-7b", "the entry lacks 'rope_theta'"),
    ({"head_dim": "128\n  colour: red"}, r"^  colour: red", "unknown field 'colour'"),
    ({"name": "[Llama 2"}, r"^  repo:", "is not valid YAML"),
])
def test_a_broken_literature_file_is_one_line_at_its_file_and_line(tmp_path, changes, pattern, words):
    text = entry_text(**changes)
    path = tmp_path / "open_models.yml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(registry.LiteratureError) as e:
        registry.read_open_models(path)
    message = str(e.value)
    line = line_of(text, pattern)
    assert "\n" not in message and message.startswith(f"{path}:{line}: ") and words in message and ". Fix: " in message, (message, line)


def test_a_broken_literature_file_stops_the_page_at_the_files_line(tmp_path, monkeypatch):
    path = tmp_path / "open_models.yml"
    path.write_text(entry_text(kv_heads="5"), encoding="utf-8")
    monkeypatch.setattr(registry, "LITERATURE_FILE", path)
    with pytest.raises(LessonError) as e:
        directive("kv-cache", "models: [tiny, llama-2-7b]\n")
    assert str(e.value).startswith(f"{path}:{line_of(path.read_text(), r'^  kv_heads: 5')}: ")


# ---------------------------------------------------------------- the kv-cache table


class Table(HTMLParser):
    """The rows of a fragment's tables, cell texts; whether it holds a script or hides anything."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[str]] = []
        self.links: list[str] = []
        self.scripts = self.hidden = 0
        self._cell: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.scripts += tag == "script"
        self.hidden += "hidden" in a or "display:none" in (a.get("style") or "").replace(" ", "")
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self._cell = []
        elif tag == "a":
            self.links.append(a.get("href", ""))

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self.rows[-1].append("".join(self._cell).strip())
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def test_the_kv_cache_table_needs_no_script_and_shows_each_models_arithmetic(tmp_path):
    ctx = ctx_for(tmp_path)
    html = render.render(directive("kv-cache", "models: [tiny, tiny-rope, gpt2, llama-2-7b, mistral-7b]\nbytes: 4\nid: cache\n"), ctx)
    t = Table()
    t.feed(html)
    assert t.scripts == 0 and t.hidden == 0  # all of it is there without JavaScript
    header, *rows = t.rows
    assert header[0] == "Model" and len(rows) == 5
    literature = {m.id: m for m in registry.open_models()}
    for key, row in zip(["tiny", "tiny-rope", "gpt2", "llama-2-7b", "mistral-7b"], rows):
        kv = registry.kv_shape(key) if key in registry.MODELS else literature[key].kv
        assert row[5] == f"{kv.numbers_per_token:,}"
        assert row[1:4] == [str(kv.n_layer), str(kv.n_head), str(kv.n_kv_head)]
    assert rows[0][6] == "4,096 bytes" and "4 bytes" in html  # the precision is stated
    assert t.links == [literature["llama-2-7b"].source, literature["mistral-7b"].source]  # the sources are linked
    assert ref("cache.perToken(llama-2-7b)", ctx) == "1.05 MB"  # 262,144 numbers × 4 bytes
    assert ref("cache.window(mistral-7b)", ctx) == "4,096"
    assert rows[4][8] == "4,096 tokens, on every layer"  # Mistral 7B's window, from its config


def test_learned_sinks_are_named_where_the_config_has_them(tmp_path):
    html = render.render(directive("kv-cache", "models: [gpt-oss-20b, mistral-7b]\n"), ctx_for(tmp_path))
    t = Table()
    t.feed(html)
    assert t.rows[1][8] == "128 tokens, on 12 of 24 layers; learned sinks in every head"
    assert "sinks" not in t.rows[2][8]


@pytest.mark.parametrize("kind,body,line,words", [
    ("kv-cache", "models: [tiny, llama-9]\n", 21, "'models' names 'llama-9', which is neither a course model"),
    ("kv-cache", "models: tiny\n", 21, "'models' must be a list of model names"),
    ("kv-cache", "bytes: 3\n", 21, "'bytes' must be 2 or 4, not 3"),
    ("masks", "tokens: 40\n", 21, "'tokens' must be a whole number from 3 to 16, not 40"),
    ("masks", "tokens: 6\nwindow: 6\n", 22, "'window' must be a whole number from 1 to 5, not 6"),
])
def test_bad_options_are_one_line_at_their_line(kind, body, line, words):
    with pytest.raises(LessonError) as e:
        directive(kind, body, "content/page.md:20")
    text = str(e.value)
    assert "\n" not in text and text.startswith(f"content/page.md:{line}: {kind}: ") and words in text and " Fix: " in text, text


# ---------------------------------------------------------------- the masks


def cells(fragment: str) -> dict[str, dict[tuple[int, str], str]]:
    """Each grid's cells: (row, column) -> "on", "off" or "sink"."""
    grids: dict[str, dict] = {}
    for svg in re.finditer(r'<svg[^>]*data-mask="(\w+)"(.*?)</svg>', fragment, re.S):
        grid = grids[svg[1]] = {}
        for c in re.finditer(r'<rect class="course-mask-cell( course-mask-(on|sink))?" data-row="(\d+)" data-col="(\w+)"', svg[2]):
            grid[(int(c[3]), c[4])] = c[2] or "off"
    return grids


@pytest.mark.parametrize("tokens,window", [(8, 3), (5, 1), (6, 5)])
def test_each_masks_cells_follow_its_rule(tmp_path, tokens, window):
    html = render.render(directive("masks", f"tokens: {tokens}\nwindow: {window}\n"), ctx_for(tmp_path))
    grids = cells(html)
    assert set(grids) == {"causal", "window", "sink"}
    for q in range(1, tokens + 1):
        for k in range(1, tokens + 1):
            earlier = "on" if k <= q else "off"
            assert grids["causal"][(q, str(k))] == earlier
            assert grids["sink"][(q, str(k))] == earlier
            assert grids["window"][(q, str(k))] == ("on" if q - window < k <= q else "off")
        assert grids["sink"][(q, "sink")] == "sink"  # every query may put weight on the sink
    assert len(grids["causal"]) == tokens * tokens and len(grids["sink"]) == tokens * (tokens + 1)


def test_each_mask_is_a_named_described_picture_without_script(tmp_path):
    html = render.render(directive("masks", "tokens: 8\nwindow: 3\n"), ctx_for(tmp_path))
    assert "<script" not in html and html.count('role="img"') == 3
    for kind in ("causal", "window", "sink"):
        title = re.search(rf'<title id="fig-1-{kind}-title">([^<]+)</title>', html)
        desc = re.search(rf'<desc id="fig-1-{kind}-desc">([^<]+)</desc>', html)
        assert title and desc and "Row i" in desc[1], kind
    assert "i − 2 to i" in html  # the window's rule, in words, for a window of 3


def test_golden_masks(tmp_path, update_golden):
    check_golden("masks", render.render(directive("masks", "tokens: 6\nwindow: 3\nid: masks\n"), ctx_for(tmp_path)), update_golden)
