  // ------------------------------------------------------------------ chapters 1 and 2
  // tokens, merges, embedding, layernorm, neighbours, map (CONTRACT.md, "Chapters 1 and 2"). Every
  // number was computed when the course was built; this only shows, hides and plots what the page holds.

  var textColour = function (fig) { return getComputedStyle(fig).color || '#222'; };
  var baseLayout = function (fig, extra) {
    var layout = { paper_bgcolor: 'rgba(0,0,0,0)', plot_bgcolor: 'rgba(0,0,0,0)', dragmode: false,
      font: { family: 'inherit', color: textColour(fig) }, margin: { l: 70, r: 20, t: 10, b: 50 } };
    Object.keys(extra).forEach(function (k) { layout[k] = extra[k]; });
    // quiet gridlines in both palettes (Plotly's own are white on slate); a visible zero line
    ['xaxis', 'yaxis'].forEach(function (axis) {
      if (!layout[axis]) return;
      layout[axis].gridcolor = cssColour(fig, '--course-gridline', 'rgba(0, 0, 0, 0.12)');
      layout[axis].zerolinecolor = cssColour(fig, '--course-line-soft', 'gray');
    });
    return layout;
  };
  var plotInto = function (fig, traces, layout) {
    var host = fig.querySelector('.course-plot');
    if (!host || !hasPlotly()) return null;
    return Promise.resolve(window.Plotly.react(host, traces, layout, PLOT_CONFIG)).catch(function (e) {
      console.warn('course.js: Plotly failed in #' + fig.id, e);
    });
  };


  var redraw = [];  // chapters 1-2's plots on the page shown now: a new palette redraws them (watchTheme)
  var RESIZE_DELAY = 150;  // ms of quiet after the last resize event before the map is redrawn
  var resizeWatched = false;
  var DRAWN_ONCE = {};  // what a chapter 1-2 kind's KINDS entry returns: set up, nothing to keep

  // A chapter 1-2 set-up as a KINDS entry: the figure keeps its static view (marked first, as
  // its tables are the figure), then setUp(fig, data) may return a draw function, drawn now and
  // kept for redraws.
  function chapterPlot(setUp) {
    return function (fig) {
      markStatic(fig);
      document.documentElement.classList.add('course-js');
      var draw = setUp ? setUp(fig, ownData(fig) || {}) : null;
      if (typeof draw === 'function') {
        draw();
        redraw.push({ fig: fig, draw: draw, width: fig.clientWidth });
        watchResize();
      }
      return DRAWN_ONCE;
    };
  }

  // a new width (a phone turned): the map's height and its label spots follow it
  function watchResize() {
    if (resizeWatched) return;
    resizeWatched = true;
    var resizing = null;
    window.addEventListener('resize', function () {
      clearTimeout(resizing);
      resizing = setTimeout(function () {
        redraw.forEach(function (r) {
          var width = r.fig.clientWidth;
          if (r.fig.getAttribute('data-kind') === 'map' && width && width !== r.width) { r.width = width; r.draw(); }
        });
      }, RESIZE_DELAY);
    });
  }
