"""The store stage: traces on disk, one folder per model, with an index (traces/README.md).

    files          sizes, atomic writes, compact JSON, the errors of a damaged file
    codec          int16 arrays in and out of a trace file (schema 4)
    checks         what a loaded trace or index must be, checked before anything uses it
    traces         TraceStore: keys, the index, load, write, prune
    vectors_file   vectors.json: the embedding figures' numbers
    circuits_file  circuits.json and patching.json: a model's causal numbers
    splits_file    splits.json: each attention score split into the stream's parts

No torch here: the site build imports this package. The names below are the stage's public face;
each module's own helpers are imported from that module.
"""

from .files import INDEX_NAME, KEY_RE, MAX_TRACE_BYTES, TRACE_FILE_RE, DamagedFile, StoreError, atomic_write, dumps, read_json, round_floats, round_sig
from .traces import MissingTrace, TraceRequest, TraceStore, trace_key

__all__ = [
    "INDEX_NAME", "KEY_RE", "MAX_TRACE_BYTES", "TRACE_FILE_RE", "DamagedFile", "StoreError", "atomic_write", "dumps",
    "read_json", "round_floats", "round_sig", "MissingTrace", "TraceRequest", "TraceStore", "trace_key",
]
