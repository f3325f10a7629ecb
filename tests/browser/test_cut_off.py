"""Nothing is cut off (issue 46, item 4): every page of the built course, at 1280 and 375 px, with
every tab's panel, disclosure and "Show as a table" opened, has no element whose content runs past
its box unseen. A box may scroll sideways only where it shows that it does (course.js's fade,
scroll-boxes.js); nothing is clipped by a box that does not scroll (overflow hidden or clip) or up
and down; nothing sticks out of the text column. Measured in Chromium, never timed."""

from __future__ import annotations

import pytest

from course_builds import quiet

from .test_a11y import built_pages

pytestmark = [pytest.mark.browser, pytest.mark.slow]

# Everything in a page shown at once: each block rendered (course.css skips off-screen ones), each
# tab's panel displayed, each <details> open, each grid's table shown; then a resize, so that the
# scroll boxes (scroll-boxes.js) see their new widths.
REVEAL_JS = """() => {
  const s = document.createElement('style');
  s.textContent = '.md-typeset > * { content-visibility: visible !important; }'
    + ' .tabbed-set > .tabbed-content > .tabbed-block { display: block !important; }';
  document.head.appendChild(s);
  document.querySelectorAll('.md-typeset details').forEach(d => { d.open = true; });
  document.querySelectorAll('.md-typeset button.course-table-toggle[aria-expanded=false]').forEach(b => b.click());
  window.dispatchEvent(new Event('resize'));
}"""

# Every element of the page's text (SVG drawings count as one element each) that is cut off:
#  - "hidden": content wider or taller than a box that does not scroll;
#  - "no fade": a box that scrolls sideways with no sign of it (no fade at a side with more);
#  - "up and down": a box whose content is taller than it;
#  - "outside": an element past the text column's edge, not inside a box that scrolls.
# Not counted: what is hidden on purpose (a skip link parked off screen, visually hidden text
# clipped to a pixel), and a difference of a pixel (rounding).
CUT_JS = """() => {
  const content = document.querySelector('.md-content');
  const edge = content.getBoundingClientRect();
  const name = e => { const at = e.closest('[id]'); const cls = [...e.classList].slice(0, 2).join('.');
    return (at ? '#' + at.id + ' ' : '') + e.tagName.toLowerCase() + (cls ? '.' + cls : ''); };
  const scrolls = e => { for (let p = e.parentElement; p && p !== content; p = p.parentElement) {
      const o = getComputedStyle(p).overflowX; if ((o === 'auto' || o === 'scroll') && p.scrollWidth > p.clientWidth + 1) return true; }
    return false; };
  const cut = [];
  for (const e of content.querySelectorAll('.md-typeset *')) {
    if (!e.getClientRects().length || (e.closest('svg') && e.localName !== 'svg')) continue;
    const cs = getComputedStyle(e);
    if (cs.clipPath !== 'none' || cs.clip !== 'auto') continue;  // visually hidden, on purpose
    const r = e.getBoundingClientRect();
    if (r.right <= 0 || r.left >= innerWidth) continue;  // parked off screen until focused
    const wide = e.scrollWidth - e.clientWidth > 1, tall = e.scrollHeight - e.clientHeight > 1;
    if (wide && (cs.overflowX === 'hidden' || cs.overflowX === 'clip')) cut.push(['hidden', name(e), e.scrollWidth, e.clientWidth]);
    if (wide && (cs.overflowX === 'auto' || cs.overflowX === 'scroll')) {
      const mask = cs.maskImage || cs.webkitMaskImage || 'none';
      const more = e.getAttribute('data-course-more') || '';
      if (!mask.includes('gradient') || !more) cut.push(['no fade', name(e), e.scrollWidth, e.clientWidth]);
    }
    if (tall && cs.overflowY !== 'visible') cut.push(['up and down', name(e), e.scrollHeight, e.clientHeight]);
    if ((r.right > edge.right + 1 || r.left < edge.left - 1) && !scrolls(e))
      cut.push(['outside', name(e), Math.round(r.left - edge.left), Math.round(r.right - edge.right)]);
  }
  return cut;
}"""


@pytest.mark.parametrize("width,scheme", [(1280, "light"), (375, "dark")])
def test_no_page_has_an_element_cut_off(course, server, open_site, width, scheme):
    """Both widths, one palette each: the palette changes colours, not sizes (the fade is a mask,
    the same in both). Measured on the code before issue 46: display formulas cut 2-5 px at the
    bottom on five pages, and a heatmap that scrolled with no fade (the injection page's long
    sentence)."""
    w = open_site(viewport={"width": width, "height": 900}, color_scheme=scheme)
    found = {}
    for rel in built_pages(course):
        w.goto(f"{server.base}/{rel}", wait_painted=False)
        w.page.wait_for_load_state("load")
        w.page.evaluate(REVEAL_JS)
        quiet(w.page)
        cut = w.page.evaluate(CUT_JS)
        if cut:
            found[rel] = cut
    assert found == {}
    assert w.errors == []
