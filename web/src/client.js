// The caller's side of the engine. One worker (a Web Worker in browsers, a worker_threads Worker in Node) serves
// every model loaded with the same engine options: it starts with the first load and stays; in Node it does not
// keep the process alive while nothing is pending. A worker that dies (a crash, an Emscripten abort) rejects what
// was pending; the models it held are gone, and the next load starts a fresh worker.
//
// Aborts: a call with a signal rejects with an AbortError as soon as the signal fires. Where shared memory exists
// (Node; cross-origin isolated pages) the call also carries a flag the engine polls between layers, so the running
// call stops within a layer; elsewhere the engine finishes that call (one layer stack, or one generated token) and
// later calls wait for it.

export const abortError = (signal) =>
  signal?.reason instanceof Error && signal.reason.name === 'AbortError' ? signal.reason : Object.assign(new Error('aborted'), { name: 'AbortError' });

const sharedFlags = () => typeof SharedArrayBuffer === 'function' && (globalThis.crossOriginIsolated || typeof process === 'object');

export class WorkerClient {
  // platform.createWorker() → { post(msg, transfer), onMessage(f), onExit(f), terminate(), ref?(), unref?() }
  constructor(platform, engineOptions = {}) {
    this.platform = platform;
    this.engineOptions = engineOptions;
    this.kind = 'worker';
    this.port = null;
    this.epoch = 0;  // which worker: handles from a dead one are refused
    this.pending = new Map();
    this.nextId = 1;
  }

  _start() {
    if (this.port) return;
    const port = this.platform.createWorker();
    const epoch = ++this.epoch;
    this.port = port;
    port.onMessage((data) => {
      const p = this.pending.get(data.id);
      if (!p) return;
      if (data.progress) return p.onProgress?.(data.progress);
      this._settle(data.id, p);
      if (data.error) {
        if (data.error.fatal) this._lost(epoch, `the engine stopped: ${data.error.message}`);
        p.reject(Object.assign(new Error(data.error.message), { name: data.error.name }));
      } else p.resolve(data.result);
    });
    port.onExit((why) => this._lost(epoch, why));
    this.ready = this.request('init', { engineOptions: this.engineOptions });
    this.ready.catch(() => {});
  }

  // The worker of `epoch` is gone: reject its pending requests; the next request starts another.
  _lost(epoch, why) {
    if (epoch !== this.epoch || !this.port) return;
    const port = this.port;
    this.port = null;
    try { port.terminate(); } catch {}
    const err = new Error(`wasmformer: ${why}; models loaded in it are gone (load them again)`);
    for (const p of this.pending.values()) {
      p.cleanup?.();
      p.reject(err);
    }
    this.pending.clear();
  }

  _settle(id, p) {
    this.pending.delete(id);
    p.cleanup?.();
    if (!this.pending.size) this.port?.unref?.();
  }

  request(op, payload, { onProgress, signal, flag, transfer = [] } = {}) {
    this._start();
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const entry = { resolve, reject, onProgress };
      this.pending.set(id, entry);
      this.port.ref?.();
      if (signal) {
        const abort = () => {
          if (flag) Atomics.store(flag, 0, 1);
          else if (op === 'load') this.port?.post({ id, op: 'abort' });
        };
        if (signal.aborted) abort();
        else {
          // removed when the request settles: a generation makes a request per token on one signal
          signal.addEventListener('abort', abort, { once: true });
          entry.cleanup = () => signal.removeEventListener('abort', abort);
        }
      }
      this.port.post({ id, op, ...payload, ...(flag ? { flag } : {}) }, transfer);
    });
  }

  async threadInfo() {
    this._start();
    return this.ready;
  }

  async load(kind, source, opts, onProgress, signal) {
    this._start();
    await this.ready;
    const { handle, info } = await this.request('load', { kind, source, opts }, { onProgress, signal });
    return { handle: { epoch: this.epoch, id: handle }, info };
  }

  call(handle, method, args, signal) {
    if (handle.epoch !== this.epoch || !this.port)
      return Promise.reject(new Error('wasmformer: this model was lost when its engine stopped; load it again'));
    const flag = signal && sharedFlags() ? new Int32Array(new SharedArrayBuffer(4)) : undefined;
    return this.request('call', { handle: handle.id, method, args }, { signal, flag });
  }

  dispose(handle) {
    if (handle.epoch !== this.epoch || !this.port) return Promise.resolve();
    return this.request('dispose', { handle: handle.id });
  }

  // Stops the worker (tests; a page that is done with the engine). The next load starts a new one.
  terminate() {
    this._lost(this.epoch, 'the engine was terminated');
  }
}

// The engine in the caller's own thread ({ worker: false }): the same interface, no worker. Long calls block the
// thread they run on.
export class LocalClient {
  constructor(platform, engineOptions = {}) {
    this.kind = 'local';
    this.backend = (async () => {
      const { LocalBackend } = await import('./backend.js');
      return new LocalBackend(await platform.localPlatform(), engineOptions);
    })();
  }
  async threadInfo() { return (await this.backend).threadInfo(); }
  async load(kind, source, opts, onProgress, signal) { return (await this.backend).load(kind, source, opts, onProgress, signal); }
  async call(handle, method, args, signal) { return (await this.backend).call(handle, method, args, signal ? () => signal.aborted : undefined); }
  async dispose(handle) { return (await this.backend).dispose(handle); }
  terminate() {}
}
