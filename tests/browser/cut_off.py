"""Nothing is cut off (issue 46, item 4): what tests/browser/test_a11y.py's
test_no_page_has_an_element_cut_off measures on every page of the built course, at 1280 and 375
px, with every tab's panel, disclosure and "Show as a table" opened: no element whose content runs
past its box unseen. A box may scroll sideways only where it shows that it does (course.js's fade,
scroll-boxes.js); nothing is clipped by a box that does not scroll (overflow hidden or clip) or up
and down; nothing sticks out of the text column. Measured in Chromium, never timed. (A helper
module: the test reads each page in test_a11y.py's walk, which loads it once for axe and this.)"""

from __future__ import annotations

from course_builds import quiet

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


def cut_off(page) -> list:
    """What is cut off on the loaded page once everything in it is shown (REVEAL_JS, CUT_JS)."""
    page.evaluate(REVEAL_JS)
    quiet(page)
    return page.evaluate(CUT_JS)
