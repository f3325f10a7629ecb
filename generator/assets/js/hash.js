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
        if ((k === 'layer' || k === 'head' || k === 'token') && isFinite(v)) st[k] = v - 1;
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
      return f.id + ':layer=' + (s.layer + 1) + ',head=' + (s.head + 1) + ',token=' + (s.token + 1);
    });
    if (!parts.length) return;
    var url = location.href.replace(/#.*$/, '') + '#' + parts.join(';');
    try { history.replaceState(history.state, '', url); } catch (e) { /* some file:// setups */ }
  }

  function applyHash(scroll) {
    var entries = parseHash(location.hash);
    var first = null;
    entries.forEach(function (e) {
      var f = figuresById[e.id];
      if (!f || !f.setState) return;
      f.setState(e.state, { fromHash: true });
      if (!first) first = f;
    });
    if (first && scroll) {
      first.el.scrollIntoView({ block: 'start', behavior: reducedMotion ? 'auto' : 'smooth' });
      if (first.plot) first.plot();
    }
    return entries.length;
  }
