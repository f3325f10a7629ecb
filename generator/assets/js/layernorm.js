  // ------------------------------------------------------------------ layernorm (chapter 2)

  // The three stages of one vector, number by number.
  function initLayerNorm(fig, data) {
    return function () {
      var colours = [cssColour(fig, '--course-line-soft', 'gray'), cssColour(fig, '--course-line-strong', 'navy'), cssColour(fig, '--course-kind-induction', 'firebrick')];
      return plotInto(fig, data.vectors.map(function (v, i) {
        return { type: 'scatter', mode: 'markers', name: data.names[i], x: v.map(function (_, j) { return j + 1; }), y: v,
          marker: { size: 5, color: colours[i] }, hovertemplate: 'dimension %{x}: %{y:.3f}<extra>' + plotEsc(data.names[i]) + '</extra>' };
      }), baseLayout(fig, { height: 320, legend: { orientation: 'h', y: 1.02, yanchor: 'bottom' },  // above the plot, never over it
        xaxis: { title: { text: 'dimension' }, fixedrange: true }, yaxis: { title: { text: 'value' }, fixedrange: true } }));
    };
  }
