"""Asset and site steps: `python -m generator assets` and `python -m generator site`.

`assets` writes content/assets/generated/ (CONTRACT.md, "Files in the built site"):
plotly-cartesian.min.js (Plotly's cartesian partial bundle, vendored in generator/assets/vendor/
and checked against its sha256 there; `make vendor` refreshes it), colorscale.js (render.format.CIVIDIS as COURSE_COLORSCALE),
course.js and course.css (copied from generator/assets/), and for every trace the lessons use a
download copy `traces/<model>/<key>.json` and its heavy fields `traces/<model>/<key>.js`. A file
is rewritten only when its bytes change, so `mkdocs serve` does not rebuild in a loop.

`site` first parses every lesson (lessons.pages.check_lessons: the first mistake stops it with
its line), writes the assets into a temporary folder (not content/), runs MkDocs into another
temporary folder next to site_dir, puts the fresh assets into the built site, and only when all
of that succeeds moves the site into place and brings content/assets/generated/ up to date (for
`mkdocs serve`): a failed build writes nothing, neither site_dir nor content/.

No torch here.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import sys
from pathlib import Path

from . import build_log, downloads, heads, schema, store_codec
from .lessons import pages
from .lessons.errors import LessonError
from .lessons.source import GENERATED, iter_markdown
from .render import format as fmt
from .render.context import WEIGHT_DECIMALS, trace_weights
from .store import StoreError, TraceStore

PACKAGE_ASSETS = Path(__file__).resolve().parent / "assets"
COPIED = ("course.js", "course.css")
VENDOR = PACKAGE_ASSETS / "vendor"
PLOTLY_JS = "plotly-cartesian.min.js"  # its name in the site
# The stored file's encoded fields that a heavy part carries as they are (traces/README.md).
ENCODED_PART_FIELDS = ("q", "k", "v", "scores", "out")
STALE = ("plotly.min.js",)  # generated files of older builds, removed so the site never ships them


def write_if_changed(path: Path, data: bytes) -> bool:
    """Write `data` unless the file already holds exactly these bytes. True when written."""
    try:
        if path.read_bytes() == data:
            return False
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)
    return True


def plotly_js() -> bytes:
    """The vendored cartesian partial bundle, after checking its sha256 against VENDOR.json."""
    manifest = json.loads((VENDOR / "VENDOR.json").read_text(encoding="utf-8"))
    data = (VENDOR / manifest["file"]).read_bytes()
    if hashlib.sha256(data).hexdigest() != manifest["sha256"]:
        raise RuntimeError(f"generator/assets/vendor/{manifest['file']} does not match the sha256 in VENDOR.json; run make vendor")
    return data


# The page's weights (render.context.trace_weights: 4 decimals) as int16 × 0.0001, so that decoding
# gives back exactly the doubles the renderer printed its numbers from.
PAGE_WEIGHTS_SCALE = 10.0 ** -WEIGHT_DECIMALS


def encoded_part(trace: dict, stored: dict | None) -> dict | None:
    """What course.js needs of a trace after the first paint, encoded (CONTRACT.md, "Files"):
    the stored file's own q, k, v, scores and out objects (so decoding gives the store loader's
    numbers), every head's page weights, and the factor scaledMasked is scores times. None when
    `stored` is not this trace's schema-3 file. Only numbers and the key: no text of the trace."""
    try:
        if stored.get("schemaVersion") != schema.SCHEMA_VERSION or stored.get("key") != trace["key"]:
            return None
        d = int(stored["meta"]["headDim"])
        weights = trace_weights(trace)  # (layer, head, query, key)
        layers = [
            {"heads": [{**{f: head[f] for f in ENCODED_PART_FIELDS},
                        "weights": store_codec.encode_array(weights[l, h], tril=True, scale=PAGE_WEIGHTS_SCALE)}
                       for h, head in enumerate(layer["heads"])]}
            for l, layer in enumerate(stored["layers"])
        ]
    except (AttributeError, TypeError, KeyError, ValueError, IndexError):
        return None
    return {"schemaVersion": stored["schemaVersion"], "key": stored["key"],
            "meta": {"headDim": d, "scaledMaskedFactor": d**-0.5}, "layers": layers}


