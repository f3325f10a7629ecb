"""The trace store: deterministic, atomic, indexed files, rounded to the documented precision."""

from __future__ import annotations

import json
import math
import os
import random
import signal
import subprocess
import sys
import time
from decimal import Decimal

import pytest

from generator import schema
from generator.store import files as store_files, traces
from generator.store import MissingTrace, TraceRequest, TraceStore, trace_key
from trace_helpers import REPO, fake_doc

SCHEMA_FILE = REPO / "generator" / "trace.schema.json"


def significant_digits(x: float) -> int:
    if x == 0:
        return 0
    return len(Decimal(repr(x)).normalize().as_tuple().digits)


# ---------------------------------------------------------------- rounding


def test_round_sig_keeps_five_significant_digits():
    assert schema.SIGNIFICANT_DIGITS == 5
    rng = random.Random(7)
    for _ in range(2000):
        x = rng.uniform(-1, 1) * 10 ** rng.randint(-12, 8)
        r = store_files.round_sig(x)
        assert significant_digits(r) <= 5
        assert abs(r - x) <= 0.5e-4 * abs(x) * (1 + 1e-9)
    assert store_files.round_sig(0.123456789) == 0.12346
    assert store_files.round_sig(-1234567.0) == -1234600.0
    assert math.copysign(1, store_files.round_sig(-1e-30 * 0)) == 1  # no "-0.0" in files
    with pytest.raises(ValueError):
        store_files.round_sig(float("nan"))
    rows = store_files.round_floats([[0.123456789, None, 2], [float("1e-7") / 3]])
    assert rows == [[0.12346, None, 2], [3.3333e-08]]


# ---------------------------------------------------------------- requests and keys


def test_trace_request_hashable_sortable():
    a = TraceRequest("tiny", "b")
    b = TraceRequest("tiny", "b", ids=[3, 4])
    c = TraceRequest("gpt2", "z")
    assert b.ids == (3, 4) and hash(b) == hash(TraceRequest("tiny", "b", (3, 4)))
    assert sorted([b, a, c]) == [c, a, b]
    assert len({a, b, TraceRequest("tiny", "b")}) == 2


def test_key_depends_on_every_part():
    base = trace_key("tiny", "rev1", 1, "Lily wanted", None)
    assert len(base) == 12 and int(base, 16) >= 0
    assert base == trace_key("tiny", "rev1", 1, "Lily wanted", None)
    others = {
        trace_key("gpt2", "rev1", 1, "Lily wanted", None),
        trace_key("tiny", "rev2", 1, "Lily wanted", None),
        trace_key("tiny", "rev1", 2, "Lily wanted", None),
        trace_key("tiny", "rev1", 1, "Lily wanted ", None),
        trace_key("tiny", "rev1", 1, "Lily wanted", [1, 2]),
    }
    assert base not in others and len(others) == 5


# ---------------------------------------------------------------- writing and reading


def test_write_load_and_index(tmp_path):
    s = TraceStore(tmp_path)
    docs = [fake_doc(t) for t in ["zebra", "apple", "Mango"]] + [fake_doc("apple", ids=[1, 2, 3])]
    for d in docs:
        s.write(d)
    assert s.models() == ["tiny"]
    entries = s.entries("tiny")
    assert [(e["text"], "ids" in e) for e in entries] == [("Mango", False), ("apple", False), ("apple", True), ("zebra", False)]
    assert all(e["nTokens"] == 3 and (tmp_path / "tiny" / e["file"]).is_file() for e in entries)
    assert s.model_meta("tiny")["revision"] == "rev-a"
    loaded = s.load("tiny", "apple")
    assert loaded["key"] == trace_key("tiny", "rev-a", schema.SCHEMA_VERSION, "apple", None)
    assert "ids" not in loaded and s.load("tiny", "apple", ids=(1, 2, 3))["ids"] == [1, 2, 3]
    assert s.has("tiny", "zebra") and not s.has("tiny", "zebra", revision="other")
    assert s.lookup("tiny", "zebra", revision="rev-a") is not None
    with pytest.raises(MissingTrace, match="'nope'.*tiny"):
        s.load("tiny", "nope")
    assert s.lookup("gpt2", "apple") is None and s.model_meta("gpt2") is None


