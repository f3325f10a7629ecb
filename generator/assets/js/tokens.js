  // ------------------------------------------------------------------ tokens (chapter 1)

  // One sentence at a time, its tokens in the console as `tokens`.
  function initTokens(fig, data) {
    var controls = fig.querySelector('.course-controls');
    var select = fig.querySelector('select[data-control="sentence"]');
    var blocks = fig.querySelectorAll('.course-token-sentence');
    function showSentence(i) {
      Array.prototype.forEach.call(blocks, function (b) { b.hidden = b.getAttribute('data-sentence') !== String(i); });
      var s = data.sentences[i];
      var current = { text: s.text };
      data.models.forEach(function (m) { current[m] = s.tokens[m]; });
      window.tokens = current;
    }
    if (controls) controls.hidden = false;
    if (select) select.addEventListener('change', function () { showSentence(parseInt(select.value, 10) || 0); });
    showSentence(select ? parseInt(select.value, 10) || 0 : 0);
  }
