  // ------------------------------------------------------------------ one attention panel

  function AttentionView(root, data, fig) {
    this.root = root;
    this.fig = fig;
    this.data = data;
    this.tokens = data.tokens || [];
    this.n = this.tokens.length;
    this.weights = data.weights || [];
    this.summary = root.querySelector('.course-summary');
    this.plotHost = root.querySelector('.course-plot');
    this.table = root.querySelector('table.course-table');
    this.top3 = root.querySelector('.course-top3 ol');
    this.heads = root.querySelector('.course-heads');
    this.plotted = null; // Promise once Plotly.newPlot ran
    this.plotDiv = null;
    this.cache = {};
    this.minis = null;
    this.state = null;
    this.geom = null;
    this.prepareTable();
    // course.css keeps about the plot's height free and its table hidden, from the first frame,
    // unless the view is static: nothing to draw here, so the table is the figure
    var view = root.querySelector('.course-view'); // the one that holds plotHost
    if (this.plotHost && this.n && hasPlotly()) this.tableToggle = tableToggle(this.table, fig.id);
    else if (view) view.classList.add('course-view-static');
    top3Toggle(this);
    var self = this;
    afterFirstPaint(function () { self.holdSummary(); }); // drawn or not, its summary changes with the pickers
  }

  // The plot's height, kept free before it is drawn (no jump when it is). Read and write in two
  // passes over every view (reserveSpace in init), so the page is laid out once, not per figure.
  AttentionView.prototype.measure = function () {
    if (this.tableToggle && !this.plotted) this.geom = this.geometry(this.plotHost.clientWidth);
  };
  AttentionView.prototype.reserve = function () {
    if (this.geom && !this.plotted) this.plotHost.style.minHeight = this.geom.height + 'px';
  };

  AttentionView.prototype.prepareTable = function () {
    var self = this;
    this.rows = [];
    this.cells = [];
    this.rowButtons = [];
    if (!this.table) return;
    var trs = this.table.querySelectorAll('tbody tr');
    Array.prototype.forEach.call(trs, function (tr, q) {
      var qi = q;
      var cells = [];
      Array.prototype.forEach.call(tr.querySelectorAll('td[data-k]'), function (td) {
        cells[parseInt(td.getAttribute('data-k'), 10)] = td;
        var dq = parseInt(td.getAttribute('data-q'), 10);
        if (isFinite(dq)) qi = dq;
      });
      self.rows[qi] = tr;
      self.cells[qi] = cells;
      var th = tr.querySelector('th[scope="row"]');
      if (th && !th.querySelector('button.course-rowpick')) {
        var b = el('button', 'course-rowpick');
        b.type = 'button';
        while (th.firstChild) b.appendChild(th.firstChild);
        th.appendChild(b);
        b.setAttribute('aria-pressed', 'false');
        b.title = 'Show where this token looks';
        self.rowButtons[qi] = b;
      }
      tr.setAttribute('data-q', String(qi));
    });
    if (this.tableListens) return; // again: rows written later (the playground's long sentences)
    this.tableListens = true;
    this.table.addEventListener('click', function (ev) {
      var tr = ev.target.closest('tr[data-q]');
      if (!tr || !self.table.contains(tr)) return;
      self.fig.setState({ token: self.figureToken(parseInt(tr.getAttribute('data-q'), 10)) }, { user: true });
    });
  };

  AttentionView.prototype.row = function (s) {
    var head = (this.weights[s.layer] || [])[s.head] || [];
    return head[s.token] || [];
  };

  AttentionView.prototype.clampToken = function (t) {
    return Math.max(0, Math.min(t, this.n - 1));
  };

  // The figure's token is a position of its first sentence; a compare figure's second panel
  // shows the token that stands for it (fromFigure, compare.py's Alignment.to2), and a row
  // picked there picks the first sentence's partner (toFigure).
  AttentionView.prototype.ownToken = function (t) {
    return this.clampToken(this.fromFigure ? this.fromFigure[t] : t);
  };
  AttentionView.prototype.figureToken = function (q) {
    return this.toFigure && this.toFigure[q] != null ? this.toFigure[q] : q;
  };

  // A state change in three steps, so that the page is laid out once per change: take the
  // state, redraw the plot (Plotly measures the page: do it before any other DOM write), then
  // write the summary, table, top-3 and small multiples.
  AttentionView.prototype.render = function (state) {
    var prev = this.take(state);
    var drawn = this.redrawPlot();
    this.renderDom(prev);
    return drawn;
  };

  AttentionView.prototype.take = function (state) {
    var prev = this.state;
    this.state = { layer: state.layer, head: state.head, token: this.ownToken(state.token) };
    return prev;
  };

  AttentionView.prototype.renderDom = function (prev) {
    var s = this.state;
    var grid = (this.weights[s.layer] || [])[s.head] || [];
    var headChanged = !prev || prev.layer !== s.layer || prev.head !== s.head;
    if (this.summary) {
      fillSentence(this.summary, 'In layer ' + (s.layer + 1) + ', head ' + (s.head + 1) + ', ',
        this.tokens, grid[s.token] || [], s.token, ' looks most at ');
    }
    if (headChanged) {
      this.renderCells(grid);
      this.renderTop3(grid);
    }
    if (!prev || prev.token !== s.token) this.renderFocus(s.token);
    if (this.mode === 'lines') this.drawLines();
    if (this.minis) this.updateMinis();
  };

  // Rows from..to - 1 of the table (all when not given: the playground fills a long one in parts).
  AttentionView.prototype.renderCells = function (grid, from, to) {
    var end = to == null ? this.cells.length : Math.min(to, this.cells.length);
    for (var q = from || 0; q < end; q++) {
      var cells = this.cells[q];
      if (!cells) continue;
      for (var k = 0; k < cells.length; k++) {
        var td = cells[k];
        if (!td || k > q) continue; // masked cells stay "hidden"
        var w = (grid[q] || [])[k];
        var c = cellColour(w);
        td.textContent = fmt2(w);
        td.style.background = c.background;
        td.style.color = c.color;
      }
    }
  };

  AttentionView.prototype.renderTop3 = function (grid) {
    if (!this.top3) return;
    var items = this.top3.querySelectorAll('li');
    for (var i = 0; i < this.n; i++) {
      var li = items[i];
      if (!li) { li = el('li'); this.top3.appendChild(li); }
      fillSentence(li, '', this.tokens, grid[i] || [], i, ' looks at ');
    }
  };

  AttentionView.prototype.renderFocus = function (token) {
    var self = this;
    if (this.top3) {
      Array.prototype.forEach.call(this.top3.children, function (li, i) { li.classList.toggle('course-focus', i === token); });
    }
    this.rows.forEach(function (tr, q) {
      if (!tr) return;
      var on = q === token;
      tr.classList.toggle('course-focus', on);
      var b = self.rowButtons[q];
      if (b) b.setAttribute('aria-pressed', on ? 'true' : 'false');
    });
  };
