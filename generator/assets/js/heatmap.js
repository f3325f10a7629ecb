  // ------------------------------------------------------------------ one attention panel: its heatmap (Plotly's cells)

  // Heatmap layout, in CSS pixels. Cells share the width the box gives; a cell narrower than
  // cellMin makes the plot wider than its box (it then scrolls inside it, never the page). Rows
  // are as tall as a cell is wide, within rowMin..rowMax (a line of text needs less height than
  // four digits need width). Numbers are drawn in the cells only where four characters fit at
  // cellFont, or at cellFontMin (legible); otherwise the value is in the hover text (a tap on a touch screen) and in
  // the table. The left and top margins are the tick labels' room, measured here in the page's
  // font (labelRoom), not left to Plotly's automatic margins: those measure the drawn labels and
  // draw the plot again, 30-45 ms of the first paint.
  var HEATMAP = {
    // cellMax, rowMax: also course.css, "the view". A short grid's cells are as large as the text
    // column gives (issue 46: 7 tokens, 225 px wide with 11 px numbers, were smaller than its own table)
    cellMax: 72, cellMin: 12, rowMin: 14, rowMax: 40,
    // the cells' numbers: cellFont where four digits fit, else down to cellFontMin (a phone), never smaller
    cellFont: 12, cellFontMin: 11, tickFont: 12, smallTickFont: 10,
    textChars: 4, charWidth: 0.62, textPad: 4, textMinRow: 16,
    marginMin: 60, marginRight: 20, marginBottom: 10,
    // around the longest label: the axis title (14 px), its standoff (6) and Plotly's padding,
    // measured against Plotly's automatic margins (34.4 px left, 38.0 px top), rounded up
    labelRoomLeft: 35, labelRoomTop: 39, tickAngle: 50,
    labelPadRight: 4, // past the last columns' labels, when they reach beyond the grid (labelOverhang)
    // room for the colour bar (its pad, the bar, its numbers, its title) right of the grid, or
    // under it below narrowBelow: what Plotly would push the margins to, so it never draws twice
    colourbarRoom: 84, colourbarThickness: 12,
    narrowBelow: 560, narrowBottom: 66,
    fewColourTicksBelow: 220, // a colour bar under a grid narrower than this has 3 numbers, not 5 (Plotly would turn them)
    tickChars: 14, narrowTickChars: 10,
    rotatedBelow: 18, strideBelow: 11, // x labels turn upright below 18 px, every other one below 11
    heightMin: 220, defaultWidth: 700,
    // Up to this many tokens the cells are set apart by 1 px lines in the plot's background
    // colour, one path over the grid (gridLines), not Plotly's xgap/ygap: with gaps Plotly draws
    // a rectangle per cell on a page-sized canvas and encodes it as a PNG (a 32-token grid:
    // newPlot 31 -> 23 ms; 256 tokens: 517 -> 186 ms); without them, one pixelated image.
    gapsUpTo: 48
  };
  var CB_TICKVALS = [0, 0.25, 0.5, 0.75, 1];
  var CB_TICKTEXT = ['0', '0.25', '0.5', '0.75', '1'];
  var CB_FEW_TICKVALS = [0, 0.5, 1];
  var CB_FEW_TICKTEXT = ['0', '0.5', '1'];

  // The width of each of `texts` at `size` px in the font of `node` (a canvas measures without a
  // layout; without one, a generous guess per character).
  var measureCanvas = null;
  function textWidths(texts, size, node) {
    if (!measureCanvas) measureCanvas = document.createElement('canvas').getContext('2d');
    if (!measureCanvas) return texts.map(function (t) { return Array.from(t).length * 0.7 * size; });
    var cs = getComputedStyle(node);
    measureCanvas.font = (cs.fontStyle || 'normal') + ' ' + (cs.fontWeight || '400') + ' ' + size + 'px ' + cs.fontFamily;
    return texts.map(function (t) { return measureCanvas.measureText(t).width; });
  }

  // The margins the tick labels need: left for the rows' labels, top for the columns' labels
  // (slanted, or upright on small cells), each with its axis title. widths: every label's width.
  function labelRoom(widths, upright) {
    var H = HEATMAP;
    var size = upright ? H.smallTickFont : H.tickFont;
    var w = Math.max.apply(null, [0].concat(widths || []));
    var a = H.tickAngle * Math.PI / 180;
    var high = upright ? w : w * Math.sin(a) + size * Math.cos(a);
    var left = Math.ceil(w + H.labelRoomLeft), top = Math.ceil(high + H.labelRoomTop);
    // slack: the margin beyond the labels' room when short labels leave it at marginMin (the
    // axis titles move in by as much, to stay beside the labels, where Plotly put them)
    return { left: Math.max(H.marginMin, left), top: Math.max(H.marginMin, top),
             slackLeft: Math.max(0, H.marginMin - left), slackTop: Math.max(0, H.marginMin - top) };
  }

  // How far the columns' labels reach right of the grid: each starts at its column's centre and
  // runs up and to the right (slanted) or straight up (upright, one line of text wide), so a long
  // label near the last column sticks out into the right margin.
  function labelOverhang(widths, upright, cell) {
    var H = HEATMAP;
    var size = upright ? H.smallTickFont : H.tickFont;
    var a = H.tickAngle * Math.PI / 180;
    var n = (widths || []).length, most = 0;
    for (var i = 0; i < n; i++) {
      var reach = upright ? size : widths[i] * Math.cos(a) + size * Math.sin(a);
      most = Math.max(most, reach - (n - 1 - i + 0.5) * cell);
    }
    return most;
  }

  // Everything about the layout that depends on the width of the box the plot is drawn in.
  // widths(narrow, size): every tick label's width at that font size, the narrow labels or the
  // wide ones (labelRoom); without it, no labels.
  // textN: a compare figure's longer sentence. Its panels show cell numbers only if every panel
  // can (equal panels: the one with more tokens has the smaller cells), so that a reader comparing
  // them never reads numbers in one and none in the other.
  function heatmapGeometry(n, width, widths, textN) {
    var H = HEATMAP;
    var w = width > 0 ? width : H.defaultWidth;
    if (!widths) widths = function () { return []; };
    var wide = labelRoom(widths(false, H.tickFont), false);
    // a phone, unless the box is as wide as the grid at its largest cell (course.css "the view")
    var narrow = w < H.narrowBelow && w < wide.left + H.colourbarRoom + n * H.cellMax;
    var right = narrow ? H.marginRight : H.colourbarRoom;
    var room = narrow ? labelRoom(widths(true, H.tickFont), false) : wide;
    // count: the tokens sharing the width, n unless said (textN below)
    var cellFor = function (left, r, count) { return Math.max(H.cellMin, Math.min(H.cellMax, (w - left - r) / Math.max(count || n, 1))); };
    var rowFor = function (c) { return Math.max(H.rowMin, Math.min(H.rowMax, c)); };
    var upright = cellFor(room.left, right) < H.rotatedBelow;
    if (upright) room = labelRoom(widths(narrow, H.smallTickFont), true); // smaller labels: the cells only grow
    var cell = cellFor(room.left, right);
    // room on the right for the last columns' labels (a wider margin makes the cells, and so the
    // room each label has, smaller: a few rounds settle it). Every label counts, also those a
    // stride leaves out: the reach can only be smaller then.
    var shown = widths(narrow, upright ? H.smallTickFont : H.tickFont);
    for (var round = 0; round < 4; round++) {
      var need = Math.ceil(labelOverhang(shown, upright, cell) + H.labelPadRight);
      if (need <= right) break;
      right = need;
      cell = cellFor(room.left, right);
    }
    var stride = cell < H.strideBelow ? 2 : 1;
    var row = rowFor(cell);
    var bottom = narrow ? H.narrowBottom : H.marginBottom;
    var minWidth = Math.ceil(room.left + right + n * H.cellMin);
    var textCell = textN > n ? cellFor(room.left, right, textN) : cell;
    var textSize = H.cellFont;
    while (textSize > H.cellFontMin && textCell < H.textChars * H.charWidth * textSize + H.textPad) textSize--;
    var showText = textCell >= H.textChars * H.charWidth * textSize + H.textPad && rowFor(textCell) >= H.textMinRow;
    return {
      width: width > 0 ? Math.max(Math.floor(width), minWidth) : undefined,
      narrow: narrow,
      cell: cell,
      showText: showText,
      textSize: textSize,
      upright: upright,
      stride: stride,
      minWidth: minWidth,
      row: row,
      left: room.left, top: room.top, right: right, bottom: bottom,
      slackLeft: room.slackLeft, slackTop: room.slackTop,
      height: Math.max(H.heightMin, Math.round(row * n) + room.top + bottom),
      key: [narrow, showText, textSize, upright, stride, Math.round(row), room.left, room.top, right].join()
    };
  }

  // The lines between the cells of an n x n grid, in its axes' units, as one SVG path (a shape
  // of Plotly's): drawn in the plot's background colour, they look as gaps between the cells do.
  function gridLines(n) {
    var d = [];
    for (var i = 1; i < n; i++) d.push('M' + (i - 0.5) + ',-0.5V' + (n - 0.5) + 'M-0.5,' + (i - 0.5) + 'H' + (n - 0.5));
    return d.join('');
  }

  // What stays the same for every head: the positions and the labels, wide and narrow.
  AttentionView.prototype.labels = function () {
    if (this.constant) return this.constant;
    var idx = [];
    for (var i = 0; i < this.n; i++) idx.push(i);
    var tokens = this.tokens;
    var plain = function (max) { return tokens.map(function (t) { return shorten(tokDisplay(t), max); }); };
    var wide = plain(HEATMAP.tickChars), narrow = plain(HEATMAP.narrowTickChars);
    this.constant = { idx: idx, plain: wide, narrowPlain: narrow,
      widths: {},
      grid: this.n > 1 && this.n <= HEATMAP.gapsUpTo ? gridLines(this.n) : null };
    return this.constant;
  };

  AttentionView.prototype.geometry = function (width) {
    var c = this.labels(), root = this.root;
    var widths = function (narrow, size) {
      var key = (narrow ? 'n' : 'w') + size;
      if (!(key in c.widths)) c.widths[key] = textWidths(narrow ? c.narrowPlain : c.plain, size, root);
      return c.widths[key];
    };
    return heatmapGeometry(this.n, width, widths, this.fig.maxTokens);
  };

  AttentionView.prototype.headData = function (l, h) {
    var key = l + ':' + h;
    if (this.cache[key]) return this.cache[key];
    var grid = (this.weights[l] || [])[h] || [];
    var n = this.n;
    var disp = this.tokens.map(function (t) { return plotEsc(tokDisplay(t)); });
    var z = [], text = [], hover = [];
    for (var q = 0; q < n; q++) {
      var zr = [], tr = [], hr = [];
      for (var k = 0; k < n; k++) {
        if (k > q) {
          zr.push(null); tr.push('');
          hr.push(disp[q] + ' cannot look ahead at ' + disp[k]);
        } else {
          var w = (grid[q] || [])[k];
          zr.push(w); tr.push(fmt2(w));
          hr.push(disp[q] + ' \u2192 ' + disp[k] + ': ' + fmt2(w));
        }
      }
      z.push(zr); text.push(tr); hover.push(hr);
    }
    this.cache[key] = { z: z, text: text, hover: hover };
    return this.cache[key];
  };

  // A new figure object for Plotly.react on each change, built around arrays that stay the same
  // objects (react compares arrays by reference): a token change then only moves the focus
  // rectangle, and a head change only swaps z, text and hover text (cached per head).
  AttentionView.prototype.figureSpec = function () {
    var s = this.state;
    var n = this.n;
    var d = this.headData(s.layer, s.head);
    var g = this.geom || this.geometry(0);
    var c = this.labels();
    var bg = this.maskedBg || MASKED_BG;
    var trace = {
      type: 'heatmap', x: c.idx, y: c.idx, z: d.z, text: d.text, hovertext: d.hover,
      texttemplate: g.showText ? '%{text}' : '', textfont: { size: g.textSize || HEATMAP.cellFont },
      hovertemplate: '%{hovertext}<extra></extra>', hoverongaps: true,
      zmin: 0, zmax: 1, zauto: false, colorscale: COLORSCALE,
      showscale: false // course.js draws the colour bar (axis-labels.js)
    };
    var layout = {
      width: g.width,
      height: g.height + (this.heightFix || 0),
      margin: { l: g.left, r: g.right, t: g.top, b: g.bottom },
      // no tick marks, labels or titles of Plotly's: course.js draws them (axis-labels.js)
      xaxis: { ticks: '', showticklabels: false, side: 'top', range: [-0.5, n - 0.5], fixedrange: true, showgrid: false, zeroline: false,
        automargin: false },
      yaxis: { ticks: '', showticklabels: false, autorange: 'reversed', fixedrange: true, showgrid: false, zeroline: false, automargin: false },
      // the cells' lines first: the focus row's outline is drawn over them
      shapes: (c.grid ? [{ type: 'path', path: c.grid, xref: 'x', yref: 'y', line: { color: bg, width: 1 } }] : []).concat([
        { type: 'rect', xref: 'x', yref: 'y', x0: -0.5, x1: n - 0.5,
          y0: s.token - 0.5, y1: s.token + 0.5, line: { color: FOCUS_COLOUR, width: 3 },
          fillcolor: 'rgba(0,0,0,0)' }]),
      plot_bgcolor: bg, paper_bgcolor: 'rgba(0,0,0,0)',
      font: { family: 'inherit', color: this.fontColour || '#222' },
      hoverlabel: { namelength: -1 }, dragmode: false, uirevision: 'fixed'
    };
    return { data: [trace], layout: layout };
  };

  // Colours that follow the page's theme (mkdocs-material light / slate).
  AttentionView.prototype.readTheme = function () {
    var cs = getComputedStyle(this.root);
    this.fontColour = cs.color;
    this.maskedBg = (cs.getPropertyValue('--course-masked-bg') || '').trim() || MASKED_BG;
  };

  AttentionView.prototype.ensurePlot = function () {
    var self = this;
    if (this.plotted) return this.plotted;
    if (!this.plotHost || !hasPlotly() || !this.n || !this.state) return Promise.resolve(false);
    this.readTheme();
    this.geom = this.geometry(this.plotHost.clientWidth);
    var inner = el('div', 'course-plot-inner');
    inner.style.minWidth = this.geom.minWidth + 'px';
    clear(this.plotHost);
    this.plotHost.appendChild(inner);
    this.plotDiv = inner;
    var spec = this.figureSpec();
    mark('course:newplot-start');
    this.plotted = Promise.resolve(window.Plotly.newPlot(inner, spec.data, spec.layout, PLOT_CONFIG))
      .then(function () {
        mark('course:newplot-end');
        self.drawLabels();
        self.plotReady = true;
        self.plotHost.style.minHeight = '';
        self.watchWidth();
        self.listen();
        return afterPaint();
      }).then(function () {
        painted(self.fig.id);
        self.fitRows(); // after the first paint: rarely needed, never waited for
        return true;
      }, function (err) {
        console.warn('course.js: Plotly failed', err);
        if (self.tableToggle) self.tableToggle.set(true); // the table is the figure, then
        return false;
      });
    return this.plotted;
  };

  // A new width (a phone turned, a sidebar closed): redraw at that width, once per frame, with
  // what the new cell size allows (cell text, upright labels, where the colour bar goes). The
  // plot's width is set here, not left to Plotly's own resizing, so both change together.
  AttentionView.prototype.watchWidth = function () {
    var self = this;
    if (!window.ResizeObserver || this.widthObserver) return;
    this.widthObserver = new ResizeObserver(oncePerFrame(function () {
      var width = self.plotHost.clientWidth;
      if (!width) return;
      self.sizeMinis();
      var g = self.geometry(width);
      if (self.geom && g.width === self.geom.width) return;
      if (!self.geom || g.key !== self.geom.key) self.heightFix = 0;
      self.geom = g;
      self.plotDiv.style.minWidth = g.minWidth + 'px';
      self.react();
    }));
    this.widthObserver.observe(this.plotHost);
  };

  // The summary above the grid takes one more line for a token with longer neighbours (a phone):
  // it keeps the tallest height it has had at this width, so the grid under it moves down once
  // at most, never back and forth as the reader steps through the tokens.
  AttentionView.prototype.holdSummary = function () {
    var summary = this.summary;
    if (!window.ResizeObserver || !summary || this.summaryObserver) return;
    var width = 0, tallest = 0;
    this.summaryObserver = new ResizeObserver(function () {
      var w = summary.clientWidth;
      if (w !== width) { // a new width: the lines break anew, start again from the natural height
        width = w;
        tallest = 0;
        summary.style.minHeight = '';
      }
      var h = summary.getBoundingClientRect().height;
      if (h > tallest + 0.5) {
        tallest = h;
        summary.style.minHeight = h + 'px';
      }
    });
    this.summaryObserver.observe(summary);
  };

  // A click on a row picks that token.
  AttentionView.prototype.listen = function () {
    var self = this;
    this.plotDiv.on('plotly_click', function (ev) {
      var pt = ev && ev.points && ev.points[0];
      if (!pt) return;
      var q = Math.round(Number(pt.y));
      if (isFinite(q)) self.fig.setState({ token: self.figureToken(q) }, { user: true });
    });
  };

  AttentionView.prototype.react = function () {
    var self = this;
    var spec = this.figureSpec();
    return Promise.resolve(window.Plotly.react(this.plotDiv, spec.data, spec.layout, PLOT_CONFIG))
      .then(function () { self.drawLabels(); return self.fitRows(); });
  };

  // A safety net: the margins are course.js's own (labelRoom) and Plotly draws nothing that
  // pushes one, but were the rows ever lower than the geometry's row, the plot grows by the
  // difference, so labels never overlap.
  AttentionView.prototype.fitRows = function () {
    var full = this.plotDiv && this.plotDiv._fullLayout;
    if (!full || !full._size || !this.geom || !this.n) return undefined;
    var missing = Math.ceil((this.geom.row - full._size.h / this.n) * this.n);
    if (missing <= 0) return undefined;
    this.heightFix = (this.heightFix || 0) + missing;
    var self = this;
    return Promise.resolve(window.Plotly.relayout(this.plotDiv, { height: full.height + missing }))
      .then(function () { self.drawLabels(); });
  };

  // Synchronous when the plot is there; after the first draw when it is being drawn; nothing
  // when it is not drawn yet (it is drawn later from the current state).
  AttentionView.prototype.redrawPlot = function () {
    var self = this;
    if (this.mode === 'lines') { this.plotStale = true; return Promise.resolve(); } // hidden: redrawn when shown
    if (this.plotReady) return this.react();
    if (this.plotted) {
      return this.plotted.then(function (ok) { if (ok) return self.react(); });
    }
    return Promise.resolve();
  };