def test_a_trace_is_read_once_until_its_file_changes(tmp_path, monkeypatch):
    """Figures that share a sentence share one read; the same file rewritten (through this store
    or another process's), or damaged in place, is read again: its stat stamp changed."""
    s = TraceStore(tmp_path)
    path = s.write(fake_doc("apple"))
    reads = []
    real = traces.read_bytes
    monkeypatch.setattr(traces, "read_bytes", lambda p, limit: reads.append(p) or real(p, limit))
    first = s.load("tiny", "apple")
    assert s.load("tiny", "apple") is first and reads == [path]
    q0 = first["layers"][0]["heads"][0]["q"]
    assert s.write(fake_doc("apple", seed=1)) == path  # the same key, a new file renamed over it
    second = s.load("tiny", "apple")
    assert len(reads) == 2 and second["layers"][0]["heads"][0]["q"] != q0
    assert TraceStore(tmp_path).write(fake_doc("apple", seed=2)) == path  # another writer
    third = s.load("tiny", "apple")
    assert len(reads) == 3 and third["layers"][0]["heads"][0]["q"] != second["layers"][0]["heads"][0]["q"]
    path.write_bytes(path.read_bytes()[:40])  # cut short in place: same inode, new size
    with pytest.raises(store_files.DamagedFile):
        s.load("tiny", "apple")
    assert len(reads) == 4


@pytest.mark.parametrize("edit, says", [
    (lambda d: d["tokens"][1].pop("spoken"), "token 1 is not {id: a token id below vocabSize 100, text, display, spoken: strings}"),
    (lambda d: d["tokens"][1].__setitem__("display", [1]), "token 1 is not"),
    (lambda d: d["tokens"][2].__setitem__("id", -7), "token 2 is not"),
    (lambda d: d["tokens"][2].__setitem__("id", 10**30), "token 2 is not"),
    (lambda d: d["tokens"][2].__setitem__("id", True), "token 2 is not"),
    (lambda d: d["predictions"][0][0].pop("display"), "prediction row 0 is not a list of guesses with id (below vocabSize 100), text, display and prob"),
    (lambda d: d["predictions"][1][0].__setitem__("display", [1]), "prediction row 1 is not"),
    (lambda d: d["predictions"][0][0].__setitem__("id", 100), "prediction row 0 is not"),
    (lambda d: d["meta"].pop("vocabSize"), "has no usable meta vocabSize"),
    (lambda d: d["tokens"][1].__setitem__("display", "<img src=x onerror=alert(1)>"), "token 1's display or spoken text is not its text's"),
    (lambda d: d["tokens"][1].__setitem__("spoken", "space something else"), "token 1's display or spoken text is not its text's"),
    (lambda d: d["predictions"][0][0].__setitem__("display", "not it"), "prediction row 0 has a guess whose display is not its text's"),
])
def test_a_trace_whose_tokens_or_guesses_are_damaged_is_one_line_naming_it(tmp_path, edit, says):
    """What a page prints of a token (its display, its spoken label) or a guess (its display) and
    their ids are checked where the trace is read: a missing `spoken` or `display` was an internal
    error at a lesson line, and `display: [1]` or an id of -7 or 10**30 was shown as it was."""
    s = TraceStore(tmp_path)
    path = s.write(fake_doc("apple pie now"))
    s.load("tiny", "apple pie now")
    doc = json.loads(path.read_text())
    edit(doc)
    path.write_text(json.dumps(doc))
    with pytest.raises(store_files.DamagedFile) as e:
        s.load("tiny", "apple pie now")
    line = str(e.value)
    assert "\n" not in line and line.startswith(f"{path}: {says}") and line.count("Fix: ") == 1, line


