  // ------------------------------------------------------------------ embedding (chapter 2)

  // The heatmap of token rows, position rows or their sum.
  function initEmbedding(fig, data) {
    window.embedding = data;
    var controls = fig.querySelector('.course-controls');
    var select = fig.querySelector('select[data-control="part"]');
    var labels = data.tokens.map(function (t) { return plotEsc(t.display); });
    // one colour scale for all three parts, so a colour means the same number after a switch
    var reach = Math.max.apply(null, Object.keys(data.parts).map(function (p) {
      return Math.max.apply(null, data.parts[p].map(function (row) { return Math.max.apply(null, row.map(Math.abs)); }));
    }));
    // position rows belong to places in the sentence, not to the tokens that sit there
    var places = labels.map(function (_, i) { return 'position ' + i; });
    function draw() {
      var part = select ? select.value : 'sum';
      var z = data.parts[part];
      var names = part === 'position' ? places : labels;
      var dims = z[0].map(function (_, j) { return j + 1; });
      return plotInto(fig, [{
        type: 'heatmap', z: z, x: dims, y: labels.map(function (_, i) { return i; }), colorscale: 'RdBu', reversescale: true,
        zmin: -reach, zmax: reach,
        customdata: z.map(function (row, i) { return row.map(function () { return names[i]; }); }),
        hovertemplate: '%{customdata}, dimension %{x}: %{z:.3f}<extra></extra>', colorbar: { thickness: 12 }
      }], baseLayout(fig, {
        height: 80 + 26 * labels.length,
        xaxis: { title: { text: 'dimension' }, fixedrange: true },
        yaxis: { autorange: 'reversed', tickmode: 'array', tickvals: labels.map(function (_, i) { return i; }), ticktext: names, fixedrange: true,
          automargin: true }  // room for the longest token (<|endoftext|>)
      }));
    }
    if (controls) controls.hidden = false;
    if (select) select.addEventListener('change', draw);
    // the heatmap holds every number, so its table (the first 8 of each) is one click away, as in chapter 3
    if (hasPlotly()) tableToggle(fig.querySelector('table.course-embedding'), fig.id);
    return draw;
  }
