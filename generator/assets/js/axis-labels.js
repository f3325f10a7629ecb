  // ------------------------------------------------------------------ one attention panel: its axes and colour bar (SVG)

  // The tokens along the heatmap's two axes, their tick marks, the axes' titles and the colour
  // bar are drawn by course.js in an SVG under Plotly's (whose paper is transparent), not by
  // Plotly. Plotly lays out and measures each tick label as it draws it, about 0.6 ms a label: on
  // a 2-core machine a 32-token grid spent 40 of its 80 ms on them, a 256-token grid 190 of
  // 295 ms, and its tick marks without labels 7 and 50-60 ms more; its colour bar
  // is a margin pusher, laid out again on every draw (9 ms of a 32-token grid, 26-40 ms of a
  // 256-token one), and the playground draws a new grid on every edit. The margins already hold
  // all of it (heatmapGeometry: labelRoom, labelOverhang, colourbarRoom). The places below are
  // Plotly's own, read off its drawing, so the figures look as they did. Tokens go in as
  // textContent: data, never markup.
  var AXIS_LABELS = {
    xGap: 4.8,          // grid top to a column label's turning point, plus the label's font size
    yGap: 8.4,          // grid left to the end of a row label
    mark: 5,            // tick marks: outward from 1 px off the grid, Plotly's length (colour: course.css)
    baseline: 0.35,     // a row label's baseline below its row's centre, in ems
    titleFont: 14,      // the axes' titles (Plotly's: the layout's 12 px + 2)
    xTitleY: 17.25,     // the column title's baseline, from the figure's top edge (+ geometry's slackTop)
    yTitleX: 16.57,     // the row title's baseline (it is turned), from the figure's left edge (+ slackLeft)
    // the colour bar: beside the grid (len: its share of the grid's height), or under it on a
    // phone (heatmapGeometry's narrow), its title "weight" then on its left, the bar's top
    // barGap + barPad px below the grid: fixed, as the bottom margin (narrowBottom) is (Plotly's
    // gap was 2% of the grid's height, and pushed the margin: under a 121-token grid the numbers
    // fell off the plot)
    barPad: 10, barLen: 0.9, barGap: 4,
    barTickGap: 3.4, barTitleX: 52.4,        // beside: numbers and title, from the grid's right edge
    barTitleGap: 7.2, barTickDrop: 27.4, barTitleDrop: 13.1 // under: title to bar; baselines below the bar's top
  };
  var colourbars = 0; // each bar's gradient has an id of its own on the page

  // index -> px from the plot's edge, as the Plotly axis `ax` maps it (l2p); without one, the
  // centre of the index's n-th of `length` px from `start`
  function axisPx(ax, start, length, n) {
    if (ax && typeof ax.l2p === 'function') return function (i) { return start + ax.l2p(i); };
    return function (i) { return start + (i + 0.5) * length / n; };
  }

  // The labels for the plot as Plotly has laid it out: its _size (a margin pushed, a height
  // fixed) and its axes' own mapping from a token's index to px (the y axis ranges over the
  // focus row's outline too, so its rows are not quite h / n). Drawn again only when the layout
  // or the tokens change, not for a new head or token.
  AttentionView.prototype.drawLabels = function () {
    var div = this.plotDiv, full = div && div._fullLayout, size = full && full._size;
    if (!size || !this.n || !this.geom) return;
    var g = this.geom, n = this.n, A = AXIS_LABELS;
    var colAt = axisPx(full.xaxis, size.l, size.w, n), rowAt = axisPx(full.yaxis, size.t, size.h, n);
    var key = [g.key, g.width, size.l, size.t, size.w, size.h, full.width, full.height, colAt(0), colAt(n - 1), rowAt(0), rowAt(n - 1)].join();
    var svg = this.labelSvg;
    if (!svg || svg.parentNode !== div) {
      svg = this.labelSvg = svgEl('svg', { 'aria-hidden': 'true' }, 'course-axis-labels');
      this.labelKey = null;
    }
    svg.style.fill = this.fontColour || '';
    var c = this.labels(); // a new object when the tokens change
    if (this.labelKey === key && this.labelsFor === c) return;
    this.labelKey = key;
    this.labelsFor = c;
    clear(svg);
    svg.setAttribute('width', full.width);
    svg.setAttribute('height', full.height);
    var names = g.narrow ? c.narrowPlain : c.plain;
    var font = g.upright ? HEATMAP.smallTickFont : HEATMAP.tickFont;
    var turn = g.upright ? 90 : HEATMAP.tickAngle;
    var cols = svgEl('g', { 'font-size': font, 'text-anchor': 'start' }, 'course-axis-keys');
    var rows = svgEl('g', { 'font-size': font, 'text-anchor': 'end' }, 'course-axis-queries');
    var top = size.t - (A.xGap + font), marks = [];
    for (var i = 0; i < n; i++) {
      var y = rowAt(i);
      marks.push('M' + (size.l - 1) + ',' + y + 'h-' + A.mark);
      if (i % g.stride === 0) {
        var x = colAt(i);
        marks.push('M' + x + ',' + (size.t - 1) + 'v-' + A.mark);
        var t = svgEl('text', { x: x, y: top + font / 2, transform: 'rotate(-' + turn + ',' + x + ',' + top + ')', 'data-i': i });
        t.textContent = names[i];
        cols.appendChild(t);
      }
      var r = svgEl('text', { x: size.l - A.yGap, y: y + A.baseline * font, 'data-i': i });
      r.textContent = names[i];
      rows.appendChild(r);
    }
    var midY = size.t + size.h / 2;
    var xTitleY = A.xTitleY + (g.slackTop || 0), yTitleX = A.yTitleX + (g.slackLeft || 0);
    var keyTitle = svgEl('text', { x: size.l + size.w / 2, y: xTitleY, 'font-size': A.titleFont, 'text-anchor': 'middle' }, 'course-axis-title');
    keyTitle.textContent = 'looks at (key)';
    var queryTitle = svgEl('text', { x: yTitleX, y: midY, 'font-size': A.titleFont, 'text-anchor': 'middle',
      transform: 'rotate(-90,' + yTitleX + ',' + midY + ')' }, 'course-axis-title');
    queryTitle.textContent = 'token (query)';
    var ticks = svgEl('path', { d: marks.join(''), 'stroke-width': 1, fill: 'none', 'shape-rendering': 'crispEdges' }, 'course-axis-marks');
    [ticks, cols, rows, keyTitle, queryTitle, this.colourbar(size)].forEach(function (part) { svg.appendChild(part); });
    // under Plotly's SVG: its hover boxes are drawn over the labels
    if (svg.parentNode !== div) div.insertBefore(svg, div.firstChild);
  };

  // The colour bar, for the grid's box `size` (Plotly's _size): the weight's colours from 0 to 1
  // with 0, 0.25 .. 1 beside them (0, 0.5, 1 under a short grid on a phone), and its title.
  AttentionView.prototype.colourbar = function (size) {
    var A = AXIS_LABELS, g = this.geom, n = this.n, beside = !g.narrow, thick = HEATMAP.colourbarThickness;
    var few = !beside && g.cell * n < HEATMAP.fewColourTicksBelow;
    var values = few ? CB_FEW_TICKVALS : CB_TICKVALS, texts = few ? CB_FEW_TICKTEXT : CB_TICKTEXT;
    var bar = svgEl('g', { 'data-orientation': beside ? 'v' : 'h' }, 'course-colourbar');
    var id = 'course-colourbar-' + (++colourbars);
    var grad = svgEl('linearGradient', beside ? { id: id, x1: 0, y1: 1, x2: 0, y2: 0 } : { id: id, x1: 0, y1: 0, x2: 1, y2: 0 });
    COLORSCALE.forEach(function (stop) { grad.appendChild(svgEl('stop', { offset: stop[0], 'stop-color': stop[1] })); });
    var defs = svgEl('defs');
    defs.appendChild(grad);
    bar.appendChild(defs);
    var title = svgEl('text', { 'font-size': A.titleFont, 'text-anchor': 'middle' }, 'course-colourbar-title');
    title.textContent = 'weight';
    var x0, y0, w, h, at;
    if (beside) {
      var right = size.l + size.w, len = A.barLen * size.h;
      x0 = right + A.barPad; w = thick; h = len - 2 * A.barPad; y0 = size.t + (size.h - len) / 2 + A.barPad;
      at = function (v) { return { x: right + A.barPad + thick + A.barTickGap, y: y0 + h * (1 - v) + A.baseline * HEATMAP.tickFont, anchor: 'start' }; };
      var tx = right + A.barTitleX, ty = size.t + size.h / 2;
      [['x', tx], ['y', ty], ['dominant-baseline', 'central'], ['transform', 'rotate(-90,' + tx + ',' + ty + ')']].forEach(function (a) { title.setAttribute(a[0], a[1]); });
    } else {
      var titleW = textWidths(['weight'], A.titleFont, this.root)[0];
      y0 = size.t + size.h + A.barGap + A.barPad; h = thick;
      x0 = size.l + A.barPad + titleW + A.barTitleGap; w = Math.max(size.l + size.w - A.barPad - x0, thick);
      at = function (v) { return { x: x0 + w * v, y: y0 + A.barTickDrop, anchor: 'middle' }; };
      title.setAttribute('x', size.l + A.barPad + titleW / 2);
      title.setAttribute('y', y0 + A.barTitleDrop);
    }
    bar.appendChild(svgEl('rect', { x: x0, y: y0, width: w, height: h, fill: 'url(#' + id + ')',
      'stroke-width': 1 }, 'course-colourbar-fill'));
    var ticks = svgEl('g', { 'font-size': HEATMAP.tickFont }, 'course-colourbar-ticks');
    values.forEach(function (v, i) {
      var p = at(v), t = svgEl('text', { x: p.x, y: p.y, 'text-anchor': p.anchor });
      t.textContent = texts[i];
      ticks.appendChild(t);
    });
    bar.appendChild(ticks);
    bar.appendChild(title);
    return bar;
  };
