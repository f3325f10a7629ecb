  // ------------------------------------------------------------------ URL hash

  function parseHash(hash) {
    var out = [];
    var h = String(hash || '').replace(/^#/, '');
    try { h = decodeURIComponent(h); } catch (e) { /* keep raw */ }
    h.split(';').forEach(function (part) {
      var m = /^\s*(fig-\d+):(.*)$/.exec(part);
      if (!m) return;
      var st = {};
      m[2].split(',').forEach(function (kv) {
        var p = kv.split('=');
        var k = (p[0] || '').trim();
        var v = parseInt(p[1], 10);
        // layer and head count from 1, as their menus say ("Layer 1"); a token is its position,
        // from 0 (<|endoftext|>), as the token menu ("6: ·her"), its subscripts and the prose say
        if ((k === 'layer' || k === 'head') && isFinite(v)) st[k] = v - 1;
        else if (k === 'token' && isFinite(v)) st[k] = v;
        else if (k === 'view' && /^(grid|lines)$/.test((p[1] || '').trim())) st.view = p[1].trim(); // lines.js
      });
      out.push({ id: m[1], state: st });
    });
    return out;
  }

  // replaceState is a synchronous round trip to the browser: once per burst of changes.
  var HASH_WRITE_DELAY = 120; // ms after the last change
  var hashTimer = null;
  function writeHashSoon() {
    if (hashTimer) clearTimeout(hashTimer);
    hashTimer = setTimeout(function () { hashTimer = null; writeHash(); }, HASH_WRITE_DELAY);
  }
  window.addEventListener('pagehide', function () {
    if (hashTimer) { clearTimeout(hashTimer); hashTimer = null; writeHash(); }
  });

  function writeHash() {
    var parts = figures.filter(function (f) { return f.inHash && f.state; }).map(function (f) {
      var s = f.state;
      return f.id + ':layer=' + (s.layer + 1) + ',head=' + (s.head + 1) + ',token=' + s.token +
        (f.viewChosen ? ',view=' + f.mode : '');
    });
    if (!parts.length) return;
    var url = location.href.replace(/#.*$/, '') + '#' + parts.join(';');
    try { history.replaceState(history.state, '', url); } catch (e) { /* some file:// setups */ }
  }

  // scroll: a link followed on the page (hashchange), which is a jump: the figure offers "Back"
  // to the state it had (follow.js); at load the address is where the reader starts.
  function applyHash(scroll) {
    var entries = parseHash(location.hash);
    var first = null;
    var applied = [];
    entries.forEach(function (e) {
      var f = figuresById[e.id];
      if (!f || !f.setState) return;
      applied.push(Promise.resolve(f.setState(e.state, { fromHash: true, jump: !!scroll })).then(function (st) {
        // a state the figure does not have (layer 9 of 4) was clamped: the address says what it shows
        return !st || ['layer', 'head', 'token'].some(function (k) { return k in e.state && e.state[k] !== st[k]; });
      }));
      if (!first) first = f;
    });
    Promise.all(applied).then(function (clamped) {
      if (clamped.some(Boolean)) writeHash();
    });
    if (first && scroll) {
      revealFigure(first.el);
      first.el.scrollIntoView({ block: 'start', behavior: reducedMotion ? 'auto' : 'smooth' });
      if (first.plot) first.plot();
    }
    return entries.length;
  }

  // A link into a figure that sits in a closed content tab or a closed <details> opens them
  // first (the page writes such links itself: a changed figure's state goes into the address);
  // the figure's scroll-margin-top (course.css) keeps it below the sticky header.
  function revealFigure(el) {
    for (var node = el; node && node !== document.body; node = node.parentElement) {
      if (node.tagName === 'DETAILS' && !node.open) node.open = true;
      var content = node.parentElement;
      var set = content && content.parentElement;
      if (!node.classList.contains('tabbed-block') || !set || !set.classList.contains('tabbed-set')) continue;
      var blocks = Array.prototype.filter.call(content.children, function (b) { return b.classList.contains('tabbed-block'); });
      var input = set.querySelectorAll(':scope > input[type="radio"]')[blocks.indexOf(node)];
      // a click, as a reader's: mkdocs-material moves the tab's underline (and links tabs of the
      // same name); a synthetic change event alone is undone by its linked tabs
      if (input && !input.checked) input.click();
    }
  }
