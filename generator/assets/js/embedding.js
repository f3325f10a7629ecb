  // ------------------------------------------------------------------ embedding (chapter 2)

  // Token rows, position rows or their sum: one token's as bars, or every token's as a heatmap.
  function initEmbedding(fig, data) {
    window.embedding = data;
    var controls = fig.querySelector('.course-controls');
    var select = fig.querySelector('select[data-control="part"]');
    var viewSelect = fig.querySelector('select[data-control="view"]');
    var tokenSelect = fig.querySelector('select[data-control="token"]');
    var labels = data.tokens.map(function (t) { return plotEsc(tokDisplay(t)); });
    // one colour scale for all three parts, so a colour means the same number after a switch
    var reach = Math.max.apply(null, Object.keys(data.parts).map(function (p) {
      return Math.max.apply(null, data.parts[p].map(function (row) { return Math.max.apply(null, row.map(Math.abs)); }));
    }));
    // position rows belong to places in the sentence, not to the tokens that sit there
    var places = labels.map(function (_, i) { return 'position ' + i; });
    // One token's numbers as bars, blue above zero and orange below (the colours of chapter 5's
    // bars), on one scale for every token of the part (its largest number), so that a switch of
    // token keeps the axis and the bars of two tokens compare by height.
    function drawBars(part, names) {
      var top = Math.max.apply(null, data.parts[part].map(function (r) { return Math.max.apply(null, r.map(Math.abs)); }));
      var at = tokenSelect ? Number(tokenSelect.value) : labels.length - 1;
      var row = data.parts[part][at] || [];
      var dims = row.map(function (_, j) { return j + 1; });
      var partName = { token: 'token row', position: 'position row', sum: 'sum' }[part];
      return plotInto(fig, [{
        type: 'bar', x: dims, y: row, marker: { color: row.map(function (v) { return v < 0 ? '#b35806' : '#2166ac'; }) },
        hovertemplate: 'dimension %{x}: %{y:.3f}<extra></extra>'
      }], baseLayout(fig, {
        height: 300, bargap: 0.15,
        xaxis: { title: { text: 'dimension (' + names[at] + ', ' + partName + ')' }, range: [0.5, row.length + 0.5], fixedrange: true },
        yaxis: { title: { text: 'value' }, range: [-top * 1.05, top * 1.05], fixedrange: true, zeroline: true }
      }));
    }
    function draw() {
      var part = select ? select.value : 'sum';
      var z = data.parts[part];
      var names = part === 'position' ? places : labels;
      var view = viewSelect ? viewSelect.value : 'heatmap';
      Array.prototype.forEach.call(fig.querySelectorAll('[data-for-view]'), function (c) { c.hidden = c.getAttribute('data-for-view') !== view; });
      if (view === 'bars') return drawBars(part, names);
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
    [select, viewSelect, tokenSelect].forEach(function (c) { if (c) c.addEventListener('change', draw); });
    // the heatmap holds every number, so its table (the first 8 of each) is one click away, as in chapter 3
    if (hasPlotly()) tableToggle(fig.querySelector('table.course-embedding'), fig.id);
    return draw;
  }
