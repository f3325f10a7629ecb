  // ------------------------------------------------------------------ head-type scores

  // generator/heads.py's four kinds on the reader's sentence: for each head, the mean over the
  // rows where the pattern exists of the weight the row puts on the pattern's keys (0-based
  // positions: previous-token w[i][i-1] and sink w[i][0] for i >= 2; duplicate-token the earlier
  // copies of token i, induction the tokens right after them). null where no row has the pattern.
  var SCORE_KINDS = ['previous-token', 'duplicate-token', 'induction', 'sink'];

  function patternTargets(kind, ids) {
    return ids.map(function (id, i) {
      if (kind === 'previous-token') return i >= 2 ? [i - 1] : [];
      if (kind === 'sink') return i >= 2 ? [0] : [];
      var shift = kind === 'induction' ? 1 : 0, seen = {};
      for (var j = 0; j < i; j++) if (ids[j] === id) seen[j + shift] = true;
      return Object.keys(seen).map(Number).sort(function (a, b) { return a - b; });
    });
  }

  // run: Model.run's result; returns {kind: [[score of (layer, head)]] or null} and each kind's
  // chance level (a head that spreads every row evenly over what it can see).
  function headScores(run, ids) {
    var T = run.n, out = { scores: {}, chance: {} };
    SCORE_KINDS.forEach(function (kind) {
      var targets = patternTargets(kind, ids), rows = 0, even = 0;
      targets.forEach(function (keys, i) { if (keys.length) { rows++; even += keys.length / (i + 1); } });
      if (!rows) { out.scores[kind] = null; out.chance[kind] = null; return; }
      out.chance[kind] = even / rows;
      out.scores[kind] = run.layers.map(function (layer) {
        return layer.heads.map(function (h) {
          var total = 0;
          targets.forEach(function (keys, i) { keys.forEach(function (k) { total += h.weights[i * T + k]; }); });
          return Math.min(1, Math.max(0, total / rows));
        });
      });
    });
    return out;
  }