def test_json_nested_thousands_deep_is_one_line_naming_the_file(tmp_path):
    path = tmp_path / "deep.json"
    with pytest.raises(store_files.DamagedFile, match="is nested too deep") as e:
        store_files.parse_json(b"[" * 100_000 + b"]" * 100_000, path)
    assert str(e.value).startswith(f"{path}: ") and "\n" not in str(e.value)


def test_file_format_is_compact_ordered_rounded(tmp_path):
    path = TraceStore(tmp_path).write(fake_doc("héllo ünïcode"))
    raw = path.read_bytes()
    assert raw.endswith(b"}\n") and raw.count(b"\n") == 1
    assert "héllo".encode() in raw and b": " not in raw and b", " not in raw
    doc = json.loads(raw)
    assert list(doc)[:5] == ["schemaVersion", "key", "model", "text", "meta"]
    assert list(doc["layers"][0]) == ["heads", "kvHeads"]  # attnConcat is restored by the loader
    assert [list(kv) for kv in doc["layers"][0]["kvHeads"]] == [list(schema.STORED_KV_FIELDS)] * 2  # a learned-position model: no kUnrotated
    head = doc["layers"][0]["heads"][0]
    assert list(head) == list(schema.STORED_HEAD_FIELDS)  # scaledMasked is restored by the loader
    assert all(list(head[f])[:3] == ["int16", "scale", "shape"] for f in head)
    assert head["weights"]["tril"] is True and "tril" not in head["q"]
    # every float left as a JSON number (scales, probabilities) has at most 5 significant digits
    floats = [h[f]["scale"] for layer in doc["layers"] for h in layer["heads"] for f in h]
    floats += [p["prob"] for row in doc["predictions"] for p in row]
    assert floats and all(significant_digits(x) <= 5 for x in floats)


def test_deterministic_bytes(tmp_path):
    a, b = TraceStore(tmp_path / "a"), TraceStore(tmp_path / "b")
    pa = a.write(fake_doc("same"))
    first = pa.read_bytes()
    pa2 = a.write(fake_doc("same"))
    pb = b.write(fake_doc("same"))
    assert pa == pa2 and pa.read_bytes() == first == pb.read_bytes()
    # key order of the input does not matter
    d = fake_doc("same")
    d = {k: d[k] for k in reversed(list(d))}
    d["meta"] = {k: d["meta"][k] for k in reversed(list(d["meta"]))}
    assert TraceStore(tmp_path / "c").write(d).read_bytes() == first


def test_new_revision_drops_stale_entries_and_prune_removes_them(tmp_path):
    s = TraceStore(tmp_path)
    old = s.write(fake_doc("one", revision="r1"))
    s.write(fake_doc("two", revision="r1"))
    new = s.write(fake_doc("one", revision="r2"))
    assert new != old and old.exists()
    assert [e["text"] for e in s.entries("tiny")] == ["one"]  # "two" was traced from r1
    assert s.lookup("tiny", "one") == new and s.model_meta("tiny")["revision"] == "r2"
    (tmp_path / "tiny" / "heads.json").write_text("{}")  # generator.heads' file lives here too
    removed = s.prune("tiny")
    assert old in removed and len(removed) == 2 and new.exists()
    assert (tmp_path / "tiny" / "heads.json").exists() and s.index_path("tiny").exists()


def test_index_of_another_schema_is_ignored(tmp_path):
    s = TraceStore(tmp_path)
    s.write(fake_doc("x"))
    idx = s.index_path("tiny")
    data = json.loads(idx.read_text())
    data["schemaVersion"] = schema.SCHEMA_VERSION + 1
    idx.write_text(json.dumps(data))
    assert s.lookup("tiny", "x") is None and s.entries("tiny") == [] and s.prune("tiny") == []


