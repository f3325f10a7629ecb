  // ------------------------------------------------------------------ prose numbers and their cells

  // A number the build wrote into the prose from a figure is a span.course-ref
  // (render/ref_binding.py, templates/ref.html): data-fig names the figure; data-layer and
  // data-head its head, data-q / data-k (and data-panel, a compare figure's sentence) a weight's
  // cell, data-score a scoreboard's table. Hovering or focusing it never changes the figure: it
  // outlines where the number comes from (the cell in the heatmap and the table, else the figure)
  // only while the figure shows the number's state. A click, Enter or Space (an explicit act) sets
  // the figure to the number's state, scrolls it into view below the sticky header and offers
  // "Back" in the figure (follow.js). Listened for on the document: spans need no set-up, and
  // instant navigation's new pages work at once.
  var refShown = null; // { span, marks: [elements outlined], layer: the heatmap overlay }

  function refFigure(span) {
    var node = document.getElementById(span.getAttribute('data-fig') || '');
    return node && node.classList.contains('course-fig') ? node : null;
  }

  // The state the span names, in the figure's own numbering (a compare figure's token is a
  // position of its first sentence), or null when it names neither a head nor a row.
  function refState(span, f) {
    var layer = intAttr(span, 'data-layer', NaN), head = intAttr(span, 'data-head', NaN);
    var q = intAttr(span, 'data-q', NaN);
    var st = {};
    if (isFinite(layer) && isFinite(head)) { st.layer = layer; st.head = head; }
    var v = f.views[intAttr(span, 'data-panel', 0)] || f.views[0];
    if (isFinite(q)) st.token = v ? v.figureToken(q) : q; // a number about every head: the row only
    return 'layer' in st || 'token' in st ? st : null;
  }

  // Whether figure `f` shows state `st` now (only what `st` names is compared).
  function showsState(f, st) {
    var now = f.state;
    return ['layer', 'head', 'token'].every(function (k) { return !(k in st) || st[k] === now[k]; });
  }

  // opts.user: the reader pressed the number, which moves the figure to its state; else (hover,
  // focus) the figure is left as it is, and outlined only where it shows the number's state.
  function showRef(span, opts) {
    var user = !!(opts && opts.user);
    if (refShown && refShown.span === span && !user) return refShown.done;
    hideRef();
    var figEl = refFigure(span);
    if (!figEl) return Promise.resolve(false);
    var shown = { span: span, marks: [], layer: null, done: null };
    refShown = shown;
    span.classList.add('course-ref-on');
    var f = figuresById[figEl.id];
    var st = f instanceof AttentionFigure ? refState(span, f) : null;
    var kind = span.getAttribute('data-score');
    if (st) {
      var v = f.views[intAttr(span, 'data-panel', 0)] || f.views[0];
      var q = intAttr(span, 'data-q', NaN), k = intAttr(span, 'data-k', NaN);
      var moved = user ? f.setState(st, { user: true, jump: true }) : null;
      shown.done = Promise.resolve(moved).then(function () {
        if (refShown !== shown || f.target || !showsState(f, st)) return false;
        if (isFinite(k) && v) return markCell(shown, v, q, k);
        markRef(shown, figEl);
        return true;
      });
    } else if (kind) {
      var td = null;
      Array.prototype.forEach.call(figEl.querySelectorAll('section.course-score'), function (s) {
        if (td || s.getAttribute('data-score') !== kind) return;
        td = s.querySelector('td[data-layer="' + intAttr(span, 'data-layer', -1) + '"][data-head="' + intAttr(span, 'data-head', -1) + '"]');
      });
      markRef(shown, td || figEl);
      shown.done = Promise.resolve(true);
    } else {
      var opening = figEl.__courseOpening; // a figure the reader changed shows other numbers (follow.js)
      if (opening && opening.changed) {
        if (!user) {
          shown.done = Promise.resolve(false);
          return shown.done;
        }
        opening.reset();
      }
      markRef(shown, figEl);
      shown.done = Promise.resolve(true);
    }
    return shown.done;
  }

  function markRef(shown, node) {
    node.classList.add('course-ref-target');
    shown.marks.push(node);
  }

  // The weight's cell: its table cell, and over the heatmap a box on that cell (placed from the
  // plot's own margins, so it follows any size the plot has). A plot not drawn yet gets its box
  // once it is drawn, if the number is still pointed at.
  function markCell(shown, v, q, k) {
    var td = (v.cells[q] || [])[k];
    if (td) markRef(shown, td);
    if (!v.plotted) return true;
    return v.plotted.then(function (ok) {
      if (!ok || refShown !== shown) return false;
      var full = v.plotDiv && v.plotDiv._fullLayout;
      var size = full && full._size;
      if (!size || !v.n) return false;
      // the cell's centre where Plotly's axes put it (axis-labels.js: rows are not quite h / n)
      var w = size.w / v.n, h = size.h / v.n;
      var box = el('div', 'course-ref-mark');
      box.setAttribute('aria-hidden', 'true');
      box.style.left = (axisPx(full.xaxis, size.l, size.w, v.n)(k) - w / 2) + 'px';
      box.style.top = (axisPx(full.yaxis, size.t, size.h, v.n)(q) - h / 2) + 'px';
      box.style.width = w + 'px';
      box.style.height = h + 'px';
      v.plotDiv.appendChild(box);
      shown.layer = box;
      return true;
    });
  }

  function hideRef() {
    var shown = refShown;
    if (!shown) return;
    refShown = null;
    shown.span.classList.remove('course-ref-on');
    shown.marks.forEach(function (node) { node.classList.remove('course-ref-target'); });
    if (shown.layer && shown.layer.parentNode) shown.layer.parentNode.removeChild(shown.layer);
  }

  // The figure's top just below mkdocs-material's sticky header (a figure in a closed tab or
  // <details> is shown first); its state goes into the address, as a reader's own change does.
  function goToRef(span) {
    var figEl = refFigure(span);
    if (!figEl) return;
    revealFigure(figEl);
    showRef(span, { user: true });
    var header = document.querySelector('.md-header');
    var top = header ? Math.max(0, header.getBoundingClientRect().bottom) : 0;
    var by = figEl.getBoundingClientRect().top - top - REVEAL_GAP;
    if (by) window.scrollBy({ top: by, behavior: reducedMotion ? 'auto' : 'smooth' });
    var f = figuresById[figEl.id];
    if (f && f.plot) f.plot();
  }

  function refSpan(ev) {
    var t = ev.target;
    return t && t.closest ? t.closest('span.course-ref') : null;
  }

  document.addEventListener('mouseover', function (ev) {
    var span = refSpan(ev);
    if (span) showRef(span);
  });
  document.addEventListener('mouseout', function (ev) {
    var span = refSpan(ev);
    if (!span || span.contains(ev.relatedTarget) || document.activeElement === span) return;
    if (refShown && refShown.span === span) hideRef();
  });
  document.addEventListener('focusin', function (ev) {
    var span = refSpan(ev);
    if (span) showRef(span);
  });
  document.addEventListener('focusout', function (ev) {
    var span = refSpan(ev);
    if (span && refShown && refShown.span === span && !span.matches(':hover')) hideRef();
  });
  document.addEventListener('click', function (ev) {
    var span = refSpan(ev);
    if (span) goToRef(span);
  });
  document.addEventListener('keydown', function (ev) {
    var span = refSpan(ev);
    if (!span || (ev.key !== 'Enter' && ev.key !== ' ')) return;
    ev.preventDefault(); // Space would scroll the page
    goToRef(span);
  });
