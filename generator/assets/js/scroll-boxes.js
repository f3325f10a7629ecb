  // ------------------------------------------------------------------ scroll boxes: reachable by keyboard

  // A box that scrolls sideways (a wide table, the comparison, a long formula, mkdocs-material's
  // table wrapper) must be reachable with the keyboard, or a keyboard user cannot scroll it (axe
  // scrollable-region-focusable, WCAG 2.1.1). While it overflows and holds nothing focusable, it
  // becomes a named tab stop (tabindex 0, role region); when it fits again, it stops being one.
  // A box whose HTML already sets tabindex (the scoreboard's) is left as it is. A heatmap's box
  // (.course-plot, a grid too wide for the screen at its smallest cells) fades like the others but
  // is no tab stop: it is hidden from assistive technology, its table and list carry its numbers.
  var SCROLL_BOXES = '.course-table-wrap, .course-diff, .course-math, .course-fig .course-scroll, .course-fig .course-plot, .md-typeset__scrollwrap, .md-typeset pre > code';
  var FOCUSABLE = 'a[href], button, input, select, textarea, summary, [tabindex]:not([tabindex="-1"])';
  var scrollObserver = null;

  // Regions need distinct names (axe landmark-unique): the caption, else "Table: " and the
  // header cells, else a number.
  function scrollBoxName(box) {
    var squash = function (t) { return (t || '').replace(/\s+/g, ' ').trim(); };
    var cap = box.querySelector('caption');
    var text = cap ? squash(cap.textContent) : '';
    var ths = box.querySelectorAll('thead th');
    if (!text && ths.length) {
      text = 'Table: ' + Array.prototype.map.call(ths, function (th) { return squash(th.textContent); })
        .filter(Boolean).join(', ');
      if (text.length > 80) text = text.slice(0, 79) + '\u2026';
    }
    if (!text) text = box.matches('code') ? 'Code' : box.querySelector('math') ? 'Formula' : box.querySelector('table') ? 'Table' : 'Scrollable content';
    var name = text + ' (scrolls sideways)';
    var taken = {};
    Array.prototype.forEach.call(document.querySelectorAll('[data-course-scroll][aria-label]'), function (b) {
      if (b !== box) taken[b.getAttribute('aria-label')] = true;
    });
    for (var k = 2; taken[name]; k++) name = text + ' ' + k + ' (scrolls sideways)';
    return name;
  }

  // A box that scrolls sideways fades out at the side (or sides) where more of it lies:
  // data-course-more is "right", "left" or "left right" (course.css draws the fade), kept in step
  // with the box's scroll position. A table's caption sits above the fade (--course-more-keep:
  // the height above its first row), so it never fades.
  var MORE_FADE_MIN = 8, MORE_FADE_MAX = 40; // px: the fade's width, from a sliver past the edge to 2.5rem
  // How far a box's content runs past its width (0 for a box that is not shown).
  function sidewaysRoom(box) {
    return box.clientWidth > 0 ? box.scrollWidth - box.clientWidth : 0;
  }

  function syncScrollEdges(box) {
    var room = sidewaysRoom(box);
    var more = [];
    if (room > 1) {
      if (box.scrollLeft > 1) more.push('left');
      if (box.scrollLeft < room - 1) more.push('right');
    }
    var value = more.join(' ');
    if (!value) {
      if (box.hasAttribute('data-course-more')) {
        box.removeAttribute('data-course-more');
        box.style.removeProperty('--course-more-keep');
        box.style.removeProperty('--course-more-fade');
      }
      return;
    }
    // the fade is no wider than what lies past the edge (at least MORE_FADE_MIN, to be seen): a
    // table 2 px too wide for a phone had its last column faded out under a 40 px fade
    var fade = Math.round(Math.min(MORE_FADE_MAX, Math.max(MORE_FADE_MIN, room))) + 'px';
    if (box.style.getPropertyValue('--course-more-fade') !== fade) box.style.setProperty('--course-more-fade', fade);
    var table = box.querySelector('table');  // measured each time: a new width rewraps the caption
    var first = table && table.caption && (table.tHead || table.rows[0]);
    var keep = (first ? Math.max(0, Math.round(first.getBoundingClientRect().top - box.getBoundingClientRect().top)) : 0) + 'px';
    if (box.style.getPropertyValue('--course-more-keep') !== keep) box.style.setProperty('--course-more-keep', keep);
    if (box.getAttribute('data-course-more') !== value) box.setAttribute('data-course-more', value);
    if (!box.__courseEdges) {
      box.__courseEdges = true;
      box.addEventListener('scroll', oncePerFrame(function () { syncScrollEdges(box); }), { passive: true });
    }
  }

  function syncScrollBox(box) {
    syncScrollEdges(box);
    if (box.hasAttribute('tabindex') && !box.hasAttribute('data-course-scroll')) return; // the HTML's own
    if (box.getAttribute('aria-hidden') === 'true') return; // a drawing whose numbers are in its table
    var overflows = sidewaysRoom(box) > 1;
    var needs = overflows && !box.querySelector(FOCUSABLE);
    if (needs && !box.hasAttribute('data-course-scroll')) {
      box.setAttribute('data-course-scroll', '');
      box.tabIndex = 0;
      if (!box.hasAttribute('role')) { box.setAttribute('role', 'region'); box.setAttribute('data-course-scroll', 'role'); }
      if (!box.hasAttribute('aria-label')) box.setAttribute('aria-label', scrollBoxName(box));
    } else if (!needs && box.hasAttribute('data-course-scroll')) {
      if (box.getAttribute('data-course-scroll') === 'role') box.removeAttribute('role');
      box.removeAttribute('tabindex');
      box.removeAttribute('aria-label');
      box.removeAttribute('data-course-scroll');
    }
  }

  function initScrollBoxes() {
    var boxes = document.querySelectorAll(SCROLL_BOXES);
    if (!window.__courseScrollResize) {
      // A box in a block that the browser skips while it is off screen (course.css,
      // content-visibility) gets no ResizeObserver entry when the window changes width, so every
      // box is checked again on resize too.
      window.__courseScrollResize = true;
      window.addEventListener('resize', oncePerFrame(function () {
        Array.prototype.forEach.call(document.querySelectorAll(SCROLL_BOXES), function (box) {
          if (box.__courseScroll) syncScrollBox(box);
        });
      }));
    }
    if (window.ResizeObserver && !scrollObserver) {
      scrollObserver = new ResizeObserver(function (entries) {
        entries.forEach(function (e) {
          var box = e.target.__courseScroll ? e.target : e.target.parentElement;
          if (box && box.__courseScroll) syncScrollBox(box);
        });
      });
    }
    Array.prototype.forEach.call(boxes, function (box) {
      if (box.__courseScroll) return;
      box.__courseScroll = true;
      syncScrollBox(box);
      if (scrollObserver) {
        scrollObserver.observe(box);
        var inner = box.firstElementChild; // the table or formula growing inside a box of fixed width
        if (inner) scrollObserver.observe(inner);
      }
    });
  }

  // A content tab opened (by a reader, or by a link into it): its boxes were not shown, and one
  // in a block skipped off screen (content-visibility) gets no ResizeObserver entry.
  document.addEventListener('change', function (ev) {
    var t = ev.target;
    if (!t || !t.matches || !t.matches('.tabbed-set > input[type="radio"]')) return;
    Array.prototype.forEach.call(t.parentNode.querySelectorAll(SCROLL_BOXES), function (box) {
      if (box.__courseScroll) syncScrollBox(box);
    });
  });
