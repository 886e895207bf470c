// wasmformer's JavaScript API.
//
//   const unmasker = await pipeline('fill-mask', source);            // transformers.js-style
//   await unmasker('The capital of France is [MASK].', { top_k: 5 });
//   const fm = await FillMask.load(source);  await fm.fill(text, { top_k, targets, signal });
//   const gen = await TextGenerator.load(source);
//   for await (const piece of gen.generate('Once upon a time', { max_new_tokens: 40, signal })) …
//   const tok = await Tokenizer.load(source);  await tok.encode('Hello');
//
// In browsers the engine runs in a Web Worker the package starts itself; in Node it runs in-process.
import { LocalBackend, WorkerBackend } from './backend.js';
import { clearCache } from './sources.js';

export { clearCache };

const inBrowser = typeof window === 'object' && typeof Worker === 'function';
let sharedLocal = null;

function backendFor(opts) {
  if (opts.backend) return opts.backend;
  if (inBrowser && opts.worker !== false) return new WorkerBackend({ engineOptions: engineOptions(opts) });
  if (opts.wasmUrl || opts.wasmBinary) return new LocalBackend(engineOptions(opts));
  return (sharedLocal ??= new LocalBackend());
}
const engineOptions = (o) => ({ wasmUrl: o.wasmUrl && String(o.wasmUrl), wasmBinary: o.wasmBinary, threads: o.threads,
                                 threadedWasmUrl: o.threadedWasmUrl && String(o.threadedWasmUrl) });

const abortError = (signal) => (signal.reason instanceof Error ? signal.reason : Object.assign(new Error('aborted'), { name: 'AbortError' }));

function checkSignal(signal) {
  if (signal?.aborted) throw abortError(signal);
}

class Handle {
  constructor(backend, handle, info) {
    this._backend = backend;
    this._handle = handle;
    this.info = info;
    this._queue = Promise.resolve();
    this._disposed = false;
  }
  // Calls on one object run one after another (the engine holds one generation per model).
  _serial(fn) {
    const run = this._queue.then(() => {
      if (this._disposed) throw new Error('wasmformer: this object was disposed');
      return fn();
    });
    this._queue = run.catch(() => {});
    return run;
  }
  // A call with a signal rejects as soon as the signal fires. The engine stops at its next check between layers
  // where it can see the signal (a worker on a cross-origin isolated page, through a shared flag), else when the
  // call ends (Node runs each call to its end on this thread); later calls wait for it.
  _call(method, args, signal) {
    const call = this._backend.call(this._handle, method, args, signal);
    if (!signal) return call;
    let onAbort;
    const aborted = new Promise((_, reject) => {
      onAbort = () => reject(abortError(signal));
      if (signal.aborted) onAbort();
      else signal.addEventListener('abort', onAbort, { once: true });
    });
    return Promise.race([call, aborted]).finally(() => signal.removeEventListener('abort', onAbort));
  }
  // { threads, threading, backend }: how this object's engine runs
  async engineInfo() {
    return { ...(await this._backend.threadInfo()), backend: this._backend.kind };
  }
  async dispose() {
    if (this._disposed) return;
    this._disposed = true;
    await this._backend.dispose(this._handle);
    if (this._backend.kind === 'worker' && this._ownsBackend) this._backend.terminate();
  }
  [Symbol.dispose]() {
    void this.dispose();
  }
  [Symbol.asyncDispose]() {
    return this.dispose();
  }
}

async function open(kind, source, opts = {}) {
  const backend = backendFor(opts);
  checkSignal(opts.signal);
  try {
    const { handle, info } = await backend.load(kind, source, { dtype: opts.dtype, memory_budget: opts.memory_budget, cache: opts.cache, fetch: opts.fetch }, opts.progress_callback, opts.signal);
    return { backend, handle, info, owns: backend !== opts.backend && backend.kind === 'worker' };
  } catch (e) {
    if (backend !== opts.backend && backend.kind === 'worker') backend.terminate();
    throw e;
  }
}

// ------------------------------------------------------------------------------------------------- Tokenizer
export class Tokenizer extends Handle {
  static async load(source, opts = {}) {
    const { backend, handle, info, owns } = await open('tokenizer', source, opts);
    const t = new Tokenizer(backend, handle, info);
    t._ownsBackend = owns;
    return t;
  }
  encode(text, { add_special_tokens = true } = {}) {
    return this._serial(() => this._call('encode', { text, add_special_tokens }));
  }
  decode(ids, { skip_special_tokens = false } = {}) {
    return this._serial(() => this._call('decode', { ids: Array.from(ids), skip_special_tokens }));
  }
}

// A model's own tokenizer, sharing the model's handle.
class ModelTokenizer {
  constructor(model) {
    this._m = model;
  }
  encode(text, { add_special_tokens = true } = {}) {
    return this._m._serial(() => this._m._call('encode', { text, add_special_tokens }));
  }
  decode(ids, { skip_special_tokens = false } = {}) {
    return this._m._serial(() => this._m._call('decode', { ids: Array.from(ids), skip_special_tokens }));
  }
}

// A model and its tokenizer. What it can do is info.tasks (fill-mask, text-generation, …), known once loaded;
// FillMask and TextGenerator are models loaded for one task, refused at load if the model cannot run it.
export class Model extends Handle {
  static async load(source, opts = {}) {
    return Model._load(Model, null, source, opts);
  }
  get tokenizer() {
    return (this._tokenizer ??= new ModelTokenizer(this));
  }
  static async _load(Cls, task, source, opts) {
    const { backend, handle, info, owns } = await open('pipeline', source, opts);
    const m = new Cls(backend, handle, info);
    m._ownsBackend = owns;
    if (task && !info.tasks.includes(task)) {
      await m.dispose();
      throw new Error(`${task} needs a model that can run it; this one (${info.architecture}) supports: ${info.tasks.join(', ') || 'no task'}`);
    }
    return m;
  }
  _need(task) {
    if (!this.info.tasks.includes(task)) throw new Error(`${task}: this model (${this.info.architecture}) supports ${this.info.tasks.join(', ') || 'no task'}`);
  }

