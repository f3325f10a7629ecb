"""The vendored Plotly bundle (generator/assets/vendor/, `make vendor`): its bytes are the ones
VENDOR.json records, its version is the plotly.js of the pinned Python `plotly` package, and it
registers every trace type that course.js draws. No network, no browser."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

from generator.render import assets
from generator.render.script import course_js

REPO = Path(__file__).resolve().parents[1]
VENDOR = REPO / "generator" / "assets" / "vendor"
ASSETS = REPO / "generator" / "assets"
TRACE_RE = re.compile(rb'moduleType:"trace",name:"([a-z0-9]+)"')
# `type: 'heatmap'`, `type = "bar"`, `"type": "scatter"` in the browser code
TYPE_RE = re.compile(r"""["']?\btype["']?\s*[:=]\s*["']([a-z0-9]+)["']""")


def manifest() -> dict:
    return json.loads((VENDOR / "VENDOR.json").read_text(encoding="utf-8"))


def registered(bundle: bytes) -> set[str]:
    return {m.decode("ascii") for m in TRACE_RE.findall(bundle)}


def full_plotly_js() -> bytes:
    import plotly

    return (Path(plotly.__file__).resolve().parent / "package_data" / "plotly.min.js").read_bytes()


def test_vendored_bundle_matches_its_manifest():
    m = manifest()
    data = (VENDOR / m["file"]).read_bytes()
    assert hashlib.sha256(data).hexdigest() == m["sha256"], "the vendored bundle changed: run make vendor, never edit it"
    assert len(data) == m["bytes"]
    lic = (VENDOR / m["licenseFile"]).read_bytes()
    assert hashlib.sha256(lic).hexdigest() == m["licenseSha256"] and b"MIT License" in lic and m["license"] == "MIT"
    assert m["package"] == "plotly.js-cartesian-dist-min" and m["file"] == assets.PLOTLY_JS
    assert f"v{m['version']}".encode() in data[:200]
    assert sorted(registered(data)) == m["traceTypes"]
    # what the site ships is exactly these bytes
    assert assets.static_assets()[assets.PLOTLY_JS] == data and "plotly.min.js" not in assets.static_assets()


def test_vendored_version_is_the_python_packages_plotlyjs():
    from plotly.offline import get_plotlyjs_version

    assert manifest()["version"] == get_plotlyjs_version(), (
        "the pinned Python plotly ships another plotly.js than the vendored bundle: run make vendor"
    )
    assert f"v{manifest()['version']}".encode() in full_plotly_js()[:200]


def course_js_trace_types() -> set[str]:
    """Every `type:` in the browser code that names a plotly.js trace type (buttons, inputs and
    shapes such as 'rect' are not trace types, so they drop out)."""
    every_trace = registered(full_plotly_js())
    assert {"heatmap", "scatter", "bar", "table", "surface"} <= every_trace, "cannot read the full bundle's trace list"
    found = set()
    for js in [course_js()] + [p.read_text(encoding="utf-8") for p in sorted(ASSETS.glob("*.js"))]:
        found |= set(TYPE_RE.findall(js))
    return found & every_trace


def test_every_trace_type_course_js_uses_is_in_the_bundle():
    used = course_js_trace_types()
    assert "heatmap" in used and "scatter" in used, used
    bundle = registered((VENDOR / manifest()["file"]).read_bytes())
    missing = sorted(used - bundle)
    assert not missing, (
        f"course.js draws {missing}, which plotly.js-cartesian-dist-min does not register "
        f"(it has {sorted(bundle)}): use a registered type or another partial bundle"
    )


def test_the_check_catches_a_missing_type():
    """Control: the scan reads `type:` the way course.js writes it, and a type outside the
    cartesian bundle would be reported."""
    sample = "data.push({ type: 'scatter3d', x: [1] }); b.type = 'button'; shapes: [{ type: 'rect' }]"
    every = registered(full_plotly_js())
    assert set(TYPE_RE.findall(sample)) & every == {"scatter3d"}
    assert "scatter3d" not in registered((VENDOR / manifest()["file"]).read_bytes())
