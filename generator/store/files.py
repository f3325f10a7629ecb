"""The trace store's files as bytes: names, size caps, the one-line DamagedFile, checked JSON reads,
5-significant-digit rounding, deterministic JSON and atomic writes. No numpy, no torch."""

from __future__ import annotations

import json
import math
import os
import re
import stat
import tempfile
from pathlib import Path

from .. import schema

INDEX_NAME = "index.json"


TMP_SUFFIX = ".tmp"


KEY_LENGTH = 12


KEY_RE = re.compile(r"^[0-9a-f]{%d}$" % KEY_LENGTH)


TRACE_FILE_RE = re.compile(r"^[0-9a-f]{%d}\.json$" % KEY_LENGTH)  # other files (heads.json) are not traces


MODEL_NAME_RE = re.compile(r"^[a-z0-9][a-z0-9-]{0,31}$")  # a folder name under traces/, never a path


MAX_TRACE_BYTES = 20 * 1024 * 1024  # a trace over this is refused: it would go into every page's download


MAX_INDEX_BYTES = 5 * 1024 * 1024


REPAIR_FIX = "run `make traces`: it retraces what it can and rebuilds the index"


class StoreError(Exception):
    pass


class DamagedFile(StoreError):
    """A file of the store that cannot be trusted. ``str()`` is one line: path, problem, fix."""

    def __init__(self, path: Path | str, problem: str, fix: str = REPAIR_FIX):
        self.path, self.problem, self.fix = Path(path), problem, fix
        super().__init__(f"{path}: {problem}. Fix: {fix}")


def _refuse_constant(name: str):
    raise ValueError(f"{name} is not a number JSON allows")


