  // ------------------------------------------------------------------ heads that share one key (`heads: group`)

  // The grids of a group move together: a layer, head or token picked in one takes the others to
  // the same layer and token and to the other query heads that read the same key and value, and
  // the label names the group now shown (its text comes from the page: data-groups, one list of
  // groups per layer). Without this the label would go stale after the first click.
  function groupOf(groups, layer, head) {
    var row = groups[layer] || [];
    for (var i = 0; i < row.length; i++) {
      if (row[i].heads.indexOf(head) >= 0) return row[i];
    }
    return null;
  }

  function initHeadGroups() {
    Array.prototype.forEach.call(document.querySelectorAll('.course-head-group'), function (box) {
      if (box.__courseGroup) return;
      var grids = box.querySelectorAll('.course-head-group-figures > figure.course-fig');
      var members = Array.prototype.map.call(grids, function (el) { return el.__course; })
        .filter(function (f) { return f instanceof AttentionFigure; });
      if (members.length < 2 || members.length !== grids.length) return; // not all set up yet
      var groups;
      try { groups = JSON.parse(box.getAttribute('data-groups')); } catch (e) { return; }
      if (!Array.isArray(groups)) return;
      box.__courseGroup = true;
      var label = box.querySelector('.course-head-group-label');
      members.forEach(function (f) {
        f.el.addEventListener('course:statechange', function () {
          var s = f.state;
          var g = groupOf(groups, s.layer, s.head);
          if (!g) return;
          if (label && label.textContent !== g.label) label.textContent = g.label;
          box.setAttribute('aria-label', g.label);
          var others = g.heads.filter(function (h) { return h !== s.head; });
          if (!others.length) return;
          var k = 0;
          members.forEach(function (m) {
            if (m === f) return;
            var want = { layer: s.layer, head: others[k++ % others.length], token: s.token };
            var now = m.target || m.state;
            // a grid already where it should be is left alone: that ends the exchange of events
            if (now.layer !== want.layer || now.head !== want.head || now.token !== want.token) m.setState(want, {});
          });
        });
      });
    });
  }

