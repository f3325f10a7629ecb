  // ------------------------------------------------------------------ the model off the page's thread

  // The reader's sentence runs in a Web Worker made from forwardPass's own source, through a
  // blob: URL (allowed from file:// and in the one-file download, where a worker file is not),
  // so the page's thread stays free for typing while a long sentence computes: only drawing its
  // figures is the page's. The worker builds its own Model from a copy of the same float32
  // weights: the same code on the same numbers, so the same results, bit for bit (test_play).
  // Where no worker can be made, startRunner returns null and the page runs the model itself;
  // if the worker fails later, onFail is called and the page does the same from then on.
  // The ablation grid runs there too (ablationPass), one removed head a task, so that a new
  // sentence's run is taken between two of them, and a new sentence drops the grid in progress.
  function workerMain(forwardPass, ablationPass) {
    var forward = forwardPass(), Model = forward.Model, model = null, job = null, timer = null;
    ablationPass(Model, forward.headViews);
    function step() {
      timer = null;
      if (!job) return;
      if (job.work.next()) { timer = setTimeout(step, 0); return; }
      self.postMessage({ ablated: job.id, result: job.work.result });
      job = null;
    }
    self.onmessage = function (e) {
      var m = e.data;
      if (m.weights) { model = new Model(m.weights); return; }
      if (m.ablate) {
        job = { id: m.ablate, work: model.ablation(m.ids, m.pos, m.follow) };
        if (!timer) timer = setTimeout(step, 0);
        return;
      }
      job = null; // a new sentence: the older one's grid is not wanted any more
      // the shown head's weights go back as soon as its layer is done, so that the page draws its
      // heatmap while the later layers compute here
      var shownAt = m.shown;
      var run = model.run(m.ids, { predictions: false, attended: shownAt && function (l, r) {
        if (l !== shownAt[0]) return;
        var grid = r.layers[l].heads[shownAt[1]].weights.slice(); // (query, key): a copy, the store goes with the whole run
        self.postMessage({ id: m.id, shown: grid }, [grid.buffer]);
      } });
      self.postMessage({ id: m.id, n: run.n, store: run.store, final: run.final }, [run.store.buffer, run.final.buffer]);
    };
  }

  function startRunner(model, onFail) {
    // the browser's own Worker, kept by overrides/main.html before Material's file:// shim; never
    // the shim's stand-in, which cannot load a blob: URL and would never answer
    var Native = window.courseWorker || window.Worker, worker, url;
    if (typeof Native !== 'function' || Native === window.IFrameWorker) return null;
    try {
      url = URL.createObjectURL(new Blob(['(' + workerMain + ')(' + forwardPass + ', ' + ablationPass + ');\n'], { type: 'text/javascript' }));
      worker = new Native(url);
    } catch (e) {
      return null;
    }
    // one run in flight at a time: the newest sentence asked for meanwhile waits (an older one
    // waiting is dropped, never computed), so typing faster than a run takes cannot queue them
    var next = 0, running = null, queued = null, grid = null, flat = model.flat.slice(); // running, queued, grid: {id or ids, done}
    function post(ids, done, shown, early) {
      running = { id: ++next, done: done, early: shown ? early : null };
      runner.posted++;
      worker.postMessage({ id: running.id, ids: ids, shown: shown || null });
    }
    worker.postMessage({ weights: { config: model.config, tensors: model.tensors, headMeans: model.headMeans, flat: flat } }, [flat.buffer]);
    worker.onmessage = function (e) {
      var m = e.data;
      if (m.ablated) {
        if (grid && grid.id === m.ablated) { var g = grid; grid = null; g.done(m.result); }
        return;
      }
      if (m.shown) { // the shown head's weights, before the rest of the run
        if (running && running.id === m.id && running.early) running.early(m.shown);
        return;
      }
      var done = running && running.id === m.id ? running.done : null;
      running = null;
      if (queued) { var q = queued; queued = null; post(q.ids, q.done, q.shown, q.early); }
      if (done) done(model.views(m.store, m.final, m.n));
    };
    worker.onerror = function (e) {
      if (e.preventDefault) e.preventDefault();
      worker.terminate();
      URL.revokeObjectURL(url);
      running = queued = grid = null;
      onFail(String(e.message || 'the worker stopped'));
    };
    var runner = {
      posted: 0, // runs sent to the worker (the tests count them)
      // done(run) once the worker has run ids: run as Model.run's, without the guesses; not
      // called for a sentence that a newer one replaced while it waited. With shown ([layer,
      // head]), early(weights) first, as soon as that layer is done: that head's attention
      // weights (query, key) as one Float64Array.
      run: function (ids, done, shown, early) {
        grid = null;
        if (running) queued = { ids: ids, done: done, shown: shown, early: early };
        else post(ids, done, shown, early);
      },
      // done(result) with Model.ablation's result, unless another grid or sentence was asked for since
      ablate: function (ids, pos, follow, done) {
        var id = ++next;
        grid = { id: id, done: done };
        worker.postMessage({ ablate: id, ids: ids, pos: pos, follow: follow });
      }
    };
    return runner;
  }
