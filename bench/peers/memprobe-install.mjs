// The bench's memory probe, installed first in an engine's worker (wasmformer's: wf-worker-probe.mjs in the page,
// wf-worker-node-probe.mjs in Node; wllama's: run.mjs's page prepends this text to the Blob its module worker runs).
// Plain script, no imports: it is also run as the first lines of another script. It keeps every WebAssembly.Memory
// the worker creates (new WebAssembly.Memory: the threaded builds' shared memory) or instantiates (a module's own
// exported memory), counts the workers the worker itself starts (the engines' pthreads), and answers on a
// MessagePort with { bytes: the memories' byteLength summed, memories, shared, workers }. A wasm memory only grows,
// so its byteLength after a run is the peak of everything before it. The port comes as the worker's first message
// ({ wfBenchPort }) in a browser, which is kept from the worker's own handlers; in Node, in workerData.
(() => {
  if (globalThis.__wfBenchMemory) return;
  const W = WebAssembly, M = W.Memory, I = W.Instance;
  const mems = new Set();
  let workers = 0;
  const keep = (m) => { if (m instanceof M) mems.add(m); return m; };
  const exportsOf = (inst) => { try { for (const v of Object.values(inst?.exports ?? {})) keep(v); } catch {} return inst; };
  W.Memory = function Memory(desc) { return keep(new M(desc)); };
  W.Memory.prototype = M.prototype;
  W.Instance = function Instance(mod, imports) { return exportsOf(new I(mod, imports)); };
  W.Instance.prototype = I.prototype;
  const inst = W.instantiate, stream = W.instantiateStreaming;
  W.instantiate = function instantiate(...a) { return inst.apply(W, a).then((r) => (exportsOf(r instanceof I ? r : r.instance), r)); };
  if (stream) W.instantiateStreaming = function instantiateStreaming(...a) { return stream.apply(W, a).then((r) => (exportsOf(r.instance), r)); };
  if (typeof globalThis.Worker === 'function') {
    const Real = globalThis.Worker;
    globalThis.Worker = class extends Real { constructor(...a) { super(...a); workers++; } };
  }
  const report = () => {
    let bytes = 0, shared = false;
    for (const m of mems) {
      bytes += m.buffer.byteLength;
      shared ||= typeof SharedArrayBuffer === 'function' && m.buffer instanceof SharedArrayBuffer;
    }
    return { bytes, memories: mems.size, shared, workers };
  };
  globalThis.__wfBenchMemory = report;
  globalThis.__wfBenchCountWorker = () => { workers++; };  // Node: wf-worker-node-probe.mjs counts worker_threads Workers
  if (typeof WorkerGlobalScope === 'function' && globalThis instanceof WorkerGlobalScope)
    globalThis.addEventListener('message', (e) => {
      const port = e.data?.wfBenchPort;
      if (!port) return;
      e.stopImmediatePropagation();
      port.onmessage = () => port.postMessage(report());
    });
})();
