  // ------------------------------------------------------------------ one attention panel: its lines view (SVG)

  // bertviz's head view: the tokens in two columns, the one that looks (query) on the left, the
  // ones it looks at (key) on the right, and a line for every (query, key) pair the mask lets
  // through, its opacity the weight. The focus token's lines are drawn in the focus colour, the
  // others faintly behind them (course.css, "lines"). Drawn from the same weights as the heatmap
  // and the table; tokens are text (textContent), never markup. In CSS pixels:
  var LINES = {
    row: 20, font: 12, top: 26, bottom: 6, // a row per token; labels at 12 px (>= 11 on a phone)
    gap: 8, labelChars: 14, labelMin: 40,  // between a label and its lines; labels' longest
    width: 420, widthMin: 240,             // the drawing's width: the box's, within these
    phoneMax: 480, phoneFrom: 13           // the default on a phone (viewport <= 480 px) from 13 tokens
  };

  // The view a figure opens in: the lines on a phone for a long sentence, else the grid.
  function defaultMode(nTokens) {
    var phone = window.matchMedia && window.matchMedia('(max-width: ' + LINES.phoneMax + 'px)').matches;
    return phone && nTokens >= LINES.phoneFrom ? 'lines' : 'grid';
  }

  // Grid / Lines: two toggle buttons among the pickers, one pressed.
  function viewSwitch(fig) {
    var box = el('span', 'course-control course-viewswitch');
    box.setAttribute('role', 'group');
    box.setAttribute('aria-label', 'View');
    var label = el('span', 'course-viewswitch-label', 'View');
    label.setAttribute('aria-hidden', 'true');
    box.appendChild(label);
    var buttons = {};
    [['grid', 'Grid'], ['lines', 'Lines']].forEach(function (m) {
      var b = el('button', 'course-viewswitch-' + m[0], m[1]);
      b.type = 'button';
      b.setAttribute('data-view', m[0]);
      b.setAttribute('aria-pressed', 'false');
      b.addEventListener('click', function () { fig.setState({ view: m[0] }, { user: true }); });
      box.appendChild(b);
      buttons[m[0]] = b;
    });
    return { el: box, buttons: buttons };
  }

  // Grid or lines for this panel: the other one is hidden (display: none, course.css); the plot
  // is drawn when first shown, the lines at once.
  AttentionView.prototype.setMode = function (mode) {
    var view = this.plotHost && this.plotHost.parentNode;
    if (!view || !this.tableToggle) return Promise.resolve(false);
    this.mode = mode;
    view.classList.toggle('course-view-lines', mode === 'lines');
    if (mode === 'lines') {
      this.drawLines();
      return Promise.resolve(true);
    }
    if (this.linesHost) this.linesHost.hidden = true;
    var self = this;
    if (this.plotReady && this.plotStale) { this.plotStale = false; return this.react(); }
    return this.ensurePlot().then(function (ok) {
      if (ok && self.plotStale) { self.plotStale = false; return self.react(); }
      return ok;
    });
  };

  AttentionView.prototype.linesWidth = function () {
    var view = this.plotHost.parentNode;
    var w = view.clientWidth || LINES.width;
    return Math.max(LINES.widthMin, Math.min(LINES.width, Math.floor(w)));
  };

  // The drawing, built once per panel (its head and token change attributes only).
  AttentionView.prototype.buildLines = function () {
    var self = this, n = this.n, L = LINES;
    var host = el('div', 'course-lines');
    host.id = uniqueId((this.fig.id || 'course') + '-lines');
    this.plotHost.parentNode.insertBefore(host, this.plotHost.nextSibling);
    this.linesHost = host;
    var labels = this.tokens.map(function (t) { return shorten(tokDisplay(t), L.labelChars); });
    var QUERY_HEAD = 'token (query)', KEY_HEAD = 'looks at (key)';
    // the columns hold their headings too: short tokens made a column narrower than its heading,
    // and the heading ran off the drawing ("en (query)")
    var widths = textWidths(labels.concat([QUERY_HEAD, KEY_HEAD]), L.font, this.root);
    var W = this.linesW = this.linesWidth();
    var col = Math.min(Math.floor(W * 0.32), Math.max(L.labelMin, Math.ceil(Math.max.apply(null, [0].concat(widths))) + 4));
    var H = L.top + n * L.row + L.bottom;
    var x1 = col + L.gap, x2 = W - col - L.gap;
    var rowY = function (i) { return L.top + (i + 0.5) * L.row; };
    var svg = svgEl('svg', { viewBox: '0 0 ' + W + ' ' + H, width: W, height: H, role: 'group',
      'font-size': L.font }, 'course-lines-svg');
    svg.setAttribute('aria-label', 'Lines view: each token on the left is joined to the tokens on the right that it ' +
      'looks at; the darker the line, the larger the weight. Choose a token with the arrow keys; the table has every number.');
    var heads = svgEl('g', { 'aria-hidden': 'true' }, 'course-lines-heads');
    var hq = svgEl('text', { x: col, y: 14, 'text-anchor': 'end' });
    hq.textContent = QUERY_HEAD;
    var hk = svgEl('text', { x: W - col, y: 14, 'text-anchor': 'start' });
    hk.textContent = KEY_HEAD;
    heads.appendChild(hq);
    heads.appendChild(hk);
    svg.appendChild(heads);
    var all = svgEl('g', { 'aria-hidden': 'true' }, 'course-lines-all');
    this.lineGroups = [];
    this.lineEls = [];
    for (var q = 0; q < n; q++) {
      var g = svgEl('g', { 'data-q': q }, 'course-lines-q');
      var row = [];
      for (var k = 0; k <= q; k++) {
        var line = svgEl('line', { x1: x1, y1: rowY(q), x2: x2, y2: rowY(k), 'data-q': q, 'data-k': k });
        g.appendChild(line);
        row.push(line);
      }
      all.appendChild(g);
      this.lineGroups.push(g);
      this.lineEls.push(row);
    }
    svg.appendChild(all);
    var keys = svgEl('g', { 'aria-hidden': 'true' }, 'course-lines-keys');
    // tabindex -1: Chromium makes an SVG element with focus listeners a tab stop of its own
    var list = svgEl('g', { role: 'listbox', tabindex: -1, 'aria-label': 'Token that looks (query)' }, 'course-lines-queries');
    this.lineQueries = [];
    this.lineKeys = [];
    labels.forEach(function (text, i) {
      var opt = svgEl('g', { role: 'option', tabindex: -1, 'data-q': i, 'aria-selected': 'false' }, 'course-lines-tok');
      opt.appendChild(svgEl('rect', { x: 1, y: rowY(i) - L.row / 2 + 1, width: col - 1, height: L.row - 2, rx: 3 }));
      var t = svgEl('text', { x: col - 4, y: rowY(i), 'text-anchor': 'end', 'dominant-baseline': 'central' });
      t.textContent = text;
      opt.appendChild(t);
      list.appendChild(opt);
      self.lineQueries.push(opt);
      var kt = svgEl('text', { x: W - col + 4, y: rowY(i), 'text-anchor': 'start', 'dominant-baseline': 'central', 'data-k': i });
      kt.textContent = text;
      keys.appendChild(kt);
      self.lineKeys.push(kt);
    });
    svg.appendChild(keys);
    svg.appendChild(list);
    host.appendChild(svg);
    this.linesSvg = svg;
    this.listenLines(list);
  };

  // A new width (a phone turned, a window widened or narrowed): the drawing is built again at the
  // box's width, in the same state, keeping the keyboard's place. A hidden one waits to be shown.
  AttentionView.prototype.fitLines = function () {
    if (!this.linesHost || this.linesHost.hidden || this.mode !== 'lines' || this.linesW === this.linesWidth()) return;
    var focused = this.linesHost.contains(document.activeElement);
    this.linesHost.parentNode.removeChild(this.linesHost);
    this.linesHost = null;
    this.linesHead = null;
    this.drawLines();
    var opt = this.lineQueries[this.state.token];
    if (focused && opt) opt.focus({ preventScroll: true });
  };

  // Keyboard: one tab stop (the focus token), arrow keys move it; focusing, clicking or moving
  // to a token makes it the figure's token (its lines highlight). Hovering shows a token's lines
  // without choosing it.
  AttentionView.prototype.listenLines = function (list) {
    var self = this;
    var q = function (node) { var o = node && node.closest && node.closest('.course-lines-tok'); return o ? parseInt(o.getAttribute('data-q'), 10) : null; };
    var choose = function (i) {
      if (i == null || !isFinite(i)) return;
      if (self.state && i === self.state.token) return;
      self.fig.setState({ token: self.figureToken(i) }, { user: true });
    };
    list.addEventListener('click', function (ev) { choose(q(ev.target)); });
    list.addEventListener('focusin', function (ev) { choose(q(ev.target)); });
    list.addEventListener('keydown', function (ev) {
      var at = q(ev.target);
      if (at == null) return;
      var to = { ArrowUp: at - 1, ArrowLeft: at - 1, ArrowDown: at + 1, ArrowRight: at + 1, Home: 0, End: self.n - 1 }[ev.key];
      if (to == null) return;
      ev.preventDefault();
      to = self.clampToken(to);
      var opt = self.lineQueries[to];
      if (opt) opt.focus(); // focusin chooses it
    });
    list.addEventListener('mouseover', function (ev) { self.hoverLines(q(ev.target)); });
    list.addEventListener('mouseleave', function () { self.hoverLines(null); });
  };

  AttentionView.prototype.hoverLines = function (i) {
    if (!this.lineGroups) return;
    this.linesSvg.classList.toggle('course-lines-hovering', i != null);
    this.lineGroups.forEach(function (g, q) { g.classList.toggle('course-lines-hover', q === i); });
  };

  // The lines of the head shown: opacity = weight (the trace's number, as the heatmap's colour).
  AttentionView.prototype.drawLines = function () {
    if (!this.n || !this.state) return;
    if (this.linesHost && this.linesW !== this.linesWidth()) { this.linesHost.hidden = false; this.fitLines(); return; }
    if (!this.linesHost) this.buildLines();
    this.linesHost.hidden = false;
    var s = this.state;
    var grid = (this.weights[s.layer] || [])[s.head] || [];
    var key = s.layer + ':' + s.head;
    if (this.linesHead !== key) {
      this.linesHead = key;
      for (var q = 0; q < this.n; q++) {
        var row = grid[q] || [];
        var els = this.lineEls[q];
        for (var k = 0; k <= q; k++) {
          var w = row[k];
          els[k].setAttribute('stroke-opacity', isFinite(w) ? String(w) : '0');
        }
        this.lineQueries[q].setAttribute('aria-label', plainSentence(this.tokens, row, q));
      }
    }
    this.focusLines(s.token);
  };

  AttentionView.prototype.focusLines = function (token) {
    if (!this.lineGroups) return;
    var row = this.row(this.state);
    var top = ranked(row, token);
    this.lineGroups.forEach(function (g, q) { g.classList.toggle('course-lines-focus', q === token); });
    this.lineQueries.forEach(function (o, q) {
      var on = q === token;
      o.setAttribute('aria-selected', on ? 'true' : 'false');
      o.setAttribute('tabindex', on ? '0' : '-1');
    });
    this.lineKeys.forEach(function (t, k) { t.classList.toggle('course-lines-top', top.indexOf(k) >= 0); });
    // the focus token's group last: its lines are drawn over the others
    var g = this.lineGroups[token];
    if (g && g.parentNode && g.parentNode.lastChild !== g) g.parentNode.appendChild(g);
  };

  // A phone (course.css): a long top-three list shows the focus token's line only, the rest one
  // click away (a disclosure button after the list). Each item keeps its number (value).
  var TOP3_FROM = 7; // tokens: a shorter list shows whole
  function top3Toggle(view) {
    var ol = view.top3, box = ol && ol.parentNode;
    if (!box || view.n < TOP3_FROM || box.querySelector(':scope > .course-top3-toggle')) return;
    if (!ol.id) ol.id = uniqueId((view.fig.id || 'course') + '-top3');
    // each item keeps its number, from 0 as _grid.html's <ol start=0> and the token menu
    Array.prototype.forEach.call(ol.children, function (li, i) { li.value = i; });
    box.classList.add('course-top3-short');
    var b = el('button', 'course-top3-toggle');
    b.type = 'button';
    b.setAttribute('aria-controls', ol.id);
    var set = function (open) {
      box.classList.toggle('course-top3-open', open);
      b.setAttribute('aria-expanded', open ? 'true' : 'false');
      b.textContent = open ? 'Show the chosen token only' : 'Show all ' + view.n + ' tokens';
    };
    b.addEventListener('click', function () { set(b.getAttribute('aria-expanded') !== 'true'); });
    set(false);
    box.appendChild(b);
  }
