  // ------------------------------------------------------------------ text that follows the figure

  // One rule for the whole course (CONTRACT.md, "Text that follows the figure"):
  // - what the figure writes about its own state follows it: the summary (view.js) and the
  //   caption's first words, span.course-caption-state ("Layer 2, head 3, token ·with.");
  // - text written for one state keeps its words: a prose number (span.course-ref) and the
  //   author's caption (span.course-caption, written for the state the figure opens on). While the
  //   figure shows another state, a button.course-ref-about right after that text names the state
  //   it is about ("↩ layer 2, head 3, ·her"); pressing it brings the figure back to that state;
  // - the figure changes only when the reader acts (a picker, a click, Enter or Space); after a
  //   jump to another state (a prose number, a link into the figure) its controls hold
  //   button.course-back, "Back to layer 1, head 1, ·to", one action to the state before.

  // "layer 2, head 3, ·her" (each part only where `st` names it) in `node`, the token as the page
  // shows and says it; `v` is the view whose sentence the token is of.
  function fillStateName(node, st, v) {
    var words = [];
    if ('layer' in st) words.push('layer ' + (st.layer + 1));
    if ('head' in st) words.push('head ' + (st.head + 1));
    node.appendChild(document.createTextNode(words.join(', ') + (words.length && 'token' in st ? ', ' : '')));
    if ('token' in st && v) {
      var t = v.tokens[v.ownToken(st.token)];
      if (t) node.appendChild(tokSpan(t));
    }
  }

  // The state a piece of frozen text is about: a prose number's own (prose-refs.js refState), the
  // author's caption the state the figure opened on.
  function aboutState(node, f) {
    if (node.classList.contains('course-caption')) return f.initial;
    return refState(node, f);
  }

  function frozenTexts(f) {
    var nodes = Array.prototype.slice.call(document.querySelectorAll('span.course-ref[data-fig="' + f.id + '"]'));
    var caption = f.el.querySelector(':scope > figcaption .course-caption');
    if (caption && f.initial) nodes.push(caption);
    return nodes;
  }

  // Shows or hides each frozen text's button after a change of `f`'s state. Numbers of one
  // paragraph (or list item, table cell) about one state share one button, after the first:
  // "layer 2, head 3" is then named once, not after each of its numbers; every number about
  // another state is marked (course-ref-away).
  function followFrozen(f) {
    var named = [];  // [block, label] of the buttons shown so far
    frozenTexts(f).forEach(function (node) {
      var st = aboutState(node, f);
      var away = !!st && !showsState(f, st);
      var btn = node.__courseAbout;
      node.classList.toggle('course-ref-away', away && node.classList.contains('course-ref'));
      var block = node.closest('p, li, td, th, figcaption') || node.parentNode;
      var label = away ? JSON.stringify(st) + intAttr(node, 'data-panel', 0) : '';
      var repeat = away && named.some(function (n) { return n[0] === block && n[1] === label; });
      if (!away || repeat) {
        if (btn) btn.hidden = true;
        return;
      }
      named.push([block, label]);
      btn = aboutButton(node, function () { bringBack(f, node); });
      clear(btn);
      var v = f.views[intAttr(node, 'data-panel', 0)] || f.views[0];
      fillStateName(btn, st, v);
      var what = node.classList.contains('course-caption') ? 'The caption is' : 'This number is';
      btn.setAttribute('aria-description', what + ' about this state of figure ' + f.id.replace(/^fig-/, '') +
        ', which now shows another: press to show it');
      btn.hidden = false;
    });
  }

  // The button.course-ref-about right after a frozen text `node` (made once; `press` runs on a
  // click, which does not reach the number itself).
  function aboutButton(node, press) {
    var btn = node.__courseAbout;
    if (btn && btn.isConnected) return btn;
    btn = node.__courseAbout = el('button', 'course-ref-about');
    btn.type = 'button';
    btn.addEventListener('click', function (ev) {
      ev.stopPropagation();
      press();
    });
    node.parentNode.insertBefore(btn, node.nextSibling);
    return btn;
  }

  // The figure back at the state `node` is about, as a press on a prose number does.
  function bringBack(f, node) {
    if (node.classList.contains('course-ref')) return goToRef(node);
    revealFigure(f.el);
    return f.setState(f.initial, { user: true, jump: true });
  }

  // The caption's first words, "Layer 2, head 3, token ·with.", and the playground link's state.
  function followCaption(f) {
    var s = f.state;
    var head = f.el.querySelector(':scope > figcaption .course-caption-state');
    if (head) {
      clear(head);
      head.appendChild(document.createTextNode('Layer ' + (s.layer + 1) + ', head ' + (s.head + 1) + ', token '));
      // a compare figure names each sentence's token where they differ ("·Lily / ·Ben"), like the page's first caption (render/grid.py)
      var named = [];
      f.views.forEach(function (v, i) {
        var t = v.tokens[i ? v.ownToken(s.token) : s.token];
        if (!t || named.indexOf(t.text) >= 0) return;
        if (named.length) head.appendChild(document.createTextNode(' / '));
        named.push(t.text);
        head.appendChild(tokSpan(t));
      });
      head.appendChild(document.createTextNode('.'));
    }
    var play = f.el.querySelector(':scope > figcaption a.course-play-link');
    if (play) {
      play.href = play.getAttribute('href').replace(/&layer=\d+&head=\d+&token=\d+$/,
        '&layer=' + (s.layer + 1) + '&head=' + (s.head + 1) + '&token=' + s.token);
    }
  }

  // "Back to layer 1, head 1, ·to" after a jump; gone once used or once the reader changes the
  // figure by its own controls (then there is no one state before to go back to).
  function followBack(f, prev, opts) {
    var moved = prev && (prev.layer !== f.state.layer || prev.head !== f.state.head || prev.token !== f.state.token);
    if (opts.jump && moved) f.backTo = prev;
    else if (opts.user || opts.back) f.backTo = null;
    var btn = f.backButton;
    if (!f.backTo) {
      if (btn) btn.hidden = true;
      return;
    }
    if (!btn) {
      var controls = f.el.querySelector('.course-controls');
      if (!controls) return;
      btn = f.backButton = el('button', 'course-back');
      btn.type = 'button';
      btn.addEventListener('click', function () {
        var to = f.backTo;
        if (to) f.setState(to, { user: true, back: true });
      });
      controls.appendChild(btn);
    }
    clear(btn);
    btn.appendChild(document.createTextNode('Back to '));
    fillStateName(btn, f.backTo, f.views[0]);
    btn.hidden = false;
  }

  // Called by AttentionFigure.applyState once the new state is written (`prev`: the state
  // before; `opts`: how it came, {user, jump, back, fromHash}).
  function followFigure(f, prev, opts) {
    followCaption(f);
    followFrozen(f);
    followBack(f, prev, opts || {});
  }

  // A figure that is not an attention figure but that the reader can change (score-split's
  // menus, softmax's inputs) tells follow.js whether it still shows the state it opened on. Its
  // prose numbers (ref_binding.py's FIGURE level, all written for that state) are then marked
  // away, and after the first of each paragraph a button, "↩ figure 3 as it opened", brings it
  // back (`reset`), as an attention figure's numbers name their state.
  function followOpening(figEl, changed, reset) {
    figEl.__courseOpening = { changed: changed, reset: reset };
    var blocks = [];
    var nodes = document.querySelectorAll('span.course-ref.course-ref-figure[data-fig="' + figEl.id + '"]');
    Array.prototype.forEach.call(nodes, function (node) {
      node.classList.toggle('course-ref-away', changed);
      var block = node.closest('p, li, td, th, figcaption') || node.parentNode;
      var btn = node.__courseAbout;
      if (!changed || blocks.indexOf(block) >= 0) {
        if (btn) btn.hidden = true;
        return;
      }
      blocks.push(block);
      btn = aboutButton(node, function () { figEl.__courseOpening.reset(); });
      var n = figEl.id.replace(/^fig-/, '');
      btn.textContent = 'figure ' + n + ' as it opened';
      btn.setAttribute('aria-description', 'These numbers are about figure ' + n +
        ' as the page opened it, and it now shows another state: press to show it');
      btn.hidden = false;
    });
  }

  // The first live number of a page says what it is, once, in words shown and read out (the
  // numbers are live only with JavaScript, so the note is course.js's).
  function noteFirstLiveNumber() {
    if (document.querySelector('.course-ref-hint')) return;
    var spans = Array.prototype.filter.call(document.querySelectorAll('article span.course-ref, .md-content span.course-ref'),
      function (s) { return !s.closest('figure, details:not([open])') && s.getClientRects().length > 0; });
    var first = spans[0];
    if (!first) return;
    var figEl = refFigure(first);
    var figure = figEl ? 'figure ' + figEl.id.replace(/^fig-/, '') : 'its figure';
    // a number bound to a figure as a whole (ref_binding.py's FIGURE: a figure whose state the
    // number does not set) promises the figure, not that the figure shows it now
    var hint = el('span', 'course-ref-hint', first.classList.contains('course-ref-figure')
      ? ' (a live number: press it to go to ' + figure + ', which it comes from)'
      : ' (a live number: press it to see where ' + figure + ' shows it)');
    first.parentNode.insertBefore(hint, first.nextSibling);
  }
