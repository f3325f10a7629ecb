  // ------------------------------------------------------------------ the model off the page's thread

  // The reader's sentence runs in a Web Worker made from forwardPass's own source, through a
  // blob: URL (allowed from file:// and in the one-file download, where a worker file is not),
  // so the page's thread stays free for typing while a long sentence computes: only drawing its
  // figures is the page's. The worker builds its own Model from a copy of the same float32
  // weights: the same code on the same numbers, so the same results, bit for bit (test_play).
  // Where no worker can be made, startRunner returns null and the page runs the model itself;
  // if the worker fails later, onFail is called and the page does the same from then on.
  function workerMain(forwardPass) {
    var Model = forwardPass().Model, model = null;
    self.onmessage = function (e) {
      var m = e.data;
      if (m.weights) { model = new Model(m.weights); return; }
      var run = model.run(m.ids, { predictions: false });
      self.postMessage({ id: m.id, n: run.n, store: run.store, final: run.final }, [run.store.buffer, run.final.buffer]);
    };
  }

  function startRunner(model, onFail) {
    // the browser's own Worker, kept by overrides/main.html before Material's file:// shim; never
    // the shim's stand-in, which cannot load a blob: URL and would never answer
    var Native = window.courseWorker || window.Worker, worker, url;
    if (typeof Native !== 'function' || Native === window.IFrameWorker) return null;
    try {
      url = URL.createObjectURL(new Blob(['(' + workerMain + ')(' + forwardPass + ');\n'], { type: 'text/javascript' }));
      worker = new Native(url);
    } catch (e) {
      return null;
    }
    var waiting = {}, next = 0, flat = model.flat.slice();
    worker.postMessage({ weights: { config: model.config, tensors: model.tensors, flat: flat } }, [flat.buffer]);
    worker.onmessage = function (e) {
      var m = e.data, done = waiting[m.id];
      delete waiting[m.id];
      if (done) done(model.views(m.store, m.final, m.n));
    };
    worker.onerror = function (e) {
      if (e.preventDefault) e.preventDefault();
      worker.terminate();
      URL.revokeObjectURL(url);
      waiting = {};
      onFail(String(e.message || 'the worker stopped'));
    };
    return {
      // done(run) once the worker has run ids: run as Model.run's, without the guesses
      run: function (ids, done) {
        var id = ++next;
        waiting[id] = done;
        worker.postMessage({ id: id, ids: ids });
      }
    };
  }
