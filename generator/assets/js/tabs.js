  // ------------------------------------------------------------------ content tabs

  function tabLabel(input) {
    if (!input || !input.id) return '';
    var set = input.closest('.tabbed-set');
    var label = set && set.querySelector('label[for="' + input.id + '"]');
    return label ? label.textContent.trim() : '';
  }

  function isCodeTab(input) { return /^code\b/i.test(tabLabel(input)); }

  function initTabs() {
    // Label each panel, so that print (all panels one after another) says which is which.
    Array.prototype.forEach.call(document.querySelectorAll('.tabbed-set'), function (set) {
      if (set.__courseTabs) return;
      set.__courseTabs = true;
      var inputs = set.querySelectorAll(':scope > input[type="radio"]');
      var blocks = set.querySelectorAll(':scope > .tabbed-content > .tabbed-block');
      Array.prototype.forEach.call(blocks, function (b, i) {
        var t = tabLabel(inputs[i]);
        if (t && !b.hasAttribute('data-course-tab')) b.setAttribute('data-course-tab', t);
      });
      Array.prototype.forEach.call(inputs, function (inp) {
        if (inp.checked && isCodeTab(inp)) courseReady().catch(function () {});
      });
    });
  }

  document.addEventListener('change', function (ev) {
    var t = ev.target;
    if (t && t.matches && t.matches('.tabbed-set > input[type="radio"]') && t.checked && isCodeTab(t)) {
      courseReady().catch(function (e) { console.warn(e.message || e); });
    }
  });
