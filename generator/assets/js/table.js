  // ------------------------------------------------------------------ "Show as a table"

  // With a plot on screen, the coloured table that carries the same numbers (the no-JavaScript
  // and print view) is one click away instead of a second copy below it: a disclosure button
  // (aria-expanded, aria-controls) just before the table's box (in a grid's view, at the start
  // of the foot under the heatmap), and the box gets hidden. Print
  // (course.css) shows the table whatever the button says.
  var TABLE_SHOW = 'Show as a table';
  var TABLE_HIDE = 'Hide the table';

  function uniqueId(base) {
    var id = base, k = 2;
    while (document.getElementById(id)) id = base + '-' + k++;
    return id;
  }

  function tableToggle(table, idBase) {
    var box = table && table.closest('.course-table-wrap');
    if (!box || box.__courseToggle) return box ? box.__courseToggle : null;
    if (!box.id) box.id = uniqueId((idBase || 'course') + '-table');
    var button = el('button', 'course-table-toggle');
    button.type = 'button';
    button.setAttribute('aria-controls', box.id);
    var toggle = {
      button: button,
      box: box,
      set: function (open) {
        box.hidden = !open;
        box.classList.toggle('course-table-closed', !open);
        box.classList.toggle('course-table-open', open);
        button.setAttribute('aria-expanded', open ? 'true' : 'false');
        button.textContent = open ? TABLE_HIDE : TABLE_SHOW;
      }
    };
    button.addEventListener('click', function () {
      toggle.set(button.getAttribute('aria-expanded') !== 'true'); // the scroll-box observer sees the new size
    });
    // a grid's view has a foot under its heatmap: the button leads it, on the note's line
    var foot = box.parentNode.querySelector(':scope > .course-view-foot');
    if (foot) foot.insertBefore(button, foot.firstChild);
    else box.parentNode.insertBefore(button, box);
    toggle.set(false);
    box.__courseToggle = toggle;
    return toggle;
  }
