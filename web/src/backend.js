// The engine's side of every call: loads models and tokenizers into the wasm engine and runs their methods. It runs
// in the package's worker (host.js) — or in the caller's thread when { worker: false } is asked for (api.js). The
// platform gives it its engine loader and, in Node, file paths.
import { heapU8, json, result, utf8 } from './engine.js';
import { download, resolve } from './sources.js';

const WASM32_MAX = 2 ** 32;  // the engine's memory can grow to 4 GiB (MAXIMUM_MEMORY)
const gib = (n) => `${(n / 2 ** 30).toFixed(2)} GiB`;

export class LocalBackend {
  // platform: { loadEngine(engineOptions), readPath? }
  constructor(platform, engineOptions = {}) {
    this.platform = platform;
    this.engineOptions = engineOptions;
    this.objects = new Map();
    this.nextHandle = 1;
  }

  // the engine, once; its wfThreads gains simd: 'relaxed' where the instance runs relaxed SIMD (the relaxed twin of
  // the build), else 'simd128'
  engine() {
    return (this._engine ??= this.platform.loadEngine(this.engineOptions).then((e) => {
      e.wfThreads = { ...e.wfThreads, simd: e.relaxedSimd() ? 'relaxed' : 'simd128' };
      return e;
    }));
  }

  // { threads, threading, simd }: the engine's thread count and, in words, how (or why only one), and its SIMD
  async threadInfo() {
    return (await this.engine()).wfThreads;
  }

  // kind: 'pipeline' (a model and its tokenizer) or 'tokenizer'; source: a descriptor (sources.js).
  async load(kind, source, opts = {}, onProgress, signal) {
    const e = await this.engine();
    const files = await resolve(e, source, { weights: kind === 'pipeline', cache: opts.cache ?? true, signal, fetch: opts.fetch, readPath: this.platform.readPath });
    // wasm32 addresses 4 GiB: files that cannot fit are refused before a byte is read, and a model whose weights,
    // cache and scratch would not fit beside its files is refused by the engine before it allocates them
    const fileBytes = files.reduce((s, f) => s + Math.max(0, f.size), 0);
    const room = WASM32_MAX - heapU8(e).length;
    if (fileBytes > room)
      throw new Error(`the model's files total ${gib(fileBytes)}, more than this engine can still hold (${gib(room)} of the 4 GiB a wasm32 engine addresses)`);
    const fileSet = await download(e, files, { signal, progress_callback: onProgress, name: opts.name });
    try {
      const obj = kind === 'pipeline' ? new e.Pipeline() : new e.Tokenizer();
      try {
        const engineOpts = { ...opts.engine };
        engineOpts.memory_budget ??= Math.max(1, WASM32_MAX - heapU8(e).length);  // what is left once the files are in
        const info = kind === 'pipeline' ? result(obj.load(fileSet, json(engineOpts))) : result(obj.load(fileSet));
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
    if (!o) throw new Error('wasmformer: this object was disposed');
    return o;
  }

  // method: encode | decode | fillMask | fillMaskBatch | run | generateStart | generateStep | translateStart | translateStep |
  // chatTemplate; args: plain values.
  // cancel: a function polled between layers (true: stop), or undefined.
  async call(handle, method, args, cancel) {
    const o = this.get(handle);
    switch (method) {
      case 'encode': return result(o.encode(utf8(args.text), args.add_special_tokens ?? true));
      case 'decode': return result(o.decode(json(Array.from(args.ids ?? [])), args.skip_special_tokens ?? false));
      case 'fillMask': {
        const r = result(o.fillMask(utf8(args.text), json(args.options), cancel));
        if (r.attention_size) r.attention = o.attention().slice();
        return r;
      }
      case 'fillMaskBatch': return result(o.fillMaskBatch(json(args.texts), json(args.options), cancel));
      case 'run': {  // the encoder tasks (feature-extraction's numbers come as a Float32Array)
        const r = result(o.run(args.task, json(args.inputs), json(args.options), cancel));
        if (args.task === 'feature-extraction') r.data = o.features().slice();
        return r;
      }
      case 'generateStart': return result(o.generateStart(utf8(args.prompt), json(args.options)));
      case 'translateStart': return result(o.translateStart(args.task, utf8(args.text), json(args.options)));
      case 'translateStep': return result(o.translateStep(cancel));
      case 'chatTemplate': return result(o.chatTemplate(json(args.messages), json(args.options)));
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