def test_crash_before_index_leaves_loadable_store(tmp_path, monkeypatch):
    s = TraceStore(tmp_path)
    s.write(fake_doc("kept"))
    index_before = s.index_path("tiny").read_bytes()
    real_replace = os.replace

    def dying_replace(src, dst):
        if str(dst).endswith(store_files.INDEX_NAME):
            raise KeyboardInterrupt("killed between the trace and the index")
        return real_replace(src, dst)

    monkeypatch.setattr(store_files.os, "replace", dying_replace)
    with pytest.raises(KeyboardInterrupt):
        s.write(fake_doc("lost"))
    monkeypatch.undo()
    assert s.index_path("tiny").read_bytes() == index_before
    (tmp_path / "tiny" / ".stray.json.abc.tmp").write_text("{half")  # what a SIGKILL leaves
    fresh = TraceStore(tmp_path)
    assert fresh.load("tiny", "kept")["text"] == "kept" and not fresh.has("tiny", "lost")
    removed = {p.name for p in fresh.prune("tiny")}
    assert ".stray.json.abc.tmp" in removed and len(removed) == 2  # plus the unindexed "lost"


WRITER = """
import sys, itertools
sys.path[:0] = [{repo!r}, {tests!r}]
from generator.store import TraceStore
from trace_helpers import fake_doc
s = TraceStore({root!r})
for i in itertools.count():
    s.write(fake_doc(f"sentence {{i:05d}}", n_tokens=4))
"""


def test_sigkill_mid_run_leaves_consistent_store(tmp_path):
    code = WRITER.format(repo=str(REPO), tests=str(REPO / "tests"), root=str(tmp_path))
    proc = subprocess.Popen([sys.executable, "-c", code])
    try:
        deadline = time.time() + 20
        index = tmp_path / "tiny" / store_files.INDEX_NAME
        while time.time() < deadline:
            if index.exists() and len(json.loads(index.read_text())["traces"]) >= 5:
                break
            time.sleep(0.02)
        else:
            pytest.fail("the writer made no progress")
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    s = TraceStore(tmp_path)
    entries = s.entries("tiny")
    assert len(entries) >= 5
    for e in entries:
        assert s.load("tiny", e["text"])["key"] + ".json" == e["file"]


def test_store_does_not_import_torch():
    code = "import sys; import generator.store; assert 'torch' not in sys.modules and 'transformers' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True, cwd=REPO)


# ---------------------------------------------------------------- a real trace, stored


@pytest.fixture(scope="module")
def real_trace(tmp_path_factory):
    pytest.importorskip("torch")
    from generator.model import tracing
    from trace_helpers import random_tiny

    lm = random_tiny(seed=2, sharpen=6.0)
    root = tmp_path_factory.mktemp("store")
    s = TraceStore(root)
    path = s.write(tracing.trace(lm, "Lily wanted to play with her ball."))
    doc = s.load("tiny", "Lily wanted to play with her ball.")
    doc["_file"] = path  # the file as stored (encoded), for the JSON Schema
    return doc


def test_rederive_from_stored_numbers(real_trace):
    """From the stored q and k alone, softmax(q·kᵀ/√d + mask) gives the stored weights to 1e-3;
    weights·v gives out and the heads side by side give attnConcat, within the stored precision."""
    import numpy as np

    worst_w, worst_o = 0.0, 0.0
    assert real_trace["_file"].is_file()
    for layer in real_trace["layers"]:
        outs = []
        for head in layer["heads"]:
            q, k, v = (np.array(head[n], dtype=np.float64) for n in ("q", "k", "v"))
            T, d = q.shape
            s = q @ k.T / math.sqrt(d) + np.triu(np.full((T, T), -np.inf), 1)
            w = np.exp(s - s.max(axis=1, keepdims=True))
            w /= w.sum(axis=1, keepdims=True)
            worst_w = max(worst_w, float(np.abs(w - np.array(head["weights"])).max()))
            out = np.array(head["weights"]) @ v
            scale = np.abs(v).max()
            worst_o = max(worst_o, float(np.abs(out - np.array(head["out"])).max() / scale))
            outs.append(np.array(head["out"]))
        concat = np.array(layer["attnConcat"])
        assert np.abs(np.concatenate(outs, axis=1) - concat).max() <= 1e-4 * np.abs(concat).max()
    assert worst_w <= 1e-3
    assert worst_o <= 1e-4  # relative to the largest |v|: 5 significant digits, a few roundings


