  // ------------------------------------------------------------------ scoreboard

  function initScoreboard(fig) {
    Array.prototype.forEach.call(fig.querySelectorAll('table.course-sortable'), function (table) {
      var buttons = table.querySelectorAll('thead button[data-sort]');
      // the caption (the table's name) says the order the rows are in: scoreboard.html writes
      // "highest score first", the order it ships
      var caption = table.caption, named = caption ? caption.textContent : '';
      var ORDER = 'highest score first';
      Array.prototype.forEach.call(buttons, function (btn) {
        btn.addEventListener('click', function () {
          var th = btn.closest('th');
          var col = th.cellIndex;
          var key = btn.getAttribute('data-sort');
          var cur = th.getAttribute('aria-sort');
          var dir;
          if (cur === 'ascending') dir = 'descending';
          else if (cur === 'descending') dir = 'ascending';
          else dir = key === 'score' ? 'descending' : 'ascending';
          var tbody = table.tBodies[0];
          var rows = Array.prototype.map.call(tbody.rows, function (r, i) {
            var cell = r.cells[col];
            var raw = cell ? (cell.getAttribute('data-value') != null ? cell.getAttribute('data-value') : cell.textContent) : '';
            var num = parseFloat(String(raw).replace('\u2212', '-'));
            return { r: r, i: +(r.getAttribute('data-order') || i), num: num, str: String(raw).trim() };
          });
          rows.forEach(function (o) { if (o.r.getAttribute('data-order') == null) o.r.setAttribute('data-order', String(o.i)); });
          var sign = dir === 'ascending' ? 1 : -1;
          rows.sort(function (a, b) {
            var c;
            if (!isNaN(a.num) && !isNaN(b.num)) c = a.num - b.num;
            else c = a.str.localeCompare(b.str, undefined, { numeric: true });
            return sign * c || a.i - b.i;
          });
          var frag = document.createDocumentFragment();
          rows.forEach(function (o) { frag.appendChild(o.r); });
          tbody.appendChild(frag);
          Array.prototype.forEach.call(table.querySelectorAll('thead th'), function (h) {
            if (h === th) h.setAttribute('aria-sort', dir);
            else if (h.querySelector('button[data-sort]')) h.setAttribute('aria-sort', 'none');
          });
          if (caption && named.indexOf(ORDER) >= 0) {
            caption.textContent = named.replace(ORDER, key === 'score' && dir === 'descending' ? ORDER
              : 'sorted by ' + btn.textContent.trim().toLowerCase() + ', ' + (dir === 'ascending' ? 'lowest' : 'highest') + ' first');
          }
        });
      });
    });
    return { el: fig, id: fig.id };
  }
