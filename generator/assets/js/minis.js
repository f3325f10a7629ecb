  // ------------------------------------------------------------------ one attention panel: small multiples

  // Small grids, in CSS pixels: a cell of cellMin..cellMax, and a short sentence's cells larger, up
  // to a grid of sideMax (a 7-token head was 35 px, too small to see its pattern), so that a
  // layer's heads fit on one row beside (or, below stackBelow, under) the layer's label. Where two
  // layers fit side by side (labels above) with cells of at least pairCellMin, they do: half the height.
  var MINIS = { cellMin: 2, cellMax: 5, sideMax: 96, labelWidth: 72, perHead: 16, stackBelow: 480, pairCellMin: 4, pairGap: 16,
                revealMargin: 120 };  // px of the big grid on screen after a click on a small one, else it scrolls there

  function miniLabel(l, h) { return 'L' + (l + 1) + ' H' + (h + 1); }

  AttentionView.prototype.sizeMinis = function () {
    if (!this.heads || this.heads.hidden || !this.minis) return;
    var width = this.heads.clientWidth;
    if (!width) return;
    var nHead = (this.weights[0] || []).length || 1;
    var n = Math.max(this.n, 1);
    var pairCell = Math.floor(((width - MINIS.pairGap) / 2 - nHead * MINIS.perHead) / (nHead * n));
    var paired = this.weights.length > 1 && pairCell >= MINIS.pairCellMin;
    var stacked = paired || width < MINIS.stackBelow;
    var room = width - (stacked ? 0 : MINIS.labelWidth) - nHead * MINIS.perHead;
    var most = Math.max(MINIS.cellMax, Math.floor(MINIS.sideMax / n));
    var cell = Math.max(MINIS.cellMin, Math.min(most, paired ? pairCell : Math.floor(room / (nHead * n))));
    this.heads.classList.toggle('course-heads-stacked', stacked);
    this.heads.classList.toggle('course-heads-paired', paired);
    this.heads.style.setProperty('--course-mini-heads', String(nHead));
    this.heads.style.setProperty('--course-mini-cell', cell + 'px');
  };

  AttentionView.prototype.revealPlot = function () {
    var host = this.plotHost;
    if (!host || host.getBoundingClientRect().top < window.innerHeight - MINIS.revealMargin) return;
    host.scrollIntoView({ block: 'nearest', behavior: reducedMotion ? 'auto' : 'smooth' });
  };

  // One pixel a cell, scaled up by CSS (course.css, pixelated): 16 heads of 256 tokens are 16
  // canvases, not a million elements. Cells above the diagonal stay transparent and show the
  // masked colour of the theme behind them.
  function miniCanvas(grid, n) {
    var c = document.createElement('canvas');
    c.className = 'course-mini-cells';
    c.width = n;
    c.height = n;
    var ctx = c.getContext && c.getContext('2d');
    if (!ctx || !n) return c;
    var img = ctx.createImageData(n, n), px = img.data;
    for (var q = 0; q < n; q++) {
      var row = grid[q] || [];
      for (var k = 0; k <= q; k++) {
        var rgb = cellRGB(row[k]), at = (q * n + k) * 4;
        px[at] = rgb[0]; px[at + 1] = rgb[1]; px[at + 2] = rgb[2]; px[at + 3] = 255;
      }
    }
    ctx.putImageData(img, 0, 0);
    return c;
  }

  AttentionView.prototype.buildMinis = function () {
    var self = this;
    if (this.minis || !this.heads) return;
    var n = this.n;
    var frag = document.createDocumentFragment();
    this.minis = [];
    var intro = el('p', 'course-heads-intro',
      'Every head on this sentence, the row of the token in focus outlined. Choose a head to open it in the grid below. Arrow keys move between heads.');
    frag.appendChild(intro);
    this.weights.forEach(function (layer, l) {
      var rowBox = el('div', 'course-heads-layer');
      rowBox.setAttribute('role', 'group');
      rowBox.setAttribute('aria-label', 'Layer ' + (l + 1));
      rowBox.appendChild(el('span', 'course-heads-layer-label', 'Layer ' + (l + 1)));
      layer.forEach(function (grid, h) {
        grid = grid || [];
        var b = el('button', 'course-mini');
        b.type = 'button';
        b.setAttribute('data-layer', String(l));
        b.setAttribute('data-head', String(h));
        b.tabIndex = -1;
        var g = el('span', 'course-mini-grid');
        g.setAttribute('aria-hidden', 'true');
        g.style.setProperty('--course-mini-n', String(n));
        g.appendChild(miniCanvas(grid, n));
        g.appendChild(el('span', 'course-mini-row')); // the focus row's outline (course.css)
        b.appendChild(g);
        b.appendChild(el('span', 'course-mini-label', miniLabel(l, h)));
        rowBox.appendChild(b);
        self.minis.push(b);
      });
      frag.appendChild(rowBox);
    });
    this.heads.appendChild(frag);
    this.heads.addEventListener('click', function (ev) {
      var b = ev.target.closest('button.course-mini');
      if (!b) return;
      var done = self.fig.setState({ layer: +b.getAttribute('data-layer'), head: +b.getAttribute('data-head') },
        { user: true });
      // chosen with a pointer on a short screen, where the grid that changed is below the fold:
      // bring its top into view (keys keep the reader among the small grids)
      if (ev.detail > 0) done.then(function () { self.revealPlot(); });
    });
    this.heads.addEventListener('keydown', function (ev) {
      var b = ev.target.closest('button.course-mini');
      if (!b) return;
      var l = +b.getAttribute('data-layer'), h = +b.getAttribute('data-head');
      var nL = self.weights.length, nH = (self.weights[0] || []).length;
      var moves = { ArrowLeft: [0, -1], ArrowRight: [0, 1], ArrowUp: [-1, 0], ArrowDown: [1, 0] };
      var m = moves[ev.key];
      if (ev.key === 'Home') m = [-l, -h];
      if (ev.key === 'End') m = [nL - 1 - l, nH - 1 - h];
      if (!m) return;
      ev.preventDefault();
      var nl = Math.max(0, Math.min(nL - 1, l + m[0])), nh = Math.max(0, Math.min(nH - 1, h + m[1]));
      var target = self.minis[nl * nH + nh];
      if (target) {
        self.minis.forEach(function (x) { x.tabIndex = -1; });
        target.tabIndex = 0;
        target.focus();
      }
    });
    this.updateMinis();
  };

  AttentionView.prototype.updateMinis = function () {
    var s = this.state;
    var self = this;
    if (!s) return;
    var hasFocusInside = this.heads && this.heads.contains(document.activeElement);
    this.heads.style.setProperty('--course-mini-row', String(s.token));
    this.minis.forEach(function (b) {
      var l = +b.getAttribute('data-layer'), h = +b.getAttribute('data-head');
      var grid = (self.weights[l] || [])[h] || [];
      // The name starts with the visible label ("L2 H3"), so a speech-input user can say what
      // they see (WCAG 2.5.3, axe label-content-name-mismatch); the words follow.
      b.setAttribute('aria-label', miniLabel(l, h) + ' (layer ' + (l + 1) + ', head ' + (h + 1) + '): ' +
        plainSentence(self.tokens, grid[s.token] || [], s.token));
      var current = l === s.layer && h === s.head;
      b.setAttribute('aria-pressed', current ? 'true' : 'false');
      if (!hasFocusInside) b.tabIndex = current ? 0 : -1;
    });
  };
