// Backends run the engine: LocalBackend in this thread (Node, and inside the browser worker), WorkerBackend
// forwards every call to a Web Worker running a LocalBackend (browsers: the page's thread never computes).
import { loadEngine, result, utf8, json } from './engine.js';
import { resolve, download } from './sources.js';

export class LocalBackend {
  constructor(engineOptions = {}) {
    this.engineOptions = engineOptions;
    this.objects = new Map();
    this.nextHandle = 1;
    this.kind = 'local';
  }

  engine() {
    return (this._engine ??= loadEngine(this.engineOptions));
  }

  // { threads, threading }: the engine's thread count and, in words, how (or why only one)
  async threadInfo() {
    return (await this.engine()).wfThreads;
  }

  async load(kind, source, opts = {}, onProgress, signal) {
    const e = await this.engine();
    const files = await resolve(e, source, { weights: kind === 'pipeline', cache: opts.cache ?? true, signal, fetch: opts.fetch });
    const fileSet = await download(e, files, { signal, progress_callback: onProgress });
    try {
      const obj = kind === 'pipeline' ? new e.Pipeline() : new e.Tokenizer();
      try {
        const info = kind === 'pipeline' ? result(obj.load(fileSet, json({ dtype: opts.dtype, memory_budget: opts.memory_budget }))) : result(obj.load(fileSet));
        const handle = this.nextHandle++;
        this.objects.set(handle, obj);
        return { handle, info };
      } catch (err) {
        obj.delete();
        throw err;
      }
    } finally {
      fileSet.delete(); // a model whose weights are views into the files keeps its own reference to them
    }
  }

  get(handle) {
    const o = this.objects.get(handle);
    if (!o) throw new Error('this object was disposed');
    return o;
  }

  // method: encode | decode | fillMask | generateStart | generateStep; args: plain values, texts as strings.
  // cancel: an AbortSignal or a function polled between layers of fillMask and generateStep (true: stop).
  async call(handle, method, args, cancel) {
    const o = this.get(handle);
    if (cancel && typeof cancel !== 'function') {
      const signal = cancel;
      cancel = () => signal.aborted;
    }
    switch (method) {
      case 'encode': return result(o.encode(utf8(args.text), args.add_special_tokens ?? true));
      case 'decode': return result(o.decode(json(Array.from(args.ids ?? [])), args.skip_special_tokens ?? false));
      case 'fillMask': {
        const r = result(o.fillMask(utf8(args.text), json(args.options), cancel));
        if (r.attention_size) r.attention = o.attention().slice();
        return r;
      }
      case 'generateStart': return result(o.generateStart(utf8(args.prompt), json(args.options)));
      case 'generateStep': {
        const r = result(o.generateStep(cancel));
        if (r.attention_size) r.attention = o.attention().slice();
        return r;
      }
      default: throw new Error(`unknown method ${method}`);
    }
  }

  async dispose(handle) {
    const o = this.objects.get(handle);
    if (o) {
      o.delete();
      this.objects.delete(handle);
    }
  }
}

export class WorkerBackend {
  constructor(options = {}) {
    this.kind = 'worker';
    // the offline site starts a classic worker from a Blob URL (file:// pages can start no module worker)
    const url = options.workerUrl ?? globalThis.WF_WORKER_URL;
    this.worker = url
      ? new Worker(url, { type: options.workerType ?? globalThis.WF_WORKER_TYPE ?? 'module' })
      : new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
    this.pending = new Map();
    this.nextId = 1;
    this.worker.onmessage = ({ data }) => {
      const p = this.pending.get(data.id);
      if (!p) return;
      if (data.progress) return p.onProgress?.(data.progress);
      this.pending.delete(data.id);
      if (data.error) p.reject(Object.assign(new Error(data.error.message), { name: data.error.name }));
      else p.resolve(data.result);
    };
    this.worker.onerror = (e) => {
      for (const p of this.pending.values()) p.reject(new Error(`wasmformer worker failed: ${e.message ?? e}`));
      this.pending.clear();
    };
    this.ready = this.request('init', { engineOptions: options.engineOptions ?? {} });
    this.ready.catch(() => {});
  }

  threadInfo() {
    return this.ready;
  }

  request(op, payload, onProgress, signal) {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, onProgress });
      if (signal) {
        if (signal.aborted) this.worker.postMessage({ id, op: 'abort' });
        signal.addEventListener('abort', () => this.worker.postMessage({ id, op: 'abort' }), { once: true });
      }
      this.worker.postMessage({ id, op, ...payload });
    });
  }

  load(kind, source, opts = {}, onProgress, signal) {
    const { fetch: _f, ...rest } = opts;
    return this.request('load', { kind, source, opts: rest }, onProgress, signal);
  }

  // With a signal on a cross-origin isolated page, a shared flag lets the worker stop between layers of the
  // running call; elsewhere an abort takes effect between calls (between generated tokens).
  call(handle, method, args, signal) {
    if (!signal || !globalThis.crossOriginIsolated || typeof SharedArrayBuffer !== 'function') return this.request('call', { handle, method, args });
    const flag = new Int32Array(new SharedArrayBuffer(4));
    const raise = () => Atomics.store(flag, 0, 1);
    if (signal.aborted) raise();
    else signal.addEventListener('abort', raise, { once: true });
    // one listener per call, and a generation makes a call per token: each is removed when its call ends
    return this.request('call', { handle, method, args, flag }).finally(() => signal.removeEventListener('abort', raise));
  }

  dispose(handle) {
    return this.request('dispose', { handle });
  }

  terminate() {
    this.worker.terminate();
    for (const p of this.pending.values()) p.reject(new Error('wasmformer worker terminated'));
    this.pending.clear();
  }
}
