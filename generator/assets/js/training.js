  // ------------------------------------------------------------------ training curve

  // Chart sizes in CSS pixels, and the colours a chart takes from course.css (light and slate
  // palettes: every line and marker at least 3:1 against the page, gridlines faint).
  var TRAINING = {
    lossHeight: 270, headsHeight: 290,
    margin: { l: 60, r: 20, t: 20, b: 50 },
    legend: { orientation: 'h', x: 0, xanchor: 'left', y: 1.02, yanchor: 'bottom' }, // above the plot, never over it
    batchLine: 1, validationLine: 2, validationMarker: 6, kindLine: 2, kindMarker: 5, chanceLine: 1.5,
    chanceDash: 8, chanceGap: 4, // px: a dash and a gap of a chance line that several kinds share
    tickRoom: 75,                // px of plot width per step label: both charts share their steps
    tickSteps: [1, 2, 2.5, 3, 5]  // × a power of ten: the step between labels
  };
  // The steps both charts label, 0 to the last step: the finest round spacing that fits `room`
  // labels, one that ends on the last step (9,000, the step the text names) where one does.
  function stepTicks(last, room) {
    var fits = [];
    for (var p = 1; p <= last * 10; p *= 10) {
      TRAINING.tickSteps.forEach(function (m) { if (last / (m * p) <= room) fits.push(m * p); });
    }
    fits.sort(function (a, b) { return a - b; });
    var even = fits.filter(function (d) { return Math.abs(last / d - Math.round(last / d)) < 1e-9; });
    return even.length && even[0] <= 2 * fits[0] ? even[0] : fits[0] || last;
  }
  var CHART_COLOURS = { // fallbacks when course.css did not load
    '--course-line-soft': '#6f7d92', '--course-line-strong': '#00224e', '--course-gridline': 'rgba(0, 0, 0, 0.12)'
  };
  var KIND_COLOURS = { 'previous-token': '#0077bb', 'duplicate-token': '#aa3377', induction: '#cc3311', sink: '#117733' };

  function TrainingFigure(fig) {
    var self = this;
    this.el = fig;
    this.id = fig.id;
    this.data = ownData(fig) || {};
    this.host = fig.querySelector('.course-plot');
    this.headsHost = fig.querySelector('.course-heads-plot');
    this.done = null;
    this.toggles = [];
    if (!hasPlotly()) return;
    [[this.host, TRAINING.lossHeight], [this.headsHost, TRAINING.headsHeight]].forEach(function (p) {
      if (p[0]) p[0].style.minHeight = p[1] + 'px';
    });
    Array.prototype.forEach.call(fig.querySelectorAll('.course-table-wrap > table'), function (t) {
      var toggle = tableToggle(t, fig.id);
      if (toggle) self.toggles.push(toggle);
    });
  }
  TrainingFigure.prototype.colour = function (name) { return cssColour(this.el, name, CHART_COLOURS[name]); };
  // One colour per score kind, from course.css (--course-kind-<kind>, light and slate).
  TrainingFigure.prototype.kindColour = function (kind) {
    return cssColour(this.el, '--course-kind-' + kind, KIND_COLOURS[kind] || CHART_COLOURS['--course-line-soft']);
  };
  TrainingFigure.prototype.layout = function (height, yTitle, yRange) {
    var grid = this.colour('--course-gridline');
    var axis = function (title) {
      return { title: { text: title }, fixedrange: true, gridcolor: grid, zerolinecolor: grid, linecolor: grid };
    };
    var xaxis = axis('optimiser step');
    var last = this.lastStep();
    if (last > 0) {
      var room = Math.max(2, Math.floor(((this.el.clientWidth || 600) - TRAINING.margin.l - TRAINING.margin.r) / TRAINING.tickRoom));
      xaxis.range = [0, last];
      xaxis.tickmode = 'linear';
      xaxis.tick0 = 0;
      xaxis.dtick = stepTicks(last, room);
      xaxis.tickformat = ',';
    }
    var layout = {
      height: height, margin: TRAINING.margin,
      xaxis: xaxis, yaxis: axis(yTitle),
      legend: TRAINING.legend, dragmode: false,
      paper_bgcolor: 'rgba(0,0,0,0)', plot_bgcolor: 'rgba(0,0,0,0)',
      font: { family: 'inherit', color: textColour(this.el) }
    };
    if (yRange) layout.yaxis.range = yRange;
    return layout;
  };
  // The loss chart's points: training batches and validation ({step, loss} each).
  TrainingFigure.prototype.lossPoints = function () {
    var d = this.data || {};
    return { steps: d.steps || d.train || [], validation: d.validation || d.val || [] };
  };
  // The last step of the log: both charts end there.
  TrainingFigure.prototype.lastStep = function () {
    var loss = this.lossPoints();
    var steps = loss.steps.concat(loss.validation).map(function (p) { return p.step; })
      .concat(((this.data || {}).heads || {}).steps || []);
    return steps.length ? Math.max.apply(null, steps) : 0;
  };
  // Kinds whose chance levels are equal share one dashed line, its dashes taking their colours in
  // turn: kind i of k draws every k-th dash, from the i-th on (so none hides another).
  function chanceDashes(series) {
    var byLevel = {}, dash = {};
    series.forEach(function (s) {
      if (s.chance == null) return;
      var key = s.chance.toFixed(4);
      (byLevel[key] = byLevel[key] || []).push(s.kind);
    });
    Object.keys(byLevel).forEach(function (key) {
      var kinds = byLevel[key], k = kinds.length, d = TRAINING.chanceDash, g = TRAINING.chanceGap;
      kinds.forEach(function (kind, i) {  // before it: i dashes and gaps of the others; after it: the rest
        dash[kind] = k === 1 ? 'dash' : (i ? '0px,' + i * (d + g) + 'px,' : '') + d + 'px,' + (g + (k - 1 - i) * (d + g)) + 'px';
      });
    });
    return dash;
  }

  // The best head of each kind against step (solid), with its chance level (dashed, same colour).
  TrainingFigure.prototype.headsFigure = function () {
    var h = this.data.heads, self = this, data = [];
    if (!h || !h.steps || !h.steps.length) return null;
    var first = h.steps[0], last = h.steps[h.steps.length - 1];
    var dashes = chanceDashes(h.series || []);
    (h.series || []).forEach(function (s) {
      var colour = self.kindColour(s.kind);
      data.push({ type: 'scatter', mode: 'lines+markers', name: s.label, legendgroup: s.kind, x: h.steps, y: s.scores,
        customdata: s.heads, line: { color: colour, width: TRAINING.kindLine }, marker: { size: TRAINING.kindMarker, color: colour },
        hovertemplate: 'step %{x}: %{y:.2f} (%{customdata})<extra>' + s.label + '</extra>' });
      if (s.chance != null) {
        data.push({ type: 'scatter', mode: 'lines', name: 'chance: ' + s.label, legendgroup: s.kind, showlegend: false,
          x: [first, last], y: [s.chance, s.chance], line: { color: colour, width: TRAINING.chanceLine, dash: dashes[s.kind] },
          hovertemplate: 'chance %{y:.2f}<extra>' + s.label + '</extra>' });
      }
    });
    return { data: data, layout: this.layout(TRAINING.headsHeight, 'best head\'s score (dashed: chance)', [0, 1.02]) };
  };
  TrainingFigure.prototype.lossFigure = function () {
    var loss = this.lossPoints(), steps = loss.steps, val = loss.validation;
    if (!(steps.length || val.length)) return null;
    var x = function (p) { return p.step; };
    var y = function (p) { return p.loss; };
    var data = [];
    if (steps.length) {
      data.push({ type: 'scatter', mode: 'lines', name: 'training batches', x: steps.map(x), y: steps.map(y),
        line: { color: this.colour('--course-line-soft'), width: TRAINING.batchLine },
        hovertemplate: 'step %{x}: %{y:.3f}<extra>training</extra>' });
    }
    if (val.length) {
      var strong = this.colour('--course-line-strong');
      data.push({ type: 'scatter', mode: 'lines+markers', name: 'validation', x: val.map(x), y: val.map(y),
        line: { color: strong, width: TRAINING.validationLine }, marker: { size: TRAINING.validationMarker, color: strong },
        hovertemplate: 'step %{x}: %{y:.3f}<extra>validation</extra>' });
    }
    return { data: data, layout: this.layout(TRAINING.lossHeight, 'loss (nats per token)') };
  };
  function newChart(host, spec) {
    var inner = el('div', 'course-plot-inner');
    clear(host);
    host.appendChild(inner);
    return Promise.resolve(window.Plotly.newPlot(inner, spec.data, spec.layout, PLOT_CONFIG)).then(
      function () { host.style.minHeight = ''; return true; },
      function (e) { console.warn('course.js: Plotly failed', e); return false; });
  }
  TrainingFigure.prototype.plotHeads = function () {
    var spec = this.headsHost && this.headsFigure();
    return spec ? newChart(this.headsHost, spec) : Promise.resolve(true); // nothing to draw, nothing missing
  };
  // After a theme switch: both charts again, in the palette's colours.
  TrainingFigure.prototype.retheme = function () {
    var loss = this.host && this.host.firstChild && this.lossFigure();
    if (loss) window.Plotly.react(this.host.firstChild, loss.data, loss.layout, PLOT_CONFIG);
    var heads = this.headsHost && this.headsHost.firstChild && this.headsFigure();
    if (heads) window.Plotly.react(this.headsHost.firstChild, heads.data, heads.layout, PLOT_CONFIG);
  };
  TrainingFigure.prototype.plot = function () {
    if (this.done) return this.done;
    var self = this;
    var spec = this.host && hasPlotly() && this.lossFigure();
    if (!spec) {
      this.done = Promise.resolve(false);
      return this.done;
    }
    this.done = newChart(this.host, spec).then(function (ok) {
      return self.plotHeads().then(function (headsOk) {
        if (!ok || !headsOk) self.toggles.forEach(function (t) { t.set(true); }); // a chart is missing: its table is the figure
        return ok;
      });
    });
    return this.done;
  };
