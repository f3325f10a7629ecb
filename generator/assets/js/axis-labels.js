  // ------------------------------------------------------------------ one attention panel: its axes' labels (SVG)

  // The tokens along the heatmap's two axes, and the axes' titles, are drawn by course.js in an
  // SVG under Plotly's (whose paper is transparent), not by Plotly. Plotly lays out and measures
  // each tick label as it draws it, about 0.6 ms a label: on this machine a 32-token grid spent
  // 40 of its 80 ms on them, a 256-token grid 190 of 295 ms, and the playground draws a new grid
  // on every edit. The margins already hold the labels (heatmapGeometry: labelRoom,
  // labelOverhang). The places below are Plotly's own, read off its drawing, so the figures
  // look as they did. Tokens go in as textContent: data, never markup.
  var AXIS_LABELS = {
    xGap: 4.8,          // grid top to a column label's turning point, plus the label's font size
    yGap: 8.4,          // grid left to the end of a row label
    baseline: 0.35,     // a row label's baseline below its row's centre, in ems
    titleFont: 14,      // the axes' titles (Plotly's: the layout's 12 px + 2)
    xTitleY: 17.25,     // the column title's baseline, from the figure's top edge
    yTitleX: 16.57      // the row title's baseline (it is turned), from the figure's left edge
  };

  // The labels for the plot as Plotly has laid it out (its _size: a margin pushed, a height
  // fixed); drawn again only when the layout or the tokens change, not for a new head or token.
  AttentionView.prototype.drawLabels = function () {
    var div = this.plotDiv, full = div && div._fullLayout, size = full && full._size;
    if (!size || !this.n || !this.geom) return;
    var g = this.geom, n = this.n, A = AXIS_LABELS;
    var key = [g.key, g.width, size.l, size.t, size.w, size.h, full.width, full.height].join();
    var svg = this.labelSvg;
    if (!svg || svg.parentNode !== div) {
      svg = this.labelSvg = svgEl('svg', { 'aria-hidden': 'true' }, 'course-axis-labels');
      this.labelKey = null;
    }
    svg.style.fill = this.fontColour || '';
    if (this.labelKey === key) return;
    this.labelKey = key;
    clear(svg);
    svg.setAttribute('width', full.width);
    svg.setAttribute('height', full.height);
    var c = this.labels(), names = g.narrow ? c.narrowPlain : c.plain;
    var font = g.upright ? HEATMAP.smallTickFont : HEATMAP.tickFont;
    var col = size.w / n, row = size.h / n, turn = g.upright ? 90 : HEATMAP.tickAngle;
    var cols = svgEl('g', { 'font-size': font, 'text-anchor': 'start' }, 'course-axis-keys');
    var rows = svgEl('g', { 'font-size': font, 'text-anchor': 'end' }, 'course-axis-queries');
    var top = size.t - (A.xGap + font);
    for (var i = 0; i < n; i++) {
      if (i % g.stride === 0) {
        var x = size.l + (i + 0.5) * col;
        var t = svgEl('text', { x: x, y: top + font / 2, transform: 'rotate(-' + turn + ',' + x + ',' + top + ')', 'data-i': i });
        t.textContent = names[i];
        cols.appendChild(t);
      }
      var r = svgEl('text', { x: size.l - A.yGap, y: size.t + (i + 0.5) * row + A.baseline * font, 'data-i': i });
      r.textContent = names[i];
      rows.appendChild(r);
    }
    var midY = size.t + size.h / 2;
    var keyTitle = svgEl('text', { x: size.l + size.w / 2, y: A.xTitleY, 'font-size': A.titleFont, 'text-anchor': 'middle' }, 'course-axis-title');
    keyTitle.textContent = 'looks at (key)';
    var queryTitle = svgEl('text', { x: A.yTitleX, y: midY, 'font-size': A.titleFont, 'text-anchor': 'middle',
      transform: 'rotate(-90,' + A.yTitleX + ',' + midY + ')' }, 'course-axis-title');
    queryTitle.textContent = 'token (query)';
    [cols, rows, keyTitle, queryTitle].forEach(function (part) { svg.appendChild(part); });
    // under Plotly's SVG: its hover boxes are drawn over the labels
    if (svg.parentNode !== div) div.insertBefore(svg, div.firstChild);
  };
