  // ------------------------------------------------------------------ remembered sizes

  // course.css skips the style and layout of off-screen blocks (content-visibility: auto) and
  // counts 600 px for one never rendered, so the page's height changed while a reader scrolled
  // (attention.html 9,695 -> 8,022 px) and the scroll bar lied. After the first paint, one idle
  // slice at a time, each block is rendered once: the browser then remembers its real size
  // (contain-intrinsic-size: auto) and the page keeps one height. A few blocks per slice, within
  // the slice's time, so that typing or scrolling is never held up.
  var SIZED_BLOCKS = '.md-typeset > .course-fig, .md-typeset > .tabbed-set, .md-typeset > details, .md-typeset > .md-typeset__scrollwrap';
  var SIZE_SLICE_MS = 6; // time left in an idle slice under which no further block starts

  var sizedPage = null; // the article whose blocks are (being) sized: a new page (instant navigation) is sized anew

  function rememberSizes() {
    var article = document.querySelector('.md-typeset');
    if (!article || sizedPage === article) return;
    sizedPage = article;
    api.sizesRemembered = false;
    var blocks = Array.prototype.slice.call(document.querySelectorAll(SIZED_BLOCKS));
    var i = 0;
    function release(batch) {
      // the size is recorded at the rendering update after the layout: two frames later the block
      // may be skipped again, at its real size
      requestAnimationFrame(function () {
        requestAnimationFrame(function () {
          batch.forEach(function (el) { el.style.removeProperty('content-visibility'); });
          if (i < blocks.length) whenIdle(slice);
          else {
            api.sizesRemembered = true;
            document.dispatchEvent(new CustomEvent('course:sized'));
          }
        });
      });
    }
    function slice(deadline) {
      var batch = [];
      do {
        var el = blocks[i++];
        el.style.setProperty('content-visibility', 'visible');
        void el.offsetHeight; // its layout, inside this slice
        batch.push(el);
      } while (i < blocks.length && deadline && deadline.timeRemaining && deadline.timeRemaining() > SIZE_SLICE_MS);
      release(batch);
    }
    if (blocks.length) whenIdle(slice);
    else api.sizesRemembered = true;
  }
