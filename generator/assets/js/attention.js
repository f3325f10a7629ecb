  // ------------------------------------------------------------------ attention / compare figure

  var figures = [];
  var figuresById = {};

  function AttentionFigure(fig, kind) {
    var self = this;
    this.el = fig;
    this.id = fig.id;
    this.kind = kind;
    this.inHash = false;
    var data = ownData(fig) || {};
    this.views = [];
    if (kind === 'compare') {
      var panels = fig.querySelectorAll('.course-panel');
      var datas = data.panels || data.sentences || [];
      var align = data.align || null; // compare.py's Alignment: the same token in both sentences
      Array.prototype.forEach.call(panels, function (p, i) {
        var d = datas[i] || readJSON(p.querySelector('script.course-data'));
        if (!d) return;
        var v = new AttentionView(p, d, self);
        if (i === 1 && align) { v.fromFigure = align.to2; v.toFigure = align.to1; }
        v.trace = makeTrace(d, p.getAttribute('data-parts') || fig.getAttribute('data-parts'));
        self.views.push(v);
        traces.push(v.trace);
      });
      this.diff = fig.querySelector('.course-diff table');
      this.pairs = align && align.pairs;
    } else {
      var v1 = new AttentionView(fig, data, this);
      v1.trace = makeTrace(data, fig.getAttribute('data-parts'));
      this.views.push(v1);
      traces.push(v1.trace);
    }
    var v0 = this.views[0];
    this.nLayer = v0 ? v0.weights.length : 0;
    this.nHead = v0 && v0.weights[0] ? v0.weights[0].length : 0;
    // the figure's token is one of the first sentence's (compare: the second follows its partner)
    this.maxTokens = Math.max.apply(null, this.views.map(function (v) { return v.n; }).concat([0]));
    this.nToken = v0 ? v0.n : 0;
    this.state = this.clamp({
      layer: intAttr(fig, 'data-layer', 0), head: intAttr(fig, 'data-head', 0),
      token: intAttr(fig, 'data-token', this.nToken - 1)
    });
    this.initial = this.state; // the state the author wrote the caption and the prose for (follow.js)
    this.selects = {};
    Array.prototype.forEach.call(fig.querySelectorAll('select[data-control]'), function (sel) {
      var which = sel.getAttribute('data-control');
      self.selects[which] = sel;
      sel.addEventListener('change', function () {
        var st = {};
        st[which] = parseInt(sel.value, 10);
        self.setState(st, { user: true });
      });
    });
    this.headsButton = fig.querySelector('button[data-action="heads"]');
    if (this.headsButton) {
      this.headsButton.addEventListener('click', function () {
        self.toggleHeads(self.headsButton.getAttribute('aria-expanded') !== 'true', { user: true });
      });
    }
    // The HTML already shows this state (the renderer writes the same text): only the row buttons
    // learn which row is pressed. Nothing else is written before the first paint.
    this.views.forEach(function (v) { v.take(self.state); v.renderFocus(v.state.token); });
    // Grid / Lines (lines.js), where the views draw; a phone opens a long sentence in lines
    this.mode = 'grid';
    if (this.views.some(function (v) { return v.tableToggle; })) {
      this.viewSwitch = viewSwitch(this);
      var controls = fig.querySelector('.course-controls');
      if (controls) controls.appendChild(this.viewSwitch.el);
      this.setMode(defaultMode(this.maxTokens));
    }
    this.syncControls();
    if (fig.getAttribute('data-show-heads') === 'true') this.wantHeads = true;
  }

  AttentionFigure.prototype.clamp = function (s) {
    function c(v, n) { return Math.max(0, Math.min(isFinite(v) ? v : 0, Math.max(0, n - 1))); }
    return { layer: c(s.layer, this.nLayer), head: c(s.head, this.nHead), token: c(s.token, this.nToken) };
  };

  // The view shown (grid or lines): the switch's buttons say which; the lines are drawn at
  // once, a grid not drawn yet is drawn by plot() (schedule.js) or here once the plots started.
  AttentionFigure.prototype.setMode = function (mode) {
    if (!this.viewSwitch || (mode !== 'lines' && mode !== 'grid')) return Promise.resolve();
    var self = this;
    this.mode = mode;
    Object.keys(this.viewSwitch.buttons).forEach(function (m) {
      self.viewSwitch.buttons[m].setAttribute('aria-pressed', m === mode ? 'true' : 'false');
    });
    if (mode === 'grid' && !this.plotting) {
      this.views.forEach(function (v) { v.mode = 'grid'; v.plotHost.parentNode.classList.remove('course-view-lines'); });
      return Promise.resolve();
    }
    return Promise.all(this.views.map(function (v) { return v.setMode(mode); }));
  };

  AttentionFigure.prototype.syncControls = function () {
    var s = this.state;
    var sel = this.selects;
    ['layer', 'head', 'token'].forEach(function (k) {
      if (sel[k] && sel[k].value !== String(s[k])) sel[k].value = String(s[k]);
    });
  };

  // The small multiples open just below the pickers, where the reader is looking; opened by the
  // reader, focus moves to the head shown in the big grid (arrow keys move on from there).
  // Runs `then` once every view has the weights of `heads` ((layer, head) pairs; all when null):
  // at once when the page holds them, else after the parts load (failed loads included: the
  // figure then shows what it has). A head's part loads when the head is first shown, even when
  // its grid is already here (weights.js): it brings the head's arrays for the Code views (not
  // for a trace without a part folder, such as the playground's, whose parts are in memory).
  AttentionFigure.prototype.withWeights = function (heads, then) {
    var waits = [];
    this.views.forEach(function (v) {
      if (!v.trace) return;
      if (!heads) {
        var missing = v.weights.some(function (layer) { return layer.some(function (g) { return !Array.isArray(g); }); });
        if (missing) waits.push(loadWeights(v.trace));
        return;
      }
      heads.forEach(function (lh) {
        if (!hasHead(v.weights, lh[0], lh[1])) waits.push(loadHead(v.trace, lh[0], lh[1]));
        else if (v.trace._parts) loadHead(v.trace, lh[0], lh[1]).catch(function (e) { console.warn(e.message || e); });
      });
    });
    if (!waits.length) return then();
    var anyway = function () { return then(); };
    return Promise.all(waits).then(anyway, anyway);
  };

  AttentionFigure.prototype.toggleHeads = function (open, opts) {
    var self = this;
    if (open) return this.withWeights(null, function () { return self.showHeads(true, opts); });
    return this.showHeads(false, opts);
  };

  AttentionFigure.prototype.showHeads = function (open, opts) {
    var btn = this.headsButton;
    var target = null;
    this.views.forEach(function (v) {
      if (!v.heads) return;
      if (open) v.buildMinis();
      v.heads.hidden = !open;
      if (open) v.sizeMinis();
      if (open && !target && v.minis) {
        target = v.minis.filter(function (b) { return b.getAttribute('aria-pressed') === 'true'; })[0] || v.minis[0];
      }
    });
    if (btn) btn.setAttribute('aria-expanded', open ? 'true' : 'false');
    if (open && target && opts && opts.user) {
      target.focus({ preventScroll: true });
      revealKeeping(target, this.el.querySelector('.course-controls'));
    }
    return this;
  };

  // Changes in flight merge into one target state (a layer, then a head picked before the first
  // head's part is in); it is drawn once its head's grid is here, whichever part arrives first.
  AttentionFigure.prototype.setState = function (partial, opts) {
    var self = this;
    var base = this.target || this.state;
    if (partial.view) this.pendingView = partial.view; // the grid or the lines, applied with the state
    var want = this.target = this.clamp({
      layer: partial.layer != null ? partial.layer : base.layer,
      head: partial.head != null ? partial.head : base.head,
      token: partial.token != null ? partial.token : base.token
    });
    return this.withWeights([[want.layer, want.head]], function () { return self.applyState(opts); });
  };

  AttentionFigure.prototype.applyState = function (opts, settled) {
    var self = this;
    opts = opts || {};
    var next = this.target || this.state;
    var missing = this.views.some(function (v) { return v.trace && !hasHead(v.weights, next.layer, next.head); });
    if (missing && !settled) { // a later change's head: wait for its part (failed loads included)
      return this.withWeights([[next.layer, next.head]], function () { return self.applyState(opts, true); });
    }
    if (this.target === next) this.target = null;
    var before = this.state;
    this.state = this.clamp(next);
    var view = this.pendingView;
    this.pendingView = null;
    if (view && view !== this.mode) {
      this.setMode(view);
      if (opts.user) this.viewChosen = true;
    }
    if (opts.fromHash && view) this.viewChosen = true;
    var prevs = this.views.map(function (v) { return v.take(self.state); });
    var done = Promise.all(this.views.map(function (v) { return v.redrawPlot(); }));
    this.views.forEach(function (v, i) { v.renderDom(prevs[i]); });
    this.syncControls();
    this.renderDiff();
    followFigure(this, before, opts);
    if (opts.user || opts.fromHash) {
      this.inHash = true;
      if (!opts.fromHash) writeHashSoon();
    }
    return done.then(function () {
      self.el.dispatchEvent(new CustomEvent('course:statechange', { detail: self.state }));
      return self.state;
    });
  };

  AttentionFigure.prototype.renderDiff = function () {
    if (!this.diff || this.views.length < 2) return;
    var tbody = this.diff.tBodies[0] || this.diff.appendChild(document.createElement('tbody'));
    var a = this.views[0], b = this.views[1];
    var s = this.state;
    var ia = a.ownToken(s.token), ib = b.ownToken(s.token);
    var ra = a.row({ layer: s.layer, head: s.head, token: ia });
    var rb = b.row({ layer: s.layer, head: s.head, token: ib });
    // as compare.py's diff_rows: partners on one row, "4 / 5" where they sit at different places
    var frag = document.createDocumentFragment();
    (this.pairs || []).forEach(function (pair) {
      var i = pair[0], j = pair[1];
      var hasA = i != null && i <= ia, hasB = j != null && j <= ib;
      if (!hasA && !hasB) return;
      var tr = el('tr');
      tr.appendChild(el('td', null, i === j ? String(i) : (i == null ? NDASH : i) + ' / ' + (j == null ? NDASH : j)));
      [[hasA, a, ra, i], [hasB, b, rb, j]].forEach(function (side) {
        var tdTok = el('td');
        if (side[0]) tdTok.appendChild(tokSpan(side[1].tokens[side[3]])); else tdTok.textContent = NDASH;
        tr.appendChild(tdTok);
        tr.appendChild(el('td', null, side[0] ? fmt2(side[2][side[3]]) : NDASH));
      });
      tr.appendChild(el('td', null, hasA && hasB ? shownDiff(ra[i], rb[j]) : NDASH));
      frag.appendChild(tr);
    });
    clear(tbody);
    tbody.appendChild(frag);
  };

  AttentionFigure.prototype.plot = function () {
    var self = this;
    this.plotting = true;
    var drawView = function (v) {
      if (self.mode !== 'lines') return v.ensurePlot();
      v.setMode('lines');
      painted(self.id);
      return true;
    };
    return Promise.all(this.views.map(drawView)).then(function () {
      if (self.wantHeads) {
        self.wantHeads = false;
        self.toggleHeads(true);
      }
    });
  };

  // Scroll `target` into view, as block 'nearest' would, but never so far that `keep` (the
  // figure's menus) goes under mkdocs-material's sticky header: the menus win. (A small grid
  // clicked on a phone still brings its big grid into view, minis.js revealPlot: the grid wins.)
  var REVEAL_GAP = 8; // px between the header, or the screen's foot, and what is revealed
  function revealKeeping(target, keep) {
    var header = document.querySelector('.md-header');
    var top = header ? Math.max(0, header.getBoundingClientRect().bottom) : 0;
    var r = target.getBoundingClientRect();
    var down = r.bottom + REVEAL_GAP - window.innerHeight;
    var by = down > 0 ? down : Math.min(0, r.top - top - REVEAL_GAP);
    if (by > 0 && keep) by = Math.max(0, Math.min(by, keep.getBoundingClientRect().top - top - REVEAL_GAP));
    if (by) window.scrollBy({ top: by, behavior: reducedMotion ? 'auto' : 'smooth' });
  }