def plain_part(trace: dict) -> dict:
    """The decoded fields as nested lists (a trace held only in memory, as tests make them)."""
    weights = trace_weights(trace).tolist()  # (layer, head, query, key)
    return {"layers": [
        {"heads": [{**{f: h[f] for f in schema.HEAVY_HEAD_FIELDS if f in h}, "weights": weights[l][i]}
                   for i, h in enumerate(layer["heads"])], "attnConcat": layer.get("attnConcat")}
        for l, layer in enumerate(trace["layers"])
    ]}


def heavy_part_js(trace: dict, stored_bytes: bytes | None = None) -> bytes:
    """`window.courseTraceParts["<key>"] = …`: what the figures load after their first paint.
    Encoded (a quarter of the plain size) when `stored_bytes` is the trace's schema-3 file,
    else plain."""
    stored = None
    if stored_bytes is not None:
        try:
            stored = json.loads(stored_bytes)
        except ValueError:
            stored = None
    part = encoded_part(trace, stored) or plain_part(trace)
    body = fmt.json_for_script(part, separators=(",", ":"))
    key = json.dumps(str(trace["key"]))
    return (
        "window.courseTraceParts = window.courseTraceParts || {};\n"
        f"window.courseTraceParts[{key}] = {body};\n"
    ).encode("ascii")


