  // ------------------------------------------------------------------ rope-distance

  // One rotary head's score against the distance between one query and one key (CONTRACT.md,
  // `rope-distance`): the pair's line to maxDistance, the head's mean line dashed, the real
  // distance marked. The table the page holds is the same numbers, behind "Show as a table".
  function initRopeDistance(fig, data) {
    if (!data.curve || !data.mean) return null;
    var table = fig.querySelector('.course-table-wrap > table');
    if (table && hasPlotly()) tableToggle(table, fig.id);
    return function () {
      var top = data.maxDistance;
      var xs = [];
      for (var i = 0; i <= top; i++) xs.push(i);
      var pair = cssColour(fig, '--course-line-strong', 'navy');
      var mean = cssColour(fig, '--course-line-soft', 'gray');
      var mark = cssColour(fig, '--course-kind-induction', 'firebrick');
      var traces = [
        { type: 'scatter', mode: 'lines', name: 'this pair', x: xs, y: data.curve.slice(0, top + 1),
          line: { color: pair, width: 2 }, hovertemplate: 'distance %{x}: %{y:.2f}<extra>this pair</extra>' },
        { type: 'scatter', mode: 'lines', name: 'mean of the head', x: xs, y: data.mean,
          line: { color: mean, width: 2, dash: 'dash' }, hovertemplate: 'distance %{x}: %{y:.2f}<extra>mean</extra>' }
      ];
      if (data.distance <= top) {
        traces.push({ type: 'scatter', mode: 'markers', name: 'real distance', x: [data.distance], y: [data.score],
          marker: { color: mark, size: 10, symbol: 'diamond' }, hovertemplate: 'real distance %{x}: %{y:.2f}<extra></extra>' });
      }
      return plotInto(fig, traces, baseLayout(fig, { height: 320, legend: { orientation: 'h', y: 1.02, yanchor: 'bottom' },
        xaxis: { title: { text: 'distance (tokens back)' }, fixedrange: true, range: [0, top] },
        yaxis: { title: { text: 'score' }, fixedrange: true } }));
    };
  }
