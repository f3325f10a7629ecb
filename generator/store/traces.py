"""JSON trace files on disk, one folder per model, with an index.

This package must not import torch or transformers: the site build imports it.

Layout (traces/README.md is the full description)::

    traces/<model>/<key>.json   one trace: compact, deterministic JSON, newline-terminated
    traces/<model>/index.json   {"schemaVersion", "model", "meta", "traces": [{text, ids?, file, nTokens}]}

``key`` is the first 12 hex digits of the sha256 of the JSON text of
``[model, revision, schemaVersion, text, ids or null]``, so a new checkpoint (tiny) or a new
schema gives new files. Every write is atomic (temp file in the same folder, fsync, os.replace),
the trace before the index, so a killed run leaves a store whose index lists only files that
exist; stray temp files are ignored by the loader and removed by :meth:`TraceStore.prune`.

One writer at a time per store; any number of readers.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from .. import schema
from .checks import check_index, check_trace
from .codec import DecodedTrace, decode, encode_causal, encode_layer
from .files import INDEX_NAME, KEY_LENGTH, MAX_INDEX_BYTES, MAX_TRACE_BYTES, MODEL_NAME_RE, TMP_SUFFIX, TRACE_FILE_RE, DamagedFile, StoreError, atomic_write, check_model_name, dumps, ids_key, parse_json, read_bytes, read_json, regular_file_stamp, round_floats, stat_stamp


_DOC_ORDER = ("schemaVersion", "key", "model", "text", "ids", "meta", "tokens", "layers", "predictions", "causal")
_TOKEN_ORDER = ("id", "text", "display", "spoken")
_ENTRY_ORDER = ("text", "ids", "file", "nTokens")


class MissingTrace(StoreError, LookupError):
    def __init__(self, model: str, text: str, ids: tuple[int, ...] | None = None, root: Path | None = None):
        self.model, self.text, self.ids, self.root = model, text, ids, root
        super().__init__(model, text)

    def __str__(self) -> str:
        what = f"{self.text!r}" + (f" (ids {list(self.ids)[:8]}…)" if self.ids else "")
        where = f" in {self.root}" if self.root else ""
        return f"no trace of {what} for model {self.model!r}{where}; run `python -m generator traces` (make traces)"


@functools.total_ordering
@dataclass(frozen=True, eq=True)
class TraceRequest:
    """One sentence to trace for one model; `ids` for scoring texts given as token ids."""

    model: str
    text: str
    ids: tuple[int, ...] | None = None

    def __post_init__(self):
        if self.ids is not None and not isinstance(self.ids, tuple):
            object.__setattr__(self, "ids", tuple(int(i) for i in self.ids))

    def _order(self):
        return (self.model, self.text, self.ids is not None, self.ids or ())

    def __lt__(self, other):
        if not isinstance(other, TraceRequest):
            return NotImplemented
        return self._order() < other._order()


# ---------------------------------------------------------------- keys, rounding, serialisation


def trace_key(model: str, revision: str, schema_version: int, text: str, ids=None) -> str:
    payload = [model, revision, int(schema_version), text, None if ids is None else [int(i) for i in ids]]
    blob = json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return hashlib.sha256(blob).hexdigest()[:KEY_LENGTH]


def _ordered(d: dict, order) -> dict:
    """d with the keys of `order` first (in that order), then the rest sorted."""
    out = {k: d[k] for k in order if k in d}
    out.update({k: d[k] for k in sorted(d) if k not in out})
    return out


def _canonical_meta(meta: dict) -> dict:
    order = list(schema.META_FIELDS.values()) + ["standIn"]
    out = _ordered(meta, order)
    for k, v in out.items():
        if isinstance(v, dict):
            out[k] = dict(sorted(v.items()))
    return out


def canonical(doc: dict, key: str) -> dict:
    """The document as the file holds it: fixed key order, its key, the big arrays encoded
    (:func:`encode_layer`), every other float rounded to 5 significant digits."""
    out = dict(doc)
    out["key"] = key
    out["meta"] = _canonical_meta(doc["meta"])
    out["tokens"] = [_ordered(t, _TOKEN_ORDER) for t in doc["tokens"]]
    out["layers"] = [encode_layer(layer, doc["meta"], l) for l, layer in enumerate(doc["layers"])]
    out["predictions"] = [[_ordered(p, schema.PREDICTION_FIELDS) for p in row] for row in doc["predictions"]]
    out["causal"] = encode_causal(doc["causal"], doc["meta"], len(doc["tokens"]))
    return round_floats(_ordered(out, _DOC_ORDER))


def _entry_sort(e: dict):
    return (e["text"], "ids" in e, e.get("ids") or [])


INDEX_FIX = "run `make traces`: it retraces that sentence and rewrites the index"


def _said(text: str, ids) -> str:
    return repr(text[:60]) + (f" (ids {list(ids)[:8]}…)" if ids is not None else "")


def answers_request(trace: dict, path: Path, model: str, revision: str, text: str, ids) -> None:
    """The trace about to be returned for (model, text, ids) is that trace, of the index's revision
    and the current schema, whatever cache it came from; DamagedFile naming its file otherwise."""
    meta = trace.get("meta") or {}
    got = (trace.get("model"), meta.get("revision"), trace.get("schemaVersion"), trace.get("text"), ids_key(trace.get("ids")))
    if got != (model, revision, schema.SCHEMA_VERSION, text, ids_key(ids)):
        raise DamagedFile(path, f"holds the trace of {str(trace.get('text'))[:60]!r} ({trace.get('model')!r}, revision "
                                f"{str(meta.get('revision'))[:12]!r}), not of {_said(text, ids)} ({model!r}, revision "
                                f"{revision[:12]!r}) that the index points it to", INDEX_FIX)


# ---------------------------------------------------------------- the store


class TraceStore:
    """Traces under `root` (normally the repository's traces/)."""

    def __init__(self, root: Path | str):
        self.root = Path(root)
        self._index_cache: dict[str, tuple[tuple[int, int, int], dict]] = {}
        # path -> (its stat stamp, the checked trace): a build's figures share sentences, and a
        # page in `make serve` is rebuilt on every save; a changed file has a new stamp
        self._trace_cache: dict[Path, tuple[tuple[int, int, int], DecodedTrace]] = {}

    # ---- one writer at a time

    @contextmanager
    def writing(self, say=None):
        """Hold the store's writer lock (an exclusive flock on the store's folder itself, so no
        file is added to it) for the block. A second writer waits for the first, saying so once
        through `say`, so two `make traces` at once never interleave their index updates. The
        lock goes with the process, so a killed run never leaves it held. Once it is held, the
        temp files a killed writer left are removed (no writer can be using them)."""
        import fcntl

        self.root.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.root, os.O_RDONLY)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                if say:
                    say(f"{self.root}: another `make traces` is writing here; waiting for it to finish")
                fcntl.flock(fd, fcntl.LOCK_EX)
            self.remove_stray_temp()
            self._index_cache.clear()  # the other writer may have changed every index
            yield self
        finally:
            os.close(fd)  # releases the lock

    def remove_stray_temp(self) -> list[Path]:
        """The `.<name>.tmp` files a killed writer left in the store's model folders."""
        removed = []
        for folder in sorted(p for p in self.root.iterdir() if p.is_dir()) if self.root.is_dir() else []:
            for p in sorted(folder.glob(f".*{TMP_SUFFIX}")):
                if p.is_file():
                    p.unlink()
                    removed.append(p)
        return removed

    # ---- reading

    def index_path(self, model: str) -> Path:
        return self.root / check_model_name(model) / INDEX_NAME

    def _index(self, model: str) -> dict | None:
        """The model's index, checked (DamagedFile when it cannot be trusted), or None."""
        p = self.index_path(model)
        try:
            st = p.stat()
        except FileNotFoundError:
            return None
        stamp = stat_stamp(st)
        hit = self._index_cache.get(model)
        if hit and hit[0] == stamp:
            return hit[1]
        index = read_json(p, MAX_INDEX_BYTES)
        if isinstance(index, dict) and index.get("schemaVersion") != schema.SCHEMA_VERSION:
            return {"schemaVersion": index.get("schemaVersion")}  # an old store: treated as absent
        index = check_index(index, p, model)
        index["_byKey"] = {(e["text"], ids_key(e.get("ids"))): e for e in index.get("traces", [])}
        self._index_cache[model] = (stamp, index)
        return index

    def _current_index(self, model: str) -> dict | None:
        index = self._index(model)
        if index is None or index.get("schemaVersion") != schema.SCHEMA_VERSION:
            return None
        return index

    def models(self) -> list[str]:
        if not self.root.is_dir():
            return []
        return sorted(p.name for p in self.root.iterdir() if MODEL_NAME_RE.match(p.name) and (p / INDEX_NAME).is_file())

    def model_meta(self, model: str) -> dict | None:
        index = self._current_index(model)
        return None if index is None else dict(index["meta"])

    def entries(self, model: str) -> list[dict]:
        index = self._current_index(model)
        return [] if index is None else [dict(e) for e in index["traces"]]

    def lookup(self, model: str, text: str, ids=None, revision: str | None = None) -> Path | None:
        """The file of the indexed trace of (model, text, ids), current schema only; with
        `revision`, only if that trace was made from that revision."""
        index = self._current_index(model)
        if index is None:
            return None
        entry = index["_byKey"].get((text, ids_key(ids)))
        if entry is None:
            return None
        if revision is not None and entry["file"] != trace_key(model, revision, schema.SCHEMA_VERSION, text, ids) + ".json":
            return None
        path = self.root / model / entry["file"]
        # anything at the path counts (a FIFO, a link to /dev/zero): load() then says it is
        # damaged, naming the file, rather than the lesson being blamed for a missing trace
        return path if os.path.lexists(path) else None

    def _check_entry(self, model: str, text: str, ids, path: Path) -> str:
        """The index's revision, once the file it lists for (model, text, ids) is the one named by
        what it should hold: an entry that points at another sentence's file (or at one of another
        revision) is the index's mistake, found before any cache is asked. DamagedFile otherwise."""
        revision = self._current_index(model)["meta"]["revision"]
        want = trace_key(model, revision, schema.SCHEMA_VERSION, text, ids) + ".json"
        if path.name != want:
            raise DamagedFile(self.index_path(model), f"lists {path.name} for {_said(text, ids)}, but that sentence's trace "
                                                      f"of revision {schema.short_revision(revision)} is {want}", INDEX_FIX)
        return revision

    def listed_file(self, model: str, text: str, ids=None) -> Path | None:
        """:meth:`lookup`, for a reader that names the file without loading it (a notebook's data
        cell): None when not listed, DamagedFile when the index lists another sentence's file."""
        path = self.lookup(model, text, ids)
        if path is not None:
            self._check_entry(model, text, ids, path)
        return path

    def has(self, model: str, text: str, ids=None, revision: str | None = None) -> bool:
        return self.lookup(model, text, ids, revision) is not None

    def load(self, model: str, text: str, ids=None) -> dict:
        """The checked trace (:func:`check_trace`); MissingTrace or DamagedFile otherwise."""
        path = self.lookup(model, text, ids)
        if path is None:
            # listed in the index but gone from the folder: the store is damaged, not the lesson
            # (lookup and has() still say "not traced", so `make traces` writes it again)
            index = self._current_index(model)
            entry = index and index["_byKey"].get((text, ids_key(ids)))
            if entry is not None:
                raise DamagedFile(self.index_path(model), f"lists {entry['file']} for {text[:60]!r}, and that file is not there")
            raise MissingTrace(model, text, ids_key(ids), self.root)
        revision = self._check_entry(model, text, ids, path)
        stamp = regular_file_stamp(path)
        kept = self._trace_cache.get(path)
        if stamp is not None and kept is not None and kept[0] == stamp:
            trace = kept[1]
        else:
            raw = read_bytes(path, MAX_TRACE_BYTES)
            trace = check_trace(decode(parse_json(raw, path), path), path, model, text, ids)
            trace.raw = raw  # the download copy is the file itself: kept, not read again
            if stamp is not None:
                self._trace_cache[path] = (stamp, trace)
        answers_request(trace, path, model, revision, text, ids)
        return trace

    def usable(self, model: str, text: str, ids=None, revision: str | None = None) -> bool:
        """Whether the trace is there, of `revision`, and loads and checks; a damaged one is
        False (so `make traces` retraces it)."""
        if not self.has(model, text, ids, revision):
            return False
        try:
            self.load(model, text, ids)
        except DamagedFile:
            return False
        return True

    def rebuild_index(self, model: str) -> int:
        """Rewrite the model's index from the trace files that read and check, newest revision
        first; returns how many it lists. For a damaged index.json."""
        folder = self.root / check_model_name(model)
        self.index_path(model).unlink(missing_ok=True)
        self._index_cache.pop(model, None)
        found = []
        for p in sorted(folder.glob("*.json")) if folder.is_dir() else []:
            if not TRACE_FILE_RE.match(p.name):
                continue
            try:
                doc = decode(read_json(p, MAX_TRACE_BYTES), p)
                doc = check_trace(doc, p, model, doc.get("text") if isinstance(doc, dict) else "", doc.get("ids") if isinstance(doc, dict) else None)
                key = trace_key(model, doc["meta"]["revision"], schema.SCHEMA_VERSION, doc["text"], doc.get("ids"))
            except (DamagedFile, KeyError, TypeError):
                continue
            if f"{key}.json" == p.name:
                found.append((p.stat().st_mtime_ns, doc, p.name))
        if not found:
            return 0
        revision = max(found, key=lambda f: f[0])[1]["meta"]["revision"]
        for _, doc, name in sorted(found, key=lambda f: f[2]):
            if doc["meta"]["revision"] == revision:
                self._add_to_index(doc, name)
        return len(self.entries(model))

    def load_request(self, request: TraceRequest) -> dict:
        return self.load(request.model, request.text, request.ids)

    # ---- writing

    def encode(self, doc: dict) -> tuple[str, bytes]:
        """(key, file bytes) of a trace document as :func:`generator.model.tracing.trace` returns it."""
        meta = doc["meta"]
        key = trace_key(doc["model"], meta["revision"], doc["schemaVersion"], doc["text"], doc.get("ids"))
        return key, dumps(canonical(doc, key))

    def write(self, doc: dict) -> Path:
        """Write one trace, then the model's index. Returns the trace's path."""
        model = check_model_name(doc["model"])
        if doc.get("schemaVersion") != schema.SCHEMA_VERSION:
            raise StoreError(f"trace has schemaVersion {doc.get('schemaVersion')}, store writes {schema.SCHEMA_VERSION}")
        if doc["meta"].get("model") != model:
            raise StoreError(f"trace of model {model!r} carries meta of {doc['meta'].get('model')!r}")
        key, data = self.encode(doc)
        path = self.root / model / f"{key}.json"
        atomic_write(path, data)
        self._add_to_index(doc, path.name)
        return path

    def _add_to_index(self, doc: dict, file: str) -> None:
        model, meta = doc["model"], _canonical_meta(doc["meta"])
        revision = meta["revision"]
        old = self._index(model)
        entries = []
        if old is not None and old.get("schemaVersion") == schema.SCHEMA_VERSION:
            for e in old.get("traces", []):
                # keep only entries made from this revision whose files still exist
                want = trace_key(model, revision, schema.SCHEMA_VERSION, e["text"], e.get("ids")) + ".json"
                if e["file"] == want and (self.root / model / e["file"]).is_file():
                    entries.append({k: e[k] for k in _ENTRY_ORDER if k in e})
        new = {"text": doc["text"]}
        if doc.get("ids") is not None:
            new["ids"] = [int(i) for i in doc["ids"]]
        new["file"] = file
        new["nTokens"] = len(doc["tokens"])
        entries = [e for e in entries if (e["text"], ids_key(e.get("ids"))) != (new["text"], ids_key(new.get("ids")))]
        entries.append(new)
        entries.sort(key=_entry_sort)
        index = {"schemaVersion": schema.SCHEMA_VERSION, "model": model, "meta": meta, "traces": entries}
        atomic_write(self.index_path(model), dumps(index))
        self._index_cache.pop(model, None)

    def unused(self, model: str, used) -> list[dict]:
        """Index entries whose (text, ids) is not in `used` (a set of TraceRequest-like keys)."""
        keep = {(r.text, ids_key(r.ids)) for r in used}
        return [e for e in self.entries(model) if (e["text"], ids_key(e.get("ids"))) not in keep]

    def forget(self, model: str, entries: list[dict]) -> list[Path]:
        """Drop `entries` from the model's index (atomically), then delete their files."""
        index = self._current_index(model)
        if index is None or not entries:
            return []
        gone = {(e["text"], ids_key(e.get("ids"))) for e in entries}
        kept = [{k: e[k] for k in _ENTRY_ORDER if k in e} for e in index["traces"]
                if (e["text"], ids_key(e.get("ids"))) not in gone]
        new = {"schemaVersion": schema.SCHEMA_VERSION, "model": model, "meta": index["meta"], "traces": kept}
        atomic_write(self.index_path(model), dumps(new))  # the index first: it never lists a deleted file
        self._index_cache.pop(model, None)
        removed = []
        for e in entries:
            p = self.root / model / e["file"]
            if p.is_file():
                p.unlink()
                removed.append(p)
        return removed

    def prune(self, model: str) -> list[Path]:
        """Remove trace files (`<key>.json`) the index does not list (older revisions) and stray
        temp files. Other files in the folder (heads.json, index.json) are left alone."""
        folder = self.root / model
        if not folder.is_dir() or self._current_index(model) is None:
            return []
        listed = {e["file"] for e in self.entries(model)} | {INDEX_NAME}
        removed = []
        for p in sorted(folder.iterdir()):
            stray_tmp = p.name.startswith(".") and p.name.endswith(TMP_SUFFIX)
            if p.is_file() and (stray_tmp or (TRACE_FILE_RE.match(p.name) and p.name not in listed)):
                p.unlink()
                removed.append(p)
        return removed