def _trace_bytes(trace: dict, traces_dir: Path | None) -> bytes:
    """The store's file bytes when we can find them, else the trace as compact JSON."""
    if traces_dir is not None:
        p = Path(traces_dir) / trace["model"] / f"{trace['key']}.json"
        if p.is_file():
            return p.read_bytes()
    return (json.dumps(trace, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")


def trace_asset_paths(trace: dict, generated: Path) -> tuple[Path, Path]:
    folder = generated / "traces" / trace["model"]
    return folder / f"{trace['key']}.json", folder / f"{trace['key']}.js"


def write_trace_assets(trace: dict, generated: Path, traces_dir: Path | None = None, only_missing: bool = False) -> list[Path]:
    jpath, jspath = trace_asset_paths(trace, generated)
    written = []
    if not (only_missing and jpath.is_file()):
        if write_if_changed(jpath, _trace_bytes(trace, traces_dir)):
            written.append(jpath)
    if not (only_missing and jspath.is_file()):
        if write_if_changed(jspath, heavy_part_js(trace, _trace_bytes(trace, traces_dir))):
            written.append(jspath)
    return written


def static_assets() -> dict[str, bytes]:
    files = {PLOTLY_JS: plotly_js(), "colorscale.js": fmt.colorscale_js().encode("utf-8")}
    for name in COPIED:
        src = PACKAGE_ASSETS / name
        if src.is_file():
            files[name] = src.read_bytes()
    return files


def write_static_assets(generated: Path, only_missing: bool = False) -> list[Path]:
    written = []
    for name in STALE:
        (generated / name).unlink(missing_ok=True)
    for name, data in static_assets().items():
        path = generated / name
        if only_missing and path.is_file():
            continue
        if write_if_changed(path, data):
            written.append(path)
    return written


def used_traces(content_dir: Path, traces_dir: Path) -> list[tuple[str, str, tuple[int, ...] | None]]:
    """(model, text, ids) of every trace a lesson figure shows: each figure's sentences, and the
    example traces that heads.json names for each scoreboard's model (ids for random tokens).
    A page with a broken block is skipped here: the site build reports the mistake with its file
    and line."""
    seen: dict[tuple, None] = {}
    boards: dict[str, None] = {}
    for path in iter_markdown(content_dir):
        try:
            found = pages.parse_file(path)
        except (LessonError, OSError, UnicodeDecodeError):
            continue
        for d in found:
            for model, text in pages.directive_sentences(d):
                seen.setdefault((model, text, None), None)
            if d.kind == "scoreboard":
                boards.setdefault(d.model, None)
    for model in boards:
        for r in heads.example_requests(traces_dir, model):
            seen.setdefault((r.model, r.text, r.ids), None)
    return list(seen)


def write_assets(content_dir: Path | str = "content", traces_dir: Path | str = "traces", out=None, generated: Path | None = None) -> list[Path]:
    """Everything under content_dir/assets/generated/ (or under `generated`). Returns the files
    written."""
    content_dir, traces_dir = Path(content_dir), Path(traces_dir)
    generated = content_dir / GENERATED if generated is None else Path(generated)
    written = write_static_assets(generated)
    for name in COPIED:
        if not (PACKAGE_ASSETS / name).is_file():
            print(f"warning: generator/assets/{name} is not written yet; pages will load without it", file=out or sys.stderr)
    store = TraceStore(traces_dir)
    keep: set[Path] = set()
    for model, text, ids in used_traces(content_dir, traces_dir):
        try:
            trace = store.load(model, text, ids)
        except LookupError:
            continue  # the build reports it, with the page's line
        keep.update(trace_asset_paths(trace, generated))
        written += write_trace_assets(trace, generated, traces_dir)
    # remove download copies and parts no lesson uses any more
    tdir = generated / "traces"
    if tdir.is_dir():
        for p in sorted(tdir.rglob("*")):
            if p.is_file() and p not in keep:
                p.unlink()
        for d in sorted((p for p in tdir.rglob("*") if p.is_dir()), reverse=True):
            if not any(d.iterdir()):
                d.rmdir()
    return written


# ---------------------------------------------------------------- site


def mdx_option(cfg, name: str, default: str) -> str:
    conf = (cfg.get("mdx_configs") or {}).get("generator.markdown.course") or {}
    return conf.get(name, default)


def setup_logging() -> None:
    logger = logging.getLogger("mkdocs")
    if not any(getattr(h, "_course", False) for h in logger.handlers):
        h = logging.StreamHandler(sys.stderr)
        h.setFormatter(logging.Formatter("%(levelname)-8s-  %(message)s"))
        h.setLevel(logging.INFO)
        h._course = True  # type: ignore[attr-defined]
        logger.addHandler(h)
        logger.setLevel(logging.INFO)


def build_site(config_file: str = "mkdocs.yml", strict: str | bool = False, site_dir: str | None = None, with_downloads: bool = True) -> int:
    """assets + `mkdocs build` (+ the offline downloads, generator/downloads.py) into a temporary
    folder, moved over site_dir on success. Returns an exit status; on failure the previous
    site_dir is left as it was. `strict`: False; True or "1" (any warning fails, a pending figure
    included); or model names, "tiny" (any warning fails but a pending figure of another model,
    which stays a warning; build_log.strict_models)."""
    from mkdocs.commands import build as mkbuild
    from mkdocs.config import load_config
    from mkdocs.exceptions import Abort, MkDocsException

    setup_logging()
    try:
        failing = build_log.strict_models(strict)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        cfg = load_config(config_file=config_file, strict=failing is not None)
    except (Abort, MkDocsException) as exc:  # MkDocs has logged what is wrong with the configuration
        print(f"error: {config_file}: {exc}", file=sys.stderr)
        return 1
    final = Path(site_dir or cfg["site_dir"]).resolve()
    docs = Path(cfg["docs_dir"])
    traces_dir = mdx_option(cfg, "traces_dir", "traces")
    tmp = final.with_name(f".{final.name}.building-{os.getpid()}")
    stage = final.with_name(f".{final.name}.assets-{os.getpid()}")  # the assets, until the build succeeds
    for folder in (tmp, stage):
        shutil.rmtree(folder, ignore_errors=True)
    try:
        pages.check_lessons(docs)
        write_assets(docs, traces_dir, generated=stage)
    except (LessonError, StoreError, heads.StandInRefused) as exc:  # one line each, naming the file
        shutil.rmtree(stage, ignore_errors=True)
        print(f"error: {exc}", file=sys.stderr)
        return 1
    # the extension writes a missing trace asset into the stage too, never into content/
    cfg["mdx_configs"].setdefault("generator.markdown.course", {})["assets_dir"] = str(stage)
    cfg["site_dir"] = str(tmp)
    try:
        with build_log.grouped_warnings() as held:
            mkbuild.build(cfg)
        held.report()
        failed = sorted(set(held.models()) & (failing or set()))
        if failed:
            raise Abort(f"STRICT={strict}: figures of {', '.join(failed)} are pending")
        shutil.rmtree(tmp / GENERATED, ignore_errors=True)  # MkDocs copied content/'s, maybe stale
        shutil.copytree(stage, tmp / GENERATED)
    except (Abort, MkDocsException, SystemExit) as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.rmtree(stage, ignore_errors=True)
        msg = str(exc) or type(exc).__name__
        print(f"error: the site was not built ({msg}); {final} is unchanged", file=sys.stderr)
        return 1
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.rmtree(stage, ignore_errors=True)
        raise
    if with_downloads:
        try:
            downloads.build_downloads(tmp, final.parent / "downloads", site_url=cfg.get("site_url"))
        except Exception as exc:  # whatever fails, the old site must stay and the reason be said
            shutil.rmtree(tmp, ignore_errors=True)
            shutil.rmtree(stage, ignore_errors=True)
            print(f"error: the offline downloads failed ({exc}); {final} is unchanged", file=sys.stderr)
            return 1
    old = final.with_name(f".{final.name}.old-{os.getpid()}")
    if final.exists():
        os.replace(final, old)
    os.replace(tmp, final)
    shutil.rmtree(old, ignore_errors=True)
    try:
        sync_generated(stage, docs / GENERATED)
    except OSError as exc:  # a read-only checkout still builds; `mkdocs serve` makes its own
        print(f"warning: could not update {docs / GENERATED}: {exc}", file=sys.stderr)
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    print(f"site written to {final}", file=sys.stderr)
    return 0


def sync_generated(stage: Path, generated: Path) -> None:
    """Make `generated` hold exactly the files of `stage` (a file is rewritten only when its bytes
    change, so `mkdocs serve` does not rebuild in a loop)."""
    files = {p.relative_to(stage) for p in stage.rglob("*") if p.is_file()}
    for rel in sorted(files):
        write_if_changed(generated / rel, (stage / rel).read_bytes())
    if generated.is_dir():
        for p in sorted(generated.rglob("*"), reverse=True):
            if p.is_file() and p.relative_to(generated) not in files:
                p.unlink()
            elif p.is_dir() and not any(p.iterdir()):
                p.rmdir()


# ---------------------------------------------------------------- command line


def add_parsers(sub, engines: dict | None = None) -> None:
    """`assets` and `site`; `engines` maps another --engine's name to its build function
    (zensical_build.build_zensical), called as f(config_file, strict=, site_dir=)."""
    engines = engines or {}
    p = sub.add_parser("assets", help="write content/assets/generated/ (Plotly, course.js/css, colour scale, trace files)")
    p.add_argument("--content", default="content", help="the lessons' folder (docs_dir)")
    p.add_argument("--traces", default="traces", help="the trace store")
    p.set_defaults(func=_cmd_assets)

    p = sub.add_parser("site", help="assets + mkdocs build into build/site (the old site stays if the build fails)")
    p.add_argument("--strict", nargs="?", const="1", default=None, metavar="MODELS",
                   help="fail on warnings: --strict (make site STRICT=1) fails on any pending figure too; "
                        "--strict=tiny (STRICT=tiny) on a pending tiny figure, GPT-2's stay warnings")
    p.add_argument("-f", "--config-file", default="mkdocs.yml")
    p.add_argument("-d", "--site-dir", default=None, help="default: site_dir of mkdocs.yml")
    p.add_argument("--no-downloads", action="store_true", help="skip the offline zip and one-file chapters")
    p.add_argument("--engine", choices=("mkdocs", *engines), default="mkdocs",
                   help="zensical (make site ENGINE=zensical): build with Zensical into build/zensical-site "
                        "(generator/zensical_build.py); build/site is not touched")
    p.set_defaults(func=_cmd_site, engines=engines)


def _cmd_assets(args) -> int:
    try:
        written = write_assets(args.content, args.traces)
    except LessonError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"assets: {len(written)} file(s) written under {Path(args.content) / GENERATED}", file=sys.stderr)
    return 0


def _cmd_site(args) -> int:
    if args.engine != "mkdocs":  # another engine's build (cli.py passes it: it sits above this module)
        return args.engines[args.engine](args.config_file, strict=args.strict, site_dir=args.site_dir)
    return build_site(args.config_file, strict=args.strict, site_dir=args.site_dir, with_downloads=not args.no_downloads)
