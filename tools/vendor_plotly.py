#!/usr/bin/env python3
"""Refresh the vendored Plotly bundle from the npm registry: `make vendor`.

    python tools/vendor_plotly.py            # fetch, check, write generator/assets/vendor/
    python tools/vendor_plotly.py --check    # fetch and compare only; writes nothing
    python tools/vendor_plotly.py --version 4.1.1

The course ships Plotly's official cartesian partial bundle, `plotly.js-cartesian-dist-min`
(heatmap, bar, scatter and nine more trace types; 1.5 MB instead of the full 4.7 MB
`plotly.min.js` of the Python package), at the plotly.js version that the pinned Python `plotly`
package bundles (`plotly.offline.get_plotlyjs_version()`), so that the Python side and the
browser side agree. The bundle, its LICENSE and VENDOR.json (package, version, sha256, the npm
tarball and its integrity, the trace types it registers) are committed, so `make site` needs
only pip; only this script talks to npm.

What it checks before it writes anything:

* the tarball that `npm pack` fetched has the sha512 the registry publishes (`npm view ... dist.integrity`);
* the bundle's header names the same version;
* when VENDOR.json already records this version, the fetched file has the recorded sha256 (a
  registry file that changed under the same version is an error, never a silent update).

Needs `npm` on PATH (Node's client; only the npm registry is contacted) and the site's
dependencies (`plotly`) in the interpreter that runs it.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import re
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
VENDOR = REPO / "generator" / "assets" / "vendor"
MANIFEST = VENDOR / "VENDOR.json"
PACKAGE = "plotly.js-cartesian-dist-min"
BUNDLE = "plotly-cartesian.min.js"
LICENSE = "LICENSE"
TRACE_RE = re.compile(rb'moduleType:"trace",name:"([a-z0-9]+)"')


def trace_types(bundle: bytes) -> list[str]:
    """The trace types a minified plotly.js bundle registers (its trace modules' `name`)."""
    return sorted({m.decode("ascii") for m in TRACE_RE.findall(bundle)})


def python_plotlyjs_version() -> str:
    from plotly.offline import get_plotlyjs_version

    return get_plotlyjs_version()


def npm(*args: str, cwd: Path | None = None) -> str:
    try:
        p = subprocess.run(["npm", *args], cwd=cwd, check=True, capture_output=True, text=True)
    except FileNotFoundError:
        raise SystemExit("vendor: npm is not on PATH (apt-get install npm)")
    except subprocess.CalledProcessError as e:
        raise SystemExit(f"vendor: npm {' '.join(args)} failed: {e.stderr.strip().splitlines()[-1:]}")
    return p.stdout


def fetch(version: str, tmp: Path) -> dict:
    spec = f"{PACKAGE}@{version}"
    view = json.loads(npm("view", spec, "version", "license", "dist", "--json"))
    if view.get("version") != version:
        raise SystemExit(f"vendor: the registry has no {spec}")
    integrity = view["dist"]["integrity"]
    packed = json.loads(npm("pack", spec, "--json", "--pack-destination", str(tmp), cwd=tmp))[0]
    tgz = (tmp / packed["filename"]).read_bytes()
    algo, _, want = integrity.partition("-")
    got = base64.b64encode(hashlib.new(algo, tgz).digest()).decode("ascii")
    if got != want:
        raise SystemExit(f"vendor: {packed['filename']} does not match the registry's {algo} ({integrity})")
    with tarfile.open(tmp / packed["filename"], "r:gz") as tf:
        files = {name: tf.extractfile(f"package/{name}").read() for name in (BUNDLE, LICENSE)}
    header = files[BUNDLE][:200].decode("utf-8", "replace")
    if f"v{version}" not in header:
        raise SystemExit(f"vendor: {BUNDLE} of {spec} does not say v{version} in its header: {header!r}")
    return {
        "files": files,
        "manifest": {
            "package": PACKAGE,
            "version": version,
            "license": view.get("license"),
            "file": BUNDLE,
            "licenseFile": LICENSE,
            "bytes": len(files[BUNDLE]),
            "sha256": hashlib.sha256(files[BUNDLE]).hexdigest(),
            "licenseSha256": hashlib.sha256(files[LICENSE]).hexdigest(),
            "tarball": view["dist"]["tarball"],
            "integrity": integrity,
            "traceTypes": trace_types(files[BUNDLE]),
            "why": "the cartesian partial bundle at the plotly.js version of the pinned Python plotly package; "
                   "refresh with `make vendor` (tools/vendor_plotly.py)",
        },
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--version", help="plotly.js version (default: the one the Python plotly package ships)")
    ap.add_argument("--check", action="store_true", help="compare with the vendored files; write nothing")
    args = ap.parse_args(argv)
    version = args.version or python_plotlyjs_version()
    old = json.loads(MANIFEST.read_text(encoding="utf-8")) if MANIFEST.is_file() else {}
    with tempfile.TemporaryDirectory(prefix="vendor-plotly-") as tmp:
        got = fetch(version, Path(tmp))
    new = got["manifest"]
    if old.get("version") == version and old.get("sha256") != new["sha256"]:
        raise SystemExit(
            f"vendor: {PACKAGE}@{version} on the registry has sha256 {new['sha256']}, "
            f"but VENDOR.json records {old.get('sha256')} for the same version; refusing to replace it"
        )
    on_disk = {n: (VENDOR / n).read_bytes() if (VENDOR / n).is_file() else None for n in got["files"]}
    same = all(on_disk[n] == data for n, data in got["files"].items()) and old == new
    if args.check:
        print(f"vendor: {PACKAGE}@{version} sha256 {new['sha256']}: "
              + ("the vendored files match" if same else "the vendored files DIFFER (run make vendor)"))
        return 0 if same else 1
    VENDOR.mkdir(parents=True, exist_ok=True)
    for name, data in got["files"].items():
        (VENDOR / name).write_bytes(data)
    MANIFEST.write_text(json.dumps(new, indent=2) + "\n", encoding="utf-8")
    print(f"vendor: {PACKAGE}@{version} ({new['bytes']:,} B, sha256 {new['sha256']}, "
          f"traces {', '.join(new['traceTypes'])}) -> {VENDOR.relative_to(REPO)}"
          + (" (unchanged)" if same else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
