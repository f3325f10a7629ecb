  // ------------------------------------------------------------------ chapters 1 and 2: their plots

  // tokens, merges, embedding, layernorm, neighbours, map (CONTRACT.md, "Chapters 1 and 2"): every
  // number was computed when the course was built; these parts only show, hide and plot what the
  // page holds. Their plots share this layout, and are drawn at once (init.js), not lazily.
  function baseLayout(fig, extra) {
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
  }

  // Into the figure's div.course-plot; null where there is none or no Plotly (the tables stay).
  function plotInto(fig, data, layout) {
    var host = fig.querySelector('.course-plot');
    if (!host || !hasPlotly()) return null;
    return Promise.resolve(window.Plotly.react(host, data, layout, PLOT_CONFIG)).catch(function (e) {
      console.warn('course.js: Plotly failed in #' + fig.id, e);
    });
  }