def test_real_trace_matches_json_schema(real_trace):
    """The JSON Schema describes the file as stored (encoded arrays)."""
    jsonschema = pytest.importorskip("jsonschema")
    spec = json.loads(SCHEMA_FILE.read_text())
    jsonschema.Draft202012Validator.check_schema(spec)
    stored = json.loads(real_trace["_file"].read_text(encoding="utf-8"))
    jsonschema.validate(stored, spec)
    broken = json.loads(json.dumps(stored))
    broken["layers"][0]["heads"][0]["weights"]["scale"] = -1
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, spec)
    broken = json.loads(json.dumps(stored))
    broken["layers"][0]["heads"][0]["q"]["int16"] += "!"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, spec)
    del broken["predictions"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, spec)


def test_json_schema_names_match_schema_module():
    spec = json.loads(SCHEMA_FILE.read_text())
    assert spec["$defs"]["head"]["required"] == list(schema.STORED_HEAD_FIELDS)
    assert list(spec["$defs"]["head"]["properties"]) == list(schema.STORED_HEAD_FIELDS + schema.ROTARY_HEAD_FIELDS)
    assert spec["$defs"]["kvHead"]["required"] == list(schema.STORED_KV_FIELDS)
    assert list(spec["$defs"]["kvHead"]["properties"]) == list(schema.STORED_KV_FIELDS + schema.ROTARY_KV_FIELDS)
    restored = {a.camel for a in schema.HEAD_ACTIVATIONS} - set(schema.STORED_HEAD_FIELDS)
    assert restored == {"k", "v", "scaledMasked", "qUnrotated", "kUnrotated"}  # from kvHeads, scores, q
    assert spec["$defs"]["layer"]["required"] == ["heads", "kvHeads"]  # attnConcat: restored from the heads' out
    assert spec["$defs"]["meta"]["required"] == list(schema.META_FIELDS.values()) + ["standIn"]
    assert spec["$defs"]["prediction"]["required"] == list(schema.PREDICTION_FIELDS)
    assert spec["properties"]["schemaVersion"]["const"] == schema.SCHEMA_VERSION


def test_committed_store_is_consistent():
    """Whatever traces/ holds: every index entry's file exists and carries its key and the index's
    meta; the smallest trace of each model passes the JSON Schema (all of them would be slow)."""
    jsonschema = pytest.importorskip("jsonschema")
    s = TraceStore(REPO / "traces")
    if not s.models():
        pytest.skip("no traces in traces/ yet (run `make traces`)")
    spec = json.loads(SCHEMA_FILE.read_text())
    for model in s.models():
        meta = s.model_meta(model)
        assert meta is not None and meta["model"] == model and meta["schemaVersion"] == schema.SCHEMA_VERSION
        entries = s.entries(model)
        assert entries == sorted(entries, key=traces._entry_sort)
        for e in entries:
            path = REPO / "traces" / model / e["file"]
            assert path.is_file(), f"index lists a missing file {path}"
            want = trace_key(model, meta["revision"], schema.SCHEMA_VERSION, e["text"], e.get("ids"))
            assert e["file"] == want + ".json"
        smallest = min(entries, key=lambda e: e["nTokens"])
        doc = s.load(model, smallest["text"], smallest.get("ids"))
        assert doc["meta"] == meta and len(doc["tokens"]) == smallest["nTokens"]
        jsonschema.validate(json.loads((REPO / "traces" / model / smallest["file"]).read_text(encoding="utf-8")), spec)