  // fill-mask → { results: one list per mask of { score, token, token_str, sequence }, attention?: { layer, data, heads },
  // timings }. Options other than signal go to the engine, which checks them (top_k, targets, attention_layer).
  fill(text, { signal, ...options } = {}) {
    return this._serial(async () => {
      this._need('fill-mask');
      checkSignal(signal);
      const t0 = now();
      const r = await this._call('fillMask', { text, options }, signal);
      const out = { results: r.results, timings: { seconds: (now() - t0) / 1000, ...(await this.engineInfo()) } };
      if (r.attention) out.attention = { layer: r.attention_layer, heads: this.info.n_head, data: r.attention };
      return out;
    });
  }

  // text-generation: an AsyncIterable of text pieces (whole characters only). Abort with { signal }: the iteration
  // ends within one token and the model stays usable. After the loop, .result holds { text, finish_reason, tokens }.
  // Options other than signal go to the engine, which checks them (max_new_tokens, do_sample, temperature, top_k,
  // top_p, min_p, repetition_penalty, no_repeat_ngram_size, seed, stop, stop_at_eos, attention_layer).
  generate(prompt, { signal, ...options } = {}) {
    const self = this;
    const stream = {
      result: null,
      async *[Symbol.asyncIterator]() {
        let release;
        const turn = new Promise((r) => (release = r));
        const prev = self._queue;
        self._queue = turn;
        await prev;
        try {
          if (self._disposed) throw new Error('wasmformer: this object was disposed');
          self._need('text-generation');
          checkSignal(signal);
          const t0 = now();
          const start = await self._call('generateStart', { prompt, options });
          const tokens = [];
          let text = '', finish = null, attention;
          while (!finish) {
            if (signal?.aborted) {
              finish = 'aborted';
              break;
            }
            let s;
            try {
              s = await self._call('generateStep', {}, signal);
            } catch (e) {
              if (e?.name !== 'AbortError' || !signal?.aborted) throw e;
              finish = 'aborted';  // stopped inside the step (the prompt's layers): no token from it
              break;
            }
            if (s.attention) attention = { layer: s.attention_layer, heads: self.info.n_head, data: s.attention };
            if (s.id !== undefined) tokens.push({ id: s.id, text: s.text, logprob: s.logprob });
            if (s.text) {
              text += s.text;
              yield s.text;
            }
            if (s.done) finish = s.finish_reason;
          }
          const seconds = (now() - t0) / 1000;
          stream.result = { text, finish_reason: finish, tokens, prompt_tokens: start.prompt_tokens, attention,
                            timings: { seconds, tokens_per_second: tokens.length / seconds, ...(await self.engineInfo()) } };
        } finally {
          release();
        }
      },
    };
    return stream;
  }

  // Runs a whole generation: { text, finish_reason, tokens: [{ id, text, logprob }], timings }.
  async complete(prompt, { onToken, ...opts } = {}) {
    const s = this.generate(prompt, opts);
    for await (const piece of s) onToken?.(piece);
    return s.result;
  }
}

// -------------------------------------------------------------------------------------------------- FillMask
export class FillMask extends Model {
  static load(source, opts = {}) {
    return Model._load(FillMask, 'fill-mask', source, opts);
  }
}

// ---------------------------------------------------------------------------------------------- TextGenerator
export class TextGenerator extends Model {
  static load(source, opts = {}) {
    return Model._load(TextGenerator, 'text-generation', source, opts);
  }
}

const now = () => (typeof performance === 'object' ? performance.now() : Date.now());

// ------------------------------------------------------------------------------- transformers.js-style pipeline
export async function pipeline(task, source, opts = {}) {
  if (task === 'fill-mask') {
    const m = await FillMask.load(source, opts);
    const unmasker = async (texts, opts = {}) => {
      const one = async (t) => {
        const { results } = await m.fill(t, opts);
        return results.length === 1 ? results[0] : results;
      };
      return Array.isArray(texts) ? Promise.all(texts.map(one)) : one(texts);
    };
    return Object.assign(unmasker, { task, model: m, tokenizer: m.tokenizer, dispose: () => m.dispose(), [Symbol.asyncDispose]: () => m.dispose() });
  }
  if (task === 'text-generation') {
    const m = await TextGenerator.load(source, opts);
    const generator = async (prompts, o = {}) => {
      const { streamer, return_full_text, ...engineOpts } = o;
      const one = async (p) => {
        const onToken = streamer ? (typeof streamer === 'function' ? streamer : (t) => streamer.callback_function?.(t)) : undefined;
        const r = await m.complete(p, { ...engineOpts, onToken });
        streamer?.end?.();
        return [{ generated_text: return_full_text === false ? r.text : p + r.text }];
      };
      return Array.isArray(prompts) ? Promise.all(prompts.map(one)) : one(prompts);
    };
    return Object.assign(generator, { task, model: m, tokenizer: m.tokenizer, dispose: () => m.dispose(), [Symbol.asyncDispose]: () => m.dispose() });
  }
  throw new Error(`unknown task "${task}" (supported: fill-mask, text-generation)`);
}