def stat_stamp(st: os.stat_result) -> tuple[int, int, int]:
    """What a read-once cache keys a file's contents on: (inode, size, mtime in ns). A file
    renamed over it (an atomic write) or edited in place gets a new one."""
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def regular_file_stamp(path: Path) -> tuple[int, int, int] | None:
    """stat_stamp of the regular file at `path`, else None (missing, a FIFO, a device: never
    cached, so that its reader says what is wrong with it)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return stat_stamp(st) if stat.S_ISREG(st.st_mode) else None


def read_bytes(path: Path, limit: int, fix: str = REPAIR_FIX) -> bytes:
    """The bytes of the regular file at `path` (a symlink is followed), or DamagedFile: a device,
    FIFO or folder (which could block or never end), or over `limit` bytes. At most limit + 1
    bytes are read, so a file that grows while it is read cannot run past the limit either."""
    try:
        st = path.stat()
    except OSError as e:
        raise DamagedFile(path, "is missing" if isinstance(e, FileNotFoundError) else f"cannot be read ({e.strerror or e})", fix) from None
    if not stat.S_ISREG(st.st_mode):
        raise DamagedFile(path, "is not a regular file (a folder, device or FIFO is in its place)", fix)
    if st.st_size > limit:
        raise DamagedFile(path, f"is {st.st_size:,} bytes, over the limit of {limit:,}", fix)
    try:
        with open(path, "rb") as f:
            data = f.read(limit + 1)
    except OSError as e:
        raise DamagedFile(path, f"cannot be read ({e.strerror or e})", fix) from None
    if len(data) > limit:
        raise DamagedFile(path, f"grew past the limit of {limit:,} bytes while it was read", fix)
    return data


def parse_json(data: bytes, path: Path, fix: str = REPAIR_FIX):
    """The JSON value in `data` (read from `path`), or DamagedFile: not UTF-8, not JSON (a
    truncated file), or holding NaN/Infinity."""
    try:
        return json.loads(data.decode("utf-8"), parse_constant=_refuse_constant)
    except UnicodeDecodeError:
        raise DamagedFile(path, "is not UTF-8 text", fix) from None
    except RecursionError:  # arrays or objects nested thousands deep: no trace is
        raise DamagedFile(path, "is nested too deep to be a trace (is it damaged?)", fix) from None
    except ValueError as e:
        msg = str(e).splitlines()[0] if str(e) else "not JSON"
        raise DamagedFile(path, f"is not valid JSON, perhaps cut short ({msg[:120]})", fix) from None


def read_json(path: Path, limit: int, fix: str = REPAIR_FIX):
    """The JSON value in `path`: :func:`read_bytes`, then :func:`parse_json`."""
    return parse_json(read_bytes(path, limit, fix), path, fix)


def read_checked(path: Path, cache: dict, limit: int, fix: str, make):
    """`make(doc)` of the JSON file at `path` (it checks the document and wraps it), or None where
    there is no file; kept in `cache` while the file's stat stamp is the same, so a build reads and
    checks each per-model file once."""
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    except OSError as e:
        raise DamagedFile(path, f"cannot be read ({e.strerror or e})", fix) from None
    stamp = stat_stamp(st)
    hit = cache.get(path)
    if hit and hit[0] == stamp:
        return hit[1]
    out = make(read_json(path, limit, fix))
    cache[path] = (stamp, out)
    return out


def check_model_name(model: str) -> str:
    if not isinstance(model, str) or not MODEL_NAME_RE.match(model):
        raise StoreError(f"{model!r} is not a model name (lowercase letters, digits and '-', at most 32)")
    return model


# No number a trace or a per-model file holds comes near this (the models' activations, logits,
# losses and scores stay below 1e5): one beyond it is a damaged file, not a model's.
MAX_MAGNITUDE = 1e9
BEYOND = "beyond ±1e9, which no model's trace holds"


def plausible(x) -> bool:
    """x is a finite number (not a bool) within ±MAX_MAGNITUDE."""
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) and abs(x) <= MAX_MAGNITUDE


def plausible_array(a) -> bool:
    """Every value of the numpy array `a` is finite and within ±MAX_MAGNITUDE."""
    import numpy as np

    return bool(np.isfinite(a).all()) and float(np.abs(a).max(initial=0.0)) <= MAX_MAGNITUDE


def ids_key(ids) -> tuple[int, ...] | None:
    return None if ids is None else tuple(int(i) for i in ids)


def round_sig(x: float, digits: int = schema.SIGNIFICANT_DIGITS) -> float:
    """x to `digits` significant digits, as float(f"{x:.{digits}g}"); -0.0 becomes 0.0."""
    if not math.isfinite(x):
        raise ValueError(f"non-finite float {x!r} in a trace (masked cells must be None)")
    return float(f"{x:.{digits}g}") + 0.0


def round_floats(obj, digits: int = schema.SIGNIFICANT_DIGITS):
    """A copy of a JSON-like value with every float rounded by :func:`round_sig`."""
    fmt = f".{digits}g"
    if isinstance(obj, float):
        return round_sig(obj, digits)
    if isinstance(obj, list):
        if obj and all(type(x) is float for x in obj):  # the hot path: a row of floats
            try:
                out = [float(format(x, fmt)) + 0.0 for x in obj]
            except (ValueError, OverflowError):
                out = [round_sig(x, digits) for x in obj]
            if any(math.isinf(x) or math.isnan(x) for x in out):
                raise ValueError("non-finite float in a trace (masked cells must be None)")
            return out
        return [round_floats(x, digits) for x in obj]
    if isinstance(obj, dict):
        return {k: round_floats(v, digits) for k, v in obj.items()}
    return obj


def dumps(obj) -> bytes:
    """Compact, deterministic JSON, UTF-8, newline-terminated."""
    return (json.dumps(obj, ensure_ascii=False, separators=(",", ":"), allow_nan=False) + "\n").encode("utf-8")


def atomic_write(path: Path, data: bytes) -> None:
    """Write `data` to `path` so that readers see the old file or the new one, never a part."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=TMP_SUFFIX, dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    try:  # make the rename itself durable
        dfd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
    except OSError:
        pass


def write_rounded(path: Path, doc: dict, check) -> Path:
    """A per-model file: `doc` rounded to the store's significant digits, checked by
    `check(doc, path)` and written atomically; a document that fails its own check is never written."""
    doc = round_floats(doc)
    check(doc, path)
    atomic_write(path, dumps(doc))
    return path
