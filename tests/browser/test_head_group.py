"""`attention` with `heads: group` in Chromium (chapter 7, on the session's shared course build): the
grids of a group stay one group whatever the reader picks, and the label above them names the group
shown (it would otherwise go stale after the first click)."""

from __future__ import annotations

import json

import pytest

from course_builds import settle

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PAGE = "modern.html"
# each grid's (layer, head, token) as its pickers show them, 0-based, and the label and aria-label
SHOWN = """() => {
  const box = document.querySelector('.course-head-group');
  const grids = [...box.querySelectorAll('.course-head-group-figures > figure.course-fig')];
  const sel = (f, c) => +f.querySelector('select[data-control=' + c + ']').value;
  return {grids: grids.map(f => [sel(f, 'layer'), sel(f, 'head'), sel(f, 'token')]), ids: grids.map(f => f.id),
          label: box.querySelector('.course-head-group-label').textContent, aria: box.getAttribute('aria-label')};
}"""


def expected(groups: list, layer: int, head: int) -> dict:
    return next(g for g in groups[layer] if head in g["heads"])


def wait_for(page, fid: str, layer: int, mates: list[int], token: int) -> dict:
    """Until every other grid is on (layer, one of `mates`, token); what is shown then."""
    page.wait_for_function(
        """([fid, layer, mates, token]) => [...document.querySelectorAll('.course-head-group figure.course-fig')]
             .filter(f => f.id !== fid)
             .every(f => ['layer', 'token'].every((c, i) => +f.querySelector('select[data-control=' + c + ']').value === [layer, token][i])
                         && mates.includes(+f.querySelector('select[data-control=head]').value))""",
        arg=[fid, layer, mates, token])
    return page.evaluate(SHOWN)


def pick(page, fid: str, **values: int) -> None:
    for control, value in values.items():
        page.select_option(f"#{fid} select[data-control={control}]", str(value))


def test_a_pick_in_one_grid_takes_the_others_to_its_group_and_the_label_follows(server, open_site):
    w = open_site()
    w.page.goto(f"{server.base}/{PAGE}")
    settle(w.page)
    w.page.wait_for_function("() => window.course && window.course.figures.length > 0")
    groups = json.loads(w.page.get_attribute(".course-head-group", "data-groups"))
    start = w.page.evaluate(SHOWN)
    first, second = start["ids"][:2]
    (layer, head, token), other = start["grids"][0], start["grids"][1]
    g = expected(groups, layer, head)
    assert start["label"] == start["aria"] == g["label"] and other[1] in g["heads"] and other[1] != head

    # another group of the same layer, picked in the first grid
    new_head = next(h for h in range(len(groups[layer]) * len(g["heads"])) if h not in g["heads"])
    g2 = expected(groups, layer, new_head)
    pick(w.page, first, head=new_head)
    shown = wait_for(w.page, first, layer, [h for h in g2["heads"] if h != new_head], token)
    assert shown["grids"][1][1] in g2["heads"] and shown["label"] == shown["aria"] == g2["label"] != g["label"]

    # another layer and token, picked in the second grid: the first follows it
    pick(w.page, second, layer=0)
    second_head = w.page.evaluate(SHOWN)["grids"][1][1]
    g3 = expected(groups, 0, second_head)
    mates = [h for h in g3["heads"] if h != second_head]
    wait_for(w.page, second, 0, mates, token)
    pick(w.page, second, token=2)
    shown = wait_for(w.page, second, 0, mates, 2)
    assert shown["grids"][0][1] in g3["heads"] and shown["label"] == g3["label"] and shown["label"].startswith("Layer 1, heads ")
    assert not w.errors, w.errors
