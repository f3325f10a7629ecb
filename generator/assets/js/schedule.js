  // ------------------------------------------------------------------ first paint, lazy plots

  // Times in ms, distances in CSS px.
  var LAZY = {
    partsIdleTimeout: 3000, partsFallbackDelay: 300, // the shown heads' parts: on idle after the first paint
    plotIdleTimeout: 2000, plotFallbackDelay: 50,    // the other displayed plots, one per idle period
    nearScreen: 100,                                 // "visible now" reaches this far past the viewport
    observeMargin: '300px 0px'                       // a hidden plot is drawn this close to the screen
  };

  var paintedAt = null;
  function painted(id) {
    if (paintedAt !== null) return;
    paintedAt = performance.now();
    api.paintedAt = paintedAt;
    document.dispatchEvent(new CustomEvent('course:painted', { detail: { id: id, t: paintedAt } }));
    scheduleIdleParts();
  }

  function scheduleIdleParts() {
    if (config.idleParts === false) return;
    // the shown heads' parts only (their arrays, for the Code views); another head's loads when
    // it is shown, every head's with courseReady() or a Code tab
    var loadParts = function () {
      figures.forEach(function (f) {
        if (!(f instanceof AttentionFigure)) return;
        f.views.forEach(function (v) {
          if (v.trace) loadHead(v.trace, f.state.layer, f.state.head).catch(function (e) { console.warn(e.message || e); });
        });
      });
    };
    if (window.requestIdleCallback) window.requestIdleCallback(loadParts, { timeout: LAZY.partsIdleTimeout });
    else setTimeout(loadParts, LAZY.partsFallbackDelay);
  }

  function visibleNow(node) {
    if (!node.getClientRects().length) return false;
    var r = node.getBoundingClientRect();
    return r.bottom > -LAZY.nearScreen && r.top < (window.innerHeight || 800) + LAZY.nearScreen;
  }

  function nextTask() {
    return new Promise(function (resolve) { setTimeout(resolve, 0); });
  }

  function whenIdle(fn) {
    if (window.requestIdleCallback) window.requestIdleCallback(fn, { timeout: LAZY.plotIdleTimeout });
    else setTimeout(fn, LAZY.plotFallbackDelay);
  }

  // The first visible figure is drawn at once; the other visible ones one after another once it
  // has painted; then, one per idle period, the rest of the displayed ones (so a reader who
  // scrolls finds them drawn). Figures that are not displayed (a closed <details>, a hidden tab)
  // are drawn when they come into view, at their real size.
  function schedulePlots(plottable) {
    var now = [], later = [];
    plottable.forEach(function (f) { (visibleNow(f.el) ? now : later).push(f); });
    var chain = Promise.resolve();
    function queue(f) {
      chain = chain.then(function () { return f.plot(); });
      return chain;
    }
    now.forEach(function (f, i) {
      if (i) chain = chain.then(nextTask);
      queue(f);
    });
    if (!later.length) return;
    if ('IntersectionObserver' in window) {
      var io = new IntersectionObserver(function (entries) {
        entries.forEach(function (e) {
          if (!e.isIntersecting) return;
          io.unobserve(e.target);
          var f = figuresById[e.target.id] || e.target.__course;
          if (f && f.plot) queue(f);
        });
      }, { rootMargin: LAZY.observeMargin });
      later.forEach(function (f) { io.observe(f.el); });
    }
    var rest = later.slice();
    function step() {
      var f;
      while ((f = rest.shift()) && !f.el.getClientRects().length) { /* hidden: drawn when shown */ }
      if (f) queue(f).then(function () { if (rest.length) whenIdle(step); });
    }
    chain.then(function () { whenIdle(step); });
  }
