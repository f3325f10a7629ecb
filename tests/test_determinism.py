"""Determinism: two clean builds, in separate tmp folders, of the traces (`python -m generator
traces`, tiny model) and of the site (`python -m generator site`, with its downloads) are byte
identical: every file's sha256, the traces, the generated assets, the site, the zip.

Timestamps: MkDocs writes the build date into sitemap.xml (<lastmod>) and sitemap.xml.gz (the
gzip header's mtime). Both follow SOURCE_DATE_EPOCH (https://reproducible-builds.org/specs/source-date-epoch/),
which the helpers set for every build (course_builds.env), so nothing is excluded. The zip
fixes its own timestamps (1980-01-01).

Build A is the session's shared course build (also used by the browser tests); B is made here.
"""

from __future__ import annotations

import pytest

from course_builds import build_course, shared_course, tree_digest

pytestmark = pytest.mark.slow

PARTS = ("traces", "content/assets/generated", "build/site", "build/downloads")


def test_two_clean_builds_of_traces_and_site_are_byte_identical(tmp_path):
    a = shared_course()
    b = build_course(tmp_path / "b")
    for part in PARTS:
        da, db = tree_digest(a / part), tree_digest(b / part)
        assert da, f"{part} is empty"
        only_a, only_b = sorted(set(da) - set(db)), sorted(set(db) - set(da))
        differ = sorted(k for k in set(da) & set(db) if da[k] != db[k])
        assert not (only_a or only_b or differ), (
            f"{part}: builds differ; only in A: {only_a[:10]}, only in B: {only_b[:10]}, different bytes: {differ[:10]}")
    site = tree_digest(a / "build/site")
    assert "sitemap.xml.gz" in site and "downloads/course-offline.zip" in site
    assert (a / "build/site/downloads/course-offline.zip").read_bytes() == (a / "build/downloads/course-offline.zip").read_bytes()
