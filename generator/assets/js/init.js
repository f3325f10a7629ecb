  // ------------------------------------------------------------------ init

  var api = {
    figures: figures,
    paintedAt: null,
    sizesRemembered: false,  // every off-screen block rendered once (sizes.js)
    setState: function (id, state) {
      var f = figuresById[id];
      if (!f || !f.setState) return Promise.reject(new Error('course.js: no attention figure ' + id));
      return f.setState(state, { user: true });
    },
    fmt: fmt,
    signed2: signed2,  // as format.diff2 (the playground's ablation figure)
    roundHalfEven: roundHalfEven,  // Python's round() of a float (its colours)
    cellColour: cellColour,
    tokDisplay: tokDisplay, tokSpoken: tokSpoken, tokSpan: tokSpan,  // a token shown and said (the playground's too)
    tableToggle: tableToggle,  // "Show as a table" (CONTRACT.md, chapter 2's embedding)
    onSchemeChange: onSchemeChange,  // a redraw in the other palette
    onMaterialPage: onMaterialPage,  // Material's instant-navigation hook
    enhance: function () { init(); },  // sets up figures added since (the playground's, play.js)
    afterPaint: afterPaint,  // a Promise: the next frame painted (the playground waits so for its scores)
    scrollBoxes: initScrollBoxes,  // boxes added since that scroll sideways become tab stops (the playground's tables)
    COLORSCALE: COLORSCALE
  };

  // Every figure kind (data-kind) and what sets it up. `figure`: an object course.figures lists
  // (setState, the URL hash), its plot drawn as it nears the screen (schedule.js). `now`: a
  // chapter 1-2 figure, set up at once; it returns its plot's draw function if it has a plot,
  // called at once and again in the other palette (the map: at a new width too). `now: null`:
  // nothing to set up (neighbours: its tables are the figure). Any other kind stays as the HTML has it.
  var KINDS = {
    attention: { figure: function (fig) { return new AttentionFigure(fig, 'attention'); } },
    compare: { figure: function (fig) { return new AttentionFigure(fig, 'compare'); } },
    stepper: { figure: initStepper },
    softmax: { figure: initSoftmax },
    scoreboard: { figure: initScoreboard },
    training: { figure: function (fig) { return new TrainingFigure(fig); } },
    tokens: { now: initTokens },
    merges: { now: initMerges },
    embedding: { now: initEmbedding },
    layernorm: { now: initLayerNorm },
    map: { now: initMap },
    neighbours: { now: null },
    architecture: { now: null },  // drawn diagrams: static SVG, nothing to set up
    arrows: { now: null },
    "kv-cache": { now: null },  // a plain table
    masks: { now: null },  // drawn diagram
    guess: { now: initGuess },  // not a figure: a question's choices (form.course-guess)
    'score-split': { now: initScoreSplit },
    'rope-distance': { now: initRopeDistance },
    pronouns: { now: null }  // the her/his sweep: a static table, nothing to set up
  };

  var drawn = [];  // the chapter 1-2 plots of the page shown now: {fig, draw, width}
  var RESIZE_DELAY = 150;  // ms of quiet after the last resize event before the map is redrawn

  function init() {
    mark('course:init');
    if (drawn.length && !drawn[0].fig.isConnected) drawn.length = 0;  // a new page (instant navigation)
    if (figures.length && !figures[0].el.isConnected) { // a new page (instant navigation)
      figures.length = 0;
      traces.length = 0;
      figuresById = {};
      paintedAt = null;
    }
    var found = document.querySelectorAll('figure.course-fig, form.course-guess');
    var plottable = [];
    var fresh = false;
    Array.prototype.forEach.call(found, function (fig) {
      if (fig.__course || !parsedWhole(fig)) return;
      if (fig.getAttribute('data-pending') === 'true' || fig.classList.contains('course-pending')) {
        markStatic(fig);
        return;
      }
      var kind = fig.getAttribute('data-kind');
      var entry = Object.prototype.hasOwnProperty.call(KINDS, kind) ? KINDS[kind] : {};
      if ('now' in entry) {
        fig.__course = true;
        setUpNow(fig, entry.now);
        return;
      }
      var f = null;
      try {
        if (entry.figure) f = entry.figure(fig);
      } catch (e) {
        console.warn('course.js: could not enhance #' + fig.id, e);
      }
      fig.__course = f || true;
      if (!f) {
        markStatic(fig);
        return;
      }
      fresh = true;
      figures.push(f);
      if (fig.id) figuresById[fig.id] = f;
      if (f.plot) plottable.push(f);
    });
    initHeadGroups();
    window.traces = traces;
    window.trace = traces[0];
    var heatmaps = plottable.some(function (f) { return f instanceof AttentionFigure; });
    // Scroll boxes measure every box on the page: after the first heatmap is on screen.
    if (heatmaps) afterFirstPaint(initScrollBoxes);
    else initScrollBoxes();
    // once the whole page is parsed, and after the first heatmap where there is one
    if (document.readyState !== 'loading') {
      if (figures.some(function (f) { return f instanceof AttentionFigure; })) afterFirstPaint(rememberSizes);
      else whenIdle(rememberSizes);
    }
    if (document.readyState !== 'loading') noteFirstLiveNumber(); // once every number is parsed
    if (!fresh) return;
    document.documentElement.classList.add('course-js');
    // Space is kept for the plots on screen now, and for the rest after the first paint: a plot
    // in a block that is not rendered yet (course.css, content-visibility) costs a layout of
    // that block to measure, about 2 ms each.
    // A link to a figure (#fig-3:...) scrolls there at once: then every plot keeps its exact
    // space first, or those above the figure would move the page when they are measured.
    var fromHash = parseHash(location.hash);
    // a linked figure in a closed tab is shown before anything is measured
    var linked = fromHash.length && figuresById[fromHash[0].id];
    if (linked) revealFigure(linked.el);
    var onScreen = fromHash.length ? plottable : plottable.filter(function (f) { return visibleNow(f.el); });
    reserveSpace(onScreen);
    var offScreen = plottable.filter(function (f) { return onScreen.indexOf(f) < 0; });
    if (offScreen.length) afterFirstPaint(function () { reserveSpace(offScreen); });
    if (fromHash.length) {
      applyHash(false);
      var first = figuresById[fromHash[0].id];
      if (first) first.el.scrollIntoView({ block: 'start' });
    }
    schedulePlots(plottable);
    initTabs();
    if (!heatmaps) scheduleIdleParts();
  }

  // A chapter 1-2 figure: not one of course.figures, and its plot is drawn at once.
  function setUpNow(fig, setUp) {
    document.documentElement.classList.add('course-js');
    if (!setUp) return;
    try {
      var draw = setUp(fig, ownData(fig) || {});
      if (typeof draw === 'function') {
        draw();
        drawn.push({ fig: fig, draw: draw, width: fig.clientWidth });
      }
    } catch (e) {
      console.warn('course.js: could not enhance #' + fig.id, e);
    }
  }

  // While the page is still being parsed, a figure is whole once the parser has gone past it:
  // it, or a box around it, has a next sibling (the rest of it is set up at DOMContentLoaded).
  function parsedWhole(node) {
    if (document.readyState !== 'loading') return true;
    for (; node && node !== document.body; node = node.parentNode) {
      if (node.nextSibling) return true;
    }
    return false;
  }

  // A figure course.js could not set up keeps its tables (course.css shows a static view's).
  function markStatic(fig) {
    Array.prototype.forEach.call(fig.querySelectorAll('.course-view'), function (v) {
      v.classList.add('course-view-static');
      var box = v.querySelector(':scope > .course-table-wrap');
      if (box && box.__courseToggle) box.__courseToggle.set(true);
    });
  }

  function afterFirstPaint(fn) {
    if (paintedAt !== null) fn();
    else document.addEventListener('course:painted', function () { fn(); }, { once: true });
  }

  function reserveSpace(plottable) {
    var views = [];
    plottable.forEach(function (f) { views = views.concat(f.views || []); });
    views.forEach(function (v) { v.measure(); }); // reads only: one layout
    views.forEach(function (v) { v.reserve(); }); // writes only
  }

  window.addEventListener('hashchange', function () {
    if (location.hash) applyHash(true);
    else backToOpening(); // Back to the page's own entry, which had no hash: each figure as the page opened
  });

  // Only an address with no hash at all: a link to a heading (#section) leaves the figures alone.
  function backToOpening() {
    figures.forEach(function (f) {
      if (!f.inHash || !f.initial || !f.setState) return;
      var opening = { layer: f.initial.layer, head: f.initial.head, token: f.initial.token };
      if (f.mode && f.mode !== 'grid') opening.view = 'grid'; // every figure opens as a grid
      Promise.resolve(f.setState(opening, { fromHash: true, back: true })).then(function () {
        f.inHash = false; // as it opened: in no address until the reader changes it again
        f.viewChosen = false;
      });
    });
  }

  // A new width (a phone turned): the map's height and its label spots follow it, and so does
  // each lines view on screen.
  var resizing = null;
  window.addEventListener('resize', function () {
    clearTimeout(resizing);
    resizing = setTimeout(function () {
      drawn.forEach(function (d) {
        var width = d.fig.clientWidth;
        if (d.fig.getAttribute('data-kind') === 'map' && width && width !== d.width) { d.width = width; d.draw(); }
      });
      figures.forEach(function (f) { (f.views || []).forEach(function (v) { if (v.fitLines) v.fitLines(); }); });
    }, RESIZE_DELAY);
  });

  // mkdocs-material's palette toggle switches data-md-color-scheme: recolour text and masked
  // cells, and draw the chapter 1-2 plots again in the new text colour.
  function watchTheme() {
    onSchemeChange(function () {
      figures.forEach(function (f) {
        (f.views || []).forEach(function (v) {
          if (!v.plotted) return;
          v.readTheme();
          v.redrawPlot();
        });
        if (f instanceof TrainingFigure && f.done) {
          f.done.then(function (ok) { if (ok) f.retheme(); });
        }
      });
      drawn.forEach(function (d) { d.draw(); });
    });
  }

  window.softmax = softmax;
  window.courseReady = courseReady;
  window.course = api;
  window.traces = traces;
  window.trace = undefined;

  // This file runs right after the page's first heatmap (the course extension marks the place,
  // overrides/main.html puts the scripts there; elsewhere they follow the article): the figures
  // parsed so far start at once, so the first heatmap is drawn while the rest of the page is
  // still being parsed, and the others at DOMContentLoaded. A link to a figure (#fig-3:...)
  // waits for the whole page, since the figure it names may not be parsed yet.
  if (document.readyState === 'loading') {
    if (!parseHash(location.hash).length) init();
    document.addEventListener('DOMContentLoaded', function () { init(); watchTheme(); });
  } else {
    init();
    watchTheme();
  }
  // mkdocs-material's instant navigation swaps pages without a reload.
  onMaterialPage(function () { init(); });
