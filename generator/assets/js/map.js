  // ------------------------------------------------------------------ map (chapter 2)

  // Common tokens as grey dots, the lesson's words marked and named.
  // One unit is as long across as up, so distances on the map are the distances the table's
  // "closest on the map" measures, and the first direction's wider spread shows as width.
  var MAP = { margin: { l: 70, r: 20, t: 10, b: 50 }, narrowMargin: { l: 52, r: 6, t: 10, b: 46 }, narrow: 480,
    minHeight: 260, maxHeight: 560, pad: 0.06,
    labelPx: 6, labelHeight: 14, dotPx: 6, clearPx: 13, numberClearPx: 5 };  // px per character: a little over the 12 px font's average
  var LABEL_SPOTS = [['top center', 0, -1], ['bottom center', 0, 1], ['middle right', 1, 0], ['middle left', -1, 0],
    ['top right', 1, -1], ['top left', -1, -1], ['bottom right', 1, 1], ['bottom left', -1, 1]];

  function paddedRange(values) {
    var lo = Math.min.apply(null, values), hi = Math.max.apply(null, values), pad = MAP.pad * (hi - lo || 1);
    return [lo - pad, hi + pad];
  }

  // Each marked word's label goes to the first spot around its dot that overlaps no label placed
  // before it and keeps clear of every other marked dot (clearPx, so that no label reads as
  // another dot's; pixels, from the map's scale). Where the word has no free spot (a phone: 8 of
  // the 12 words had none at 375 px), its number in the key under the map (1, 2, ...) takes one:
  // a number is narrower. A dot left with neither (seldom) is still in the hover and the table.
  function labelSpots(marks, toPx, size) {
    var around = function (r) {
      return marks.map(function (t) { var p = toPx(t); return { l: p.x - r, r: p.x + r, t: p.y - r, b: p.y + r }; });
    };
    var wide = around(MAP.clearPx), tight = around(MAP.numberClearPx), labels = [];
    var hits = function (a, b) { return a.l < b.r && b.l < a.r && a.t < b.b && b.t < a.b; };
    // a word keeps clear of the other dots by clearPx; a number, read with its key, only off them
    var place = function (i, label, numbered) {
      var dots = numbered ? tight : wide;
      var p = toPx(marks[i]), w = MAP.labelPx * label.length, h = MAP.labelHeight, best = null;
      LABEL_SPOTS.some(function (spot) {
        var cx = p.x + spot[1] * (MAP.dotPx + w / 2), cy = p.y + spot[2] * (MAP.dotPx + h / 2);
        var box = { l: cx - w / 2, r: cx + w / 2, t: cy - h / 2, b: cy + h / 2 };
        var outside = box.l < 0 || box.t < 0 || box.r > size.width || box.b > size.height ? 1 : 0;
        var clashes = outside + dots.filter(function (b, j) { return j !== i && hits(box, b); }).length +
          labels.filter(function (b) { return hits(box, b); }).length;
        if (!best || clashes < best.clashes) best = { spot: spot[0], box: box, clashes: clashes };
        return clashes === 0;
      });
      if (best.clashes === 0) labels.push(best.box);
      return best;
    };
    // every word first, then the numbers of those left: a word never loses its spot to a number
    var spots = marks.map(function (t, i) {
      var best = place(i, String(t.display), false);
      return { spot: best.spot, shown: best.clashes === 0, numbered: false };
    });
    spots.forEach(function (s, i) {
      if (s.shown) return;
      var best = place(i, String(i + 1), true);
      if (best.clashes === 0) spots[i] = { spot: best.spot, shown: true, numbered: true };
    });
    return spots;
  }

  // Says under the map which marked words are numbered there, and which have no label (a line
  // course.js owns).
  function noteUnlabelled(fig, host, marks, spots) {
    var note = fig.querySelector('.course-map-unlabelled');
    if (!note) {
      note = document.createElement('p');
      note.className = 'course-note course-map-unlabelled';
      host.insertAdjacentElement('afterend', note);
    }
    var numbered = [], left = [];
    marks.forEach(function (t, i) {
      if (spots[i].numbered) numbered.push((i + 1) + ' ' + t.display);
      else if (!spots[i].shown) left.push(t.display);
    });
    var lines = [];
    if (numbered.length) lines.push('Numbered on the map to keep the labels apart: ' + numbered.join(', ') + '.');
    if (left.length) lines.push('Left unlabelled: ' + left.join(', ') + '. Point at a red dot, or read the table.');
    note.hidden = !lines.length;
    note.textContent = lines.join(' ');
  }

  function initMap(fig, data) {
    return function () {
      var points = data.tokens.concat(data.marks);
      var xr = paddedRange(points.map(function (t) { return t.x; })), yr = paddedRange(points.map(function (t) { return t.y; }));
      var host = fig.querySelector('.course-plot');
      var boxWidth = (host && host.clientWidth) || 640;
      var margin = boxWidth < MAP.narrow ? MAP.narrowMargin : MAP.margin;  // a phone: every pixel to the points
      var plotWidth = Math.max(120, boxWidth - margin.l - margin.r);
      var height = Math.round(Math.min(MAP.maxHeight, Math.max(MAP.minHeight,
        margin.t + margin.b + plotWidth * (yr[1] - yr[0]) / (xr[1] - xr[0]))));
      var plotHeight = height - margin.t - margin.b;
      // label spots for a scale in px per unit (the same across and up)
      var labelsAt = function (unit) {
        var spots = labelSpots(data.marks, function (t) { return { x: (t.x - xr[0]) * unit, y: (yr[1] - t.y) * unit }; },
          { width: (xr[1] - xr[0]) * unit, height: (yr[1] - yr[0]) * unit });
        return { spots: spots,
          text: data.marks.map(function (t, i) { return !spots[i].shown ? '' : spots[i].numbered ? String(i + 1) : plotEsc(t.display); }),
          textposition: spots.map(function (s) { return s.spot; }) };
      };
      var unit = Math.min(plotWidth / (xr[1] - xr[0]), plotHeight / (yr[1] - yr[0]));  // before Plotly makes room for the legend
      var labels = labelsAt(unit);
      var grey = { type: 'scatter', mode: 'markers', name: 'common tokens', x: data.tokens.map(function (t) { return t.x; }),
        y: data.tokens.map(function (t) { return t.y; }), text: data.tokens.map(function (t) { return plotEsc(t.display); }),
        marker: { size: 5, color: cssColour(fig, '--course-line-soft', 'gray') }, hovertemplate: '%{text}<extra></extra>' };
      var marked = { type: 'scatter', mode: 'markers+text', name: 'marked words', x: data.marks.map(function (t) { return t.x; }),
        y: data.marks.map(function (t) { return t.y; }), hovertext: data.marks.map(function (t) { return plotEsc(t.display); }),
        text: labels.text, textposition: labels.textposition, cliponaxis: false,
        textfont: { shadow: 'auto' },  // a halo in the page's colour: a label over grey dots stays legible
        marker: { size: 9, color: cssColour(fig, '--course-kind-induction', 'firebrick') }, hovertemplate: '%{hovertext}<extra>marked</extra>' };
      var pct = function (x) { return Math.round(100 * x) + '%'; };
      var drawn = plotInto(fig, [grey, marked], baseLayout(fig, { height: height, margin: margin, legend: { orientation: 'h', y: 1.02, yanchor: 'bottom' },
        xaxis: { title: { text: 'first direction (' + pct(data.explained[0]) + ' of the spread)' }, fixedrange: true, zeroline: false, range: xr, constrain: 'domain' },
        yaxis: { title: { text: 'second direction (' + pct(data.explained[1]) + ')' }, fixedrange: true, zeroline: false, range: yr,
          scaleanchor: 'x', scaleratio: 1, constrain: 'domain' } }));
      // the legend took some height: place the labels again on the scale Plotly drew
      return drawn && drawn.then(function () {
        var axis = host._fullLayout && host._fullLayout.xaxis;
        if (!axis) return;  // Plotly failed (plotInto has said so)
        var drawnUnit = axis._length / (xr[1] - xr[0]);
        if (Math.abs(drawnUnit - unit) >= 0.5) labels = labelsAt(drawnUnit);
        noteUnlabelled(fig, host, data.marks, labels.spots);
        return window.Plotly.restyle(host, { text: [labels.text], textposition: [labels.textposition] }, [1]);
      });
    };
  }
