"""The catalogue's GPT-2 figures, marked passages and missing traces, end to end through `python -m generator site` (tests/catalogue.py)."""

from __future__ import annotations


import pytest

from catalogue import cases_of, good_project, run_site_case

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("case", cases_of("passages"), ids=lambda c: c.id)
def test_passages_mistake_stops_the_build_with_one_exact_line_and_writes_nothing(case, good_project, tmp_path):
    run_site_case(case, good_project, tmp_path)
