"""The catalogue's mistakes in the file around the figures (front matter, glossary, YAML, fences, encodings), end to end through `python -m generator site` (tests/catalogue.py)."""

from __future__ import annotations


import pytest

from catalogue import cases_of, good_project, run_site_case

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("case", cases_of("files"), ids=lambda c: c.id)
def test_files_mistake_stops_the_build_with_one_exact_line_and_writes_nothing(case, good_project, tmp_path):
    run_site_case(case, good_project, tmp_path)
