// wasmformer's JavaScript API, the same in browsers and in Node (index.js and index.node.js give it its platform).
//
//   const unmasker = await pipeline('fill-mask', source);                   // transformers.js-style
//   await unmasker('The capital of France is [MASK].', { top_k: 5 });
//   const m = await Model.load(source);  m.info.tasks                        // ['fill-mask'] …
//   await m.fill(text, { top_k, targets, signal });
//   for await (const piece of m.generate('Once upon a time', { max_new_tokens: 40, signal })) …
//   for await (const piece of m.chat([{ role: 'user', content: 'Hi' }], { max_new_tokens: 40 })) …   // chat template
//   const tok = await Tokenizer.load(source);  await tok.encode('Hello');
//
// The engine runs in a worker the package starts itself (a Web Worker, a worker_threads Worker in Node), shared by
// every model; { worker: false } runs it in the caller's thread instead. Options other than the few the API itself
// reads (signal, progress_callback, …) go to the engine, which checks every name, type and range.
import { LocalClient, WorkerClient, abortError } from './client.js';

let platform = null;
export function setPlatform(p) {
  platform = p;
}

export const CACHE_NAME = 'wasmformer-v1';
// Removes every cached model file (browsers' Cache API).
export async function clearCache() {
  if (typeof caches !== 'undefined') await caches.delete(CACHE_NAME);
}

const now = () => (typeof performance === 'object' ? performance.now() : Date.now());
const disposeKey = Symbol.dispose ?? Symbol.for('Symbol.dispose');
const asyncDisposeKey = Symbol.asyncDispose ?? Symbol.for('Symbol.asyncDispose');

// ------------------------------------------------------------------------------------------------------ options
const LOAD_OPTIONS = ['dtype', 'memory_budget', 'revision', 'progress_callback', 'signal', 'cache', 'worker', 'threads', 'wasmUrl', 'wasmBinary',
                      'threadedWasmUrl', 'relaxedSimd', 'fetch', 'hub', 'device'];
const FOREIGN_LOAD = {
  quantized: 'use dtype (for example dtype: "q8_0")', local_files_only: 'pass a folder path, URL or files for a local model',
  cache_dir: 'browsers cache with the Cache API (cache: true); Node reads files where they are', subfolder: 'give the folder itself as the source',
  model_file_name: 'give the folder, or the .gguf file itself', session_options: 'not an onnxruntime option set: see the load options',
  config: 'the model folder\'s config.json is read', progress: 'use progress_callback',
};

// Edits (insert, delete, substitute, swap two neighbours) from a to b: optimal string alignment distance, so that a
// typo such as "dtpye" is one edit from "dtype".
function editDistance(a, b) {
  const d = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++)
    for (let j = 1; j <= b.length; j++) {
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] !== b[j - 1] ? 1 : 0));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.length][b.length];
}

// Unknown option names are errors that say what to use instead.
function checkNames(opts, known, foreign, what) {
  if (opts == null) return;
  if (typeof opts !== 'object' || Array.isArray(opts)) throw new TypeError(`${what}: options must be an object`);
  for (const k of Object.keys(opts)) {
    if (known.includes(k)) continue;
    let msg = `${what}: unknown option "${k}"`;
    if (foreign[k]) throw new Error(`${msg} (${foreign[k]})`);
    const near = known.map((n) => [n, editDistance(k, n)]).filter(([n, d]) => d * 3 <= Math.max(k.length, n.length)).sort((a, b) => a[1] - b[1])[0];
    throw new Error(near ? `${msg} (did you mean "${near[0]}"?)` : `${msg} (known: ${known.join(', ')})`);
  }
}

function loadOptions(opts, what) {
  checkNames(opts, LOAD_OPTIONS, FOREIGN_LOAD, what);
  if (opts.device != null && !['wasm', 'cpu', 'auto'].includes(opts.device))
    throw new Error(`${what}: device "${opts.device}" is not supported: wasmformer runs on the CPU (WebAssembly SIMD), device "wasm"`);
  if (opts.fetch && opts.worker !== false) throw new Error(`${what}: a custom fetch works with { worker: false } only (a function cannot be sent to the worker)`);
}

// ------------------------------------------------------------------------------------------------- the engine
const clients = new Map();  // one client (one worker) per set of engine options

function clientFor(opts) {
  const abs = (u) => {  // against the page, not the worker
    if (!u) return undefined;
    try { return new URL(String(u), globalThis.location?.href).href; } catch { return String(u); }
  };
  const eo = { wasmUrl: abs(opts.wasmUrl), wasmBinary: opts.wasmBinary, threads: opts.threads, threadedWasmUrl: abs(opts.threadedWasmUrl), relaxedSimd: opts.relaxedSimd };
  const local = opts.worker === false;
  const key = `${local ? 'local' : 'worker'}:${JSON.stringify({ ...eo, wasmBinary: undefined })}`;
  if (eo.wasmBinary) return local ? new LocalClient(platform, eo) : new WorkerClient(platform, eo);  // bytes: a client of their own
  let c = clients.get(key);
  if (!c) clients.set(key, (c = local ? new LocalClient(platform, eo) : new WorkerClient(platform, eo)));
  return c;
}

// Stops the package's workers (their models are gone); the next load starts new ones.
export function terminate() {
  for (const c of clients.values()) c.terminate();
  clients.clear();
}

// The user's source → a descriptor the engine's side resolves (sources.js). Relative URLs resolve against the page
// here, not against the worker's script; Node paths against the working directory.
async function describe(source, opts, task) {
  if (source == null) {
    const d = await platform.defaultModel(task);
    return { desc: (await describe(d.source, opts)).desc, name: d.name, defaults: d.options };
  }
  if (source instanceof ArrayBuffer || ArrayBuffer.isView(source)) return { desc: { type: 'files', files: { 'model.gguf': source } }, name: 'model.gguf' };
  if (typeof Blob !== 'undefined' && source instanceof Blob && !Array.isArray(source)) {
    const name = source.name || 'model.gguf';
    return { desc: { type: 'files', files: { [name]: source } }, name };
  }
  if (typeof FileList !== 'undefined' && source instanceof FileList) source = [...source];
  if (Array.isArray(source)) return { desc: { type: 'files', files: Object.fromEntries(source.map((f) => [f.name, f])) }, name: 'files' };
  if (source instanceof URL) source = source.href;
  if (typeof source === 'string') {
    const hub = hubSource(source, opts);
    if (hub) return { desc: hub, name: hub.repo };
    return { desc: await platform.describe(source, opts), name: source };
  }
  if (typeof source === 'object') {  // file name → contents, or → URL object (fetched, or read from disk in Node)
    const files = {}, urls = {};
    for (const [n, v] of Object.entries(source)) {
      if (v instanceof URL) urls[n] = v.href;
      else files[n] = v;
    }
    return { desc: { type: 'files', files, urls }, name: 'files' };
  }
  throw new TypeError(`unsupported model source ${String(source)}: give a URL, a Hugging Face repo id, a folder path (Node), File objects, bytes or a map of file names`);
}

// A Hugging Face repo id ("org/name") or repo URL (…/org/name, …/tree/rev, …/resolve/rev/) → a hub descriptor.
export function hubSource(s, opts = {}) {
  const hub = opts.hub ?? 'https://huggingface.co';
  if (/^[\w][\w.-]*\/[\w][\w.-]*$/.test(s) && !/\.gguf$/i.test(s)) {
    if (platform.isLocalPath?.(s)) return null;  // Node: an existing folder of that name wins
    return { type: 'hub', repo: s, revision: opts.revision ?? 'main', hub };
  }
  let u;
  try { u = new URL(s); } catch { return null; }
  if (u.origin !== new URL(hub).origin) return null;
  const parts = u.pathname.split('/').filter(Boolean);
  const repo = parts[0] === 'models' ? parts.slice(1, 3) : parts.slice(0, 2);
  const rest = parts.slice(parts[0] === 'models' ? 3 : 2);
  if (repo.length < 2) return null;
  if ((rest[0] === 'resolve' || rest[0] === 'blob') && rest.length > 2) return null;  // one file: fetched as a URL
  const revision = (rest[0] === 'tree' || rest[0] === 'resolve') && rest[1] ? decodeURIComponent(rest[1]) : opts.revision ?? 'main';
  return { type: 'hub', repo: repo.join('/'), revision, hub };
}

async function open(kind, source, opts, task) {
  const what = kind === 'tokenizer' ? 'Tokenizer.load' : task ? `load (${task})` : 'Model.load';
  loadOptions(opts, what);
  if (opts.signal?.aborted) throw abortError(opts.signal);
  const client = clientFor(opts);
  const { desc, name, defaults } = await describe(source, opts, task);
  if (defaults) opts = { ...defaults, ...opts };  // a default model's own options (wasmformer-models), the call's first
  const engine = {};
  if (opts.dtype != null) engine.dtype = opts.dtype;
  if (opts.memory_budget != null) engine.memory_budget = opts.memory_budget;
  const progress = opts.progress_callback;
  const { handle, info } = await client.load(kind, desc, { engine, cache: opts.cache, fetch: opts.fetch, name }, progress, opts.signal);
  progress?.({ status: 'ready', task: task ?? kind, model: name });
  return { client, handle, info, name };
}

// ------------------------------------------------------------------------------------------------------ objects
class Handle {
  constructor({ client, handle, info, name }) {
    this._client = client;
    this._handle = handle;
    this.info = info;
    this.source = name;
    this._queue = Promise.resolve();
    this._disposed = false;
  }
  // Calls on one object run one after another; several objects share the engine.
  _serial(fn) {
    const run = this._queue.then(() => {
      if (this._disposed) throw new Error('wasmformer: this object was disposed');
      return fn();
    });
    this._queue = run.catch(() => {});
    return run;
  }
  // A call with a signal rejects with an AbortError as soon as the signal fires (client.js: how far the abort
  // reaches into a running call).
  _call(method, args, signal) {
    if (signal?.aborted) return Promise.reject(abortError(signal));
    const call = this._client.call(this._handle, method, args, signal);
    if (!signal) return call;
    let onAbort;
    const aborted = new Promise((_, reject) => {
      onAbort = () => reject(abortError(signal));
      signal.addEventListener('abort', onAbort, { once: true });
    });
    return Promise.race([call, aborted]).finally(() => signal.removeEventListener('abort', onAbort));
  }
  // { threads, threading, simd, backend }: how this object's engine runs
  async engineInfo() {
    return { ...(await this._client.threadInfo()), backend: this._client.kind };
  }
  // Frees the object's memory in the engine (the engine itself stays for other objects).
  async dispose() {
    if (this._disposed) return;
    this._disposed = true;
    await this._queue;
    await this._client.dispose(this._handle);
  }
  [disposeKey]() {
    void this.dispose();
  }
  [asyncDisposeKey]() {
    return this.dispose();
  }
}

function textArg(text, what) {
  if (typeof text === 'string') return text;
  if (Array.isArray(text) && text.some((m) => m && typeof m === 'object' && 'role' in m))
    throw new TypeError(what === 'text-generation' ? `${what}: chat messages are for chat models: give them to model.chat(messages) or to the text-generation pipeline; generate() takes a string`
                                                   : `${what}: chat messages are for text-generation (model.chat, or pipeline('text-generation')); give a string`);
  throw new TypeError(`${what}: the text must be a string, got ${Array.isArray(text) ? 'an array' : typeof text}`);
}

// ----------------------------------------------------------------------------------------------------- chat
// A chat is a list of { role, content } messages; a template (the model's, from tokenizer_config.json,
// chat_template.jinja or its GGUF; or options.chat_template) makes it a prompt. The engine chooses the template and
// checks the messages and options (src/tasks/generation.h: chat_template_json); the template is rendered here with
// @huggingface/jinja, with the variables Hugging Face's apply_chat_template passes, and the prompt is generated from
// without the tokenizer's own BOS (add_special_tokens: false): the template wrote its special tokens as text.
const isChat = (x) => Array.isArray(x) && x.length > 0 && x.every((m) => m !== null && typeof m === 'object' && !Array.isArray(m));
const CHAT_OPTIONS = ['chat_template', 'tools', 'documents', 'add_generation_prompt', 'continue_final_message', 'chat_template_kwargs', 'tokenizer_encode_kwargs'];
// transformers.js's tokenizer_encode_kwargs: apply_chat_template's own options, or template variables; these
// tokenizer options mean nothing for a prompt that is generated from
const TOKENIZER_ONLY = ['tokenize', 'padding', 'truncation', 'max_length', 'return_tensor', 'return_dict', 'tokenizer_kwargs'];

// A call's options → { chat: its chat options (tokenizer_encode_kwargs spread into them), rest: the others }.
function splitChatOptions(o, what) {
  const chat = {}, rest = {};
  for (const [k, v] of Object.entries(o)) {
    (CHAT_OPTIONS.includes(k) ? chat : rest)[k] = v;
    // the engine knows the generation options; a misspelt chat option is caught here
    const near = CHAT_OPTIONS.find((n) => n !== k && editDistance(k, n) * 3 <= Math.max(k.length, n.length));
    if (!CHAT_OPTIONS.includes(k) && near) throw new Error(`${what}: unknown option "${k}" (did you mean "${near}"?)`);
  }
  const kw = chat.tokenizer_encode_kwargs;
  delete chat.tokenizer_encode_kwargs;
  if (kw != null) {
    if (typeof kw !== 'object' || Array.isArray(kw)) throw new TypeError(`${what}: option tokenizer_encode_kwargs must be an object`);
    for (const [k, v] of Object.entries(kw)) {
      if (TOKENIZER_ONLY.includes(k)) continue;
      if (k === 'chat_template_kwargs') chat.chat_template_kwargs = { ...v, ...chat.chat_template_kwargs };
      else if (CHAT_OPTIONS.includes(k)) chat[k] ??= v;
      else chat.chat_template_kwargs = { [k]: v, ...chat.chat_template_kwargs };
    }
  }
  return { chat, rest };
}

let jinja = null;
async function loadJinja() {
  try {
    return (jinja ??= await import('@huggingface/jinja'));
  } catch (e) {
    throw new Error(`chat templates are rendered with @huggingface/jinja, which could not be loaded (${e?.message ?? e}); a page without a bundler ` +
                    'maps it in an import map: { "imports": { "@huggingface/jinja": "./node_modules/@huggingface/jinja/dist/index.js" } }');
  }
}
const compiled = new Map();  // template source → Template (a few; a model's template is rendered again each turn)
const JINJA_GLOBALS = ['raise_exception', 'range', 'strftime_now', 'namespace', 'true', 'false', 'none', 'True', 'False', 'None'];

// messages (a chat) → { prompt, continued }: the rendered text, and whether it continues the last message.
// chat: the chat options; defaults: the pipeline's (continue_final_message when the last message is the
// assistant's, else add_generation_prompt) or apply_chat_template's (neither).
async function renderChat(obj, messages, chat, { pipelineDefaults }) {
  const last = Array.isArray(messages) ? messages.at(-1) : undefined;
  const cont = chat.continue_final_message ?? (pipelineDefaults && chat.add_generation_prompt !== true && last?.role === 'assistant');
  const addPrompt = chat.add_generation_prompt ?? (pipelineDefaults && !cont);
  const options = { ...chat, add_generation_prompt: addPrompt, continue_final_message: cont };
  for (const k of Object.keys(options)) if (options[k] === undefined) delete options[k];
  const t = await obj._call('chatTemplate', { messages, options });
  const { Template } = await loadJinja();
  const where = t.template_name ? `the chat template "${t.template_name}"` : 'the chat template';
  let tpl = compiled.get(t.template);
  if (!tpl) {
    try {
      tpl = new Template(t.template);
    } catch (e) {
      throw new Error(`${where} is not a valid template: ${e?.message ?? e}`);
    }
    if (compiled.size > 8) compiled.clear();
    compiled.set(t.template, tpl);
  }
  // the package's globals (raise_exception, range, strftime_now, true / false / none) are the template's own
  const vars = { ...t.special_tokens, ...chat.chat_template_kwargs };
  for (const k of JINJA_GLOBALS) delete vars[k];
  let prompt;
  try {
    prompt = tpl.render({ ...vars, messages, tools: chat.tools ?? null, documents: chat.documents ?? null, add_generation_prompt: addPrompt });
  } catch (e) {
    throw new Error(`${where} stopped: ${e?.message ?? e}`);  // raise_exception("…") in the template, or an error in it
  }
  if (typeof prompt !== 'string') throw new Error(`${where} did not render to text`);
  if (cont) {  // cut after the last message's text, as Hugging Face does, so that generation goes on from it
    let text = last.content;
    if (Array.isArray(text)) text = text.filter((p) => p?.type === 'text').at(-1)?.text;
    if (typeof text !== 'string') throw new Error('continue_final_message: the last message has no text to continue');
    const at = prompt.lastIndexOf(text.trim());
    if (at < 0) throw new Error('continue_final_message: the last message was not found in the rendered chat (its template changes it)');
    const lead = text.trimStart();
    prompt = prompt.slice(0, at + (prompt.slice(at, at + lead.length) === text ? lead.length : text.trim().length));
  }
  return { prompt, continued: cont };
}

// The conversation with the new text: a new assistant message, or the last message continued.
function withReply(messages, text, continued) {
  if (!continued) return [...messages, { role: 'assistant', content: text }];
  const last = { ...messages.at(-1) };
  if (typeof last.content === 'string') last.content += text;
  else {
    const parts = [...last.content];
    const i = parts.findLastIndex((p) => p?.type === 'text');
    parts[i] = { ...parts[i], text: parts[i].text + text };
    last.content = parts;
  }
  return [...messages.slice(0, -1), last];
}

// A text or a list (any iterable) of texts → an array of texts (each checked as textArg does).
const textList = (texts, what) =>
  (typeof texts !== 'string' && typeof texts?.[Symbol.iterator] === 'function' ? Array.from(texts) : [texts]).map((t) => textArg(t, what));

const tokenizerCalls = (obj) => ({
  encode(text, { add_special_tokens = true, ...rest } = {}) {
    checkNames(rest, [], {}, 'encode');
    return obj._serial(() => obj._call('encode', { text: textArg(text, 'encode'), add_special_tokens }));
  },
  decode(ids, { skip_special_tokens = false, ...rest } = {}) {
    checkNames(rest, [], {}, 'decode');
    return obj._serial(() => obj._call('decode', { ids: Array.from(ids, Number), skip_special_tokens }));
  },
  // As transformers.js: the chat as the template makes it, a string (tokenize: false) or its ids (tokenized
  // without the tokenizer's own special tokens; a plain array here). add_generation_prompt defaults to false; names
  // other than apply_chat_template's options are template variables (enable_thinking, …).
  apply_chat_template(messages, { tokenize = true, ...o } = {}) {
    const { chat, rest } = splitChatOptions(o, 'apply_chat_template');
    for (const k of TOKENIZER_ONLY) delete rest[k];
    if (Object.keys(rest).length) chat.chat_template_kwargs = { ...rest, ...chat.chat_template_kwargs };
    return obj._serial(async () => {
      const { prompt } = await renderChat(obj, messages, chat, { pipelineDefaults: false });
      return tokenize ? obj._call('encode', { text: prompt, add_special_tokens: false }) : prompt;
    });
  },
});

// A tokenizer on its own (tokenizer.json, vocab.txt, or vocab.json + merges.txt; or a model folder's).
export class Tokenizer extends Handle {
  static async load(source, opts = {}) {
    return new Tokenizer(await open('tokenizer', source, opts));
  }
  encode(text, opts) { return tokenizerCalls(this).encode(text, opts); }
  decode(ids, opts) { return tokenizerCalls(this).decode(ids, opts); }
  apply_chat_template(messages, opts) { return tokenizerCalls(this).apply_chat_template(messages, opts); }
}

// A model and its tokenizer. What it can do is info.tasks (fill-mask, text-generation, …); FillMask and
// TextGenerator are models loaded for one task, refused at load when the model cannot run it.
export class Model extends Handle {
  static async load(source, opts = {}) {
    return Model._load(Model, null, source, opts);
  }
  static async _load(Cls, task, source, opts) {
    const m = new Cls(await open('pipeline', source, opts, task));
    if (task && !m.info.tasks.includes(task)) {
      await m.dispose();
      throw new Error(`${task} needs a model that can run it; this one (${m.info.architecture}) supports: ${m.info.tasks.join(', ') || 'no task'}`);
    }
    return m;
  }
  get tokenizer() {
    return (this._tokenizer ??= tokenizerCalls(this));
  }
  _need(task) {
    if (!this.info.tasks.includes(task)) throw new Error(`${task}: this model (${this.info.architecture}) supports ${this.info.tasks.join(', ') || 'no task'}`);
  }

  // fill-mask → { results: one list per mask of { score, token, token_str, sequence }, attention?, timings }.
  // An array of texts runs as one padded batch → one such result per text. Options other than signal go to the
  // engine (top_k, targets, attention_layer; attention only for a single text).
  fill(text, { signal, ...options } = {}) {
    return this._serial(async () => {
      this._need('fill-mask');
      const t0 = now();
      if (Array.isArray(text)) {
        const texts = text.map((t) => textArg(t, 'fill-mask'));
        const r = await this._call('fillMaskBatch', { texts, options }, signal);
        const timings = { seconds: (now() - t0) / 1000, ...(await this.engineInfo()) };
        return r.batch.map((results) => ({ results, timings }));
      }
      const r = await this._call('fillMask', { text: textArg(text, 'fill-mask'), options }, signal);
      const out = { results: r.results, timings: { seconds: (now() - t0) / 1000, ...(await this.engineInfo()) } };
      if (r.attention) out.attention = { layer: r.attention_layer, heads: this.info.n_head, data: r.attention };
      return out;
    });
  }

  // The encoder tasks (engine: src/tasks/encoder-tasks.h). Every one takes a text or a list of texts (a list runs as
  // padded batches, sorted by length inside); options other than signal go to the engine. Offsets (start, end) are
  // string indices into the input.
  _run(task, inputs, { signal, ...options } = {}) {
    return this._serial(async () => {
      this._need(task);
      return this._call('run', { task, inputs, options }, signal);
    });
  }

  // feature-extraction → a Tensor-like { type: 'float32', data: Float32Array, dims, size, tolist() }: (B, T, E) token
  // states (padding rows zero), or (B, E) with { pooling: 'mean' | 'cls' }; { normalize: true } for unit vectors. A
  // sentence-transformers folder (modules.json) sets its own pooling and normalization unless the options say.
  async embed(texts, opts) {
    const r = await this._run('feature-extraction', { texts: textList(texts, 'feature-extraction') }, opts);
    return tensor(r.data, r.dims);
  }

  // text-classification → per text, its labels best first: [{ label, score }] (top_k: 1 by default; null or 0: all).
  // A text may be { text, text_pair }.
  async classify(texts, opts) {
    const list = Array.isArray(texts) ? texts : [texts];
    const pairs = list.map((t) => (t && typeof t === 'object' && 'text' in t ? t : null));
    if (pairs.some(Boolean) && !pairs.every(Boolean)) throw new TypeError('text-classification: give all texts as { text, text_pair } or none');
    const inputs = pairs[0] ? { texts: textList(pairs.map((p) => p.text), 'text-classification'), text_pairs: textList(pairs.map((p) => p.text_pair), 'text-classification') }
                            : { texts: textList(list, 'text-classification') };
    return (await this._run('text-classification', inputs, opts)).results;
  }

  // token-classification → per text, its entities: { entity, score, index, word, start, end } per token, or with
  // aggregation_strategy ('simple', 'first', 'average', 'max') { entity_group, score, word, start, end }.
  async classifyTokens(texts, opts) {
    return (await this._run('token-classification', { texts: textList(texts, 'token-classification') }, opts)).results;
  }

  // question-answering → per question, its best answers { answer, score, start, end } (top_k, doc_stride,
  // max_answer_len, max_seq_len, handle_impossible_answer); a context of any length is read in windows.
  async answer(questions, contexts, opts) {
    const inputs = { questions: textList(questions, 'question-answering'), contexts: textList(contexts, 'question-answering') };
    return (await this._run('question-answering', inputs, opts)).results;
  }

  // zero-shot-classification (an NLI model) → per text { sequence, labels, scores }, best first.
  async zeroShot(texts, labels, opts) {
    const l = typeof labels === 'string' ? [labels] : Array.from(labels ?? [], String);
    return (await this._run('zero-shot-classification', { texts: textList(texts, 'zero-shot-classification'), labels: l }, opts)).results;
  }

  // translation (an encoder–decoder: Marian, opus-mt folders) → per text, its num_return_sequences best hypotheses,
  // best first: { translation_text, score?, finish_reason, token_ids, cross_attentions? }. Options: max_new_tokens,
  // num_beams, num_return_sequences, length_penalty, early_stopping (true, false, 'never'), no_repeat_ngram_size,
  // bad_words_ids, renormalize_logits, do_sample (num_beams 1), temperature, top_k, top_p, seed, skip_special_tokens,
  // output_scores (greedy and sampling: the score, sum(log p); beam search always scores; greedy without it computes
  // only the logits its choice needs), output_attentions (each generated token's cross-attention over the source:
  // { source_tokens, target_tokens, layers, heads, weights[token][layer][head][source] }). The model's
  // generation_config.json gives the defaults.
  async translate(texts, opts) {
    return (await this._run('translation', { texts: textList(texts, 'translation') }, opts)).results;
  }

  // One text's translation as it is generated: an AsyncIterable of text pieces (greedy or sampling: num_beams 1; beam
  // search has its text only at the end, as one piece). After the loop, .result holds the hypotheses as translate()
  // gives them for one text, with timings. An abort ({ signal }) ends the loop within one token with an AbortError
  // whose .result holds { translation_text so far, token_ids, finish_reason: 'aborted' }; the model stays usable.
  translateStream(text, { signal, task = 'translation', ...options } = {}) {
    if (!['translation', 'text2text-generation', 'summarization'].includes(task)) throw new TypeError(`translateStream: task must be translation, text2text-generation or summarization, not ${task}`);
    const model = this;
    const stream = {
      result: null,
      async *[Symbol.asyncIterator]() {
        let release;
        const turn = new Promise((r) => (release = r));
        const prev = model._queue;
        model._queue = turn;
        await prev;
        const key = { translation: 'translation_text', summarization: 'summary_text' }[task] ?? 'generated_text';
        let sofar = '';
        const ids = [];
        const t0 = now();
        try {
          if (model._disposed) throw new Error('wasmformer: this object was disposed');
          model._need(task);
          await model._call('translateStart', { task, text: textArg(text, task), options }, signal);
          for (;;) {
            const s = await model._call('translateStep', {}, signal);
            if (s.id !== undefined) ids.push(s.id);
            if (s.text) {
              sofar += s.text;
              yield s.text;
            }
            if (s.done) {
              const rest = s.results[0][key].slice(sofar.length);  // beam search: the whole text now
              if (rest && s.results[0][key].startsWith(sofar)) yield rest;
              stream.result = { results: s.results, timings: { seconds: (now() - t0) / 1000, ...(await model.engineInfo()) } };
              return;
            }
          }
        } catch (e) {
          if (e?.name === 'AbortError') e.result = { [key]: sofar, token_ids: ids, finish_reason: 'aborted' };
          throw e;
        } finally {
          release();
        }
      },
    };
    return stream;
  }

  // text2text-generation: translate's call with { generated_text } in place of translation_text.
  async text2text(texts, opts) {
    return (await this._run('text2text-generation', { texts: textList(texts, 'text2text-generation') }, opts)).results;
  }

  // text-generation: an AsyncIterable of text pieces (whole characters only). After the loop, .result holds
  // { text, finish_reason, tokens, prompt_tokens, cached_tokens, attention?, timings }. An abort ({ signal }) ends the
  // loop within one token with an AbortError whose .result holds what was generated; the model stays usable. Options
  // other than signal go to the engine (max_new_tokens, do_sample, temperature, top_k, top_p, min_p,
  // repetition_penalty, no_repeat_ngram_size, seed, stop, stop_at_eos, stop_token_ids, add_special_tokens,
  // skip_special_tokens, attention_layer, reuse_cache: start from the last generation's KV cache where the prompt
  // begins with its tokens — chat does, so a conversation's next turn runs only what is new; output_scores: each
  // token's logprob — without it a greedy step computes only the logits its choice needs).
  generate(prompt, { signal, ...options } = {}) {
    return this._stream(prompt, options, signal);
  }

  // A chat (a list of { role, content } messages): the model's chat template makes it a prompt (see renderChat),
  // which is generated from as generate() does: an AsyncIterable of the reply's pieces; after the loop, .result
  // holds generate's result and { prompt: the rendered text, messages: the conversation with the reply }. Options:
  // generate's, and chat_template (a template, or the name of one of the model's), tools, documents,
  // add_generation_prompt (default true), continue_final_message (default: the last message is the assistant's),
  // chat_template_kwargs (more template variables, e.g. { enable_thinking: false }). Special tokens are left out of
  // the reply (skip_special_tokens: true) unless the options say otherwise.
  chat(messages, { signal, ...options } = {}) {
    if (!isChat(messages)) throw new TypeError('chat: messages must be a non-empty list of { role, content } objects');
    return this._stream({ messages }, options, signal);
  }

  _stream(input, options, signal) {
    const steps = this._steps(input, options, signal);
    const stream = {
      result: null,
      async *[Symbol.asyncIterator]() {
        for await (const s of steps) {
          if (s.text) yield s.text;
          if (s.done) stream.result = s.result;
        }
      },
    };
    return stream;
  }

  // The engine's steps of one generation, in turn with the object's other calls: first { prompt, prompt_ids } (the
  // prompt as rendered and tokenized), then { id, text, logprob } per token (logprob with output_scores), the last
  // one with done and the whole result. input: a prompt, or { messages } (a chat, whose options options holds).
  async *_steps(input, options, signal) {
    let release;
    const turn = new Promise((r) => (release = r));
    const prev = this._queue;
    this._queue = turn;
    await prev;
    const tokens = [];
    let text = '', attention, start, chat = null;
    const t0 = now();
    const partial = (finish) => ({ text, finish_reason: finish, tokens, prompt_tokens: start?.prompt_tokens ?? 0, cached_tokens: start?.cached_tokens ?? 0, attention,
                                   ...(chat && { prompt: chat.prompt, messages: withReply(input.messages, text, chat.continued) }) });
    try {
      if (this._disposed) throw new Error('wasmformer: this object was disposed');
      this._need('text-generation');
      let prompt = input;
      if (typeof input === 'object' && input !== null && !Array.isArray(input)) {
        const { chat: chatOptions, rest } = splitChatOptions(options, 'chat');
        chat = await renderChat(this, input.messages, chatOptions, { pipelineDefaults: true });
        prompt = chat.prompt;
        options = { add_special_tokens: false, skip_special_tokens: true, reuse_cache: true, ...rest };
      }
      start = await this._call('generateStart', { prompt: textArg(prompt, 'text-generation'), options }, signal);
      yield { prompt, prompt_ids: start.prompt_ids };
      for (;;) {
        const s = await this._call('generateStep', {}, signal);
        if (s.attention) attention = { layer: s.attention_layer, heads: this.info.n_head, data: s.attention };
        const logprob = s.logprob !== undefined ? { logprob: s.logprob } : {};  // with output_scores
        const step = { id: s.id, text: s.text ?? '', ...logprob, done: s.done };
        if (s.id !== undefined) tokens.push({ id: s.id, text: step.text, ...logprob });
        text += step.text;
        if (s.done) {
          const seconds = (now() - t0) / 1000;
          step.result = { ...partial(s.finish_reason), timings: { seconds, tokens_per_second: tokens.length / seconds, ...(await this.engineInfo()) } };
        }
        yield step;
        if (s.done) return;
      }
    } catch (e) {
      if (e?.name === 'AbortError') e.result = partial('aborted');
      throw e;
    } finally {
      release();
    }
  }

  // A whole generation → its result (see generate); onToken(piece, token) sees each piece as it comes.
  async complete(prompt, { onToken, ...opts } = {}) {
    const s = this.generate(prompt, opts);
    for await (const piece of s) onToken?.(piece);
    return s.result;
  }
}

export class FillMask extends Model {
  static load(source, opts = {}) {
    return Model._load(FillMask, 'fill-mask', source, opts);
  }
}

export class TextGenerator extends Model {
  static load(source, opts = {}) {
    return Model._load(TextGenerator, 'text-generation', source, opts);
  }
}

// ----------------------------------------------------------------------------------------------- the streamer
// As transformers.js's TextStreamer: a pipeline calls put(ids) with the prompt, then with each new token, and end()
// at the end; callback_function receives text as it becomes printable (whole characters), token_callback_function
// the ids. wasmformer's pipelines hand their own streamer the engine's text pieces directly.
export class TextStreamer {
  constructor(tokenizer, { skip_prompt = false, skip_special_tokens = true, callback_function, token_callback_function } = {}) {
    this.tokenizer = tokenizer;
    this.skip_prompt = skip_prompt;
    this.skip_special_tokens = skip_special_tokens;
    this.callback_function = callback_function ?? ((t) => (typeof process === 'object' ? process.stdout.write(t) : console.log(t)));
    this.token_callback_function = token_callback_function;
    this._prompt_done = false;
  }
  // ids: the prompt's (first call) or a new token's, as [[…]]; text: the printable text for them, when known.
  put(ids, text) {
    const flat = Array.from(Array.isArray(ids?.[0]) ? ids[0] : ids ?? [], (x) => BigInt(x));
    if (!this._prompt_done) {
      this._prompt_done = true;
      if (this.skip_prompt) return;
    }
    this.token_callback_function?.(flat);
    if (text) this.on_finalized_text(text, false);
  }
  end() {
    this.on_finalized_text('', true);
  }
  on_finalized_text(text, stream_end) {
    if (text) this.callback_function(text);
  }
}

// As transformers.js's Tensor, for feature-extraction's output.
function tensor(data, dims) {
  return {
    type: 'float32', data, dims, size: data.length,
    tolist() {
      const build = (d, off) => {
        if (d === dims.length - 1) return Array.from(data.subarray(off, off + dims[d]));
        const stride = dims.slice(d + 1).reduce((a, b) => a * b, 1);
        return Array.from({ length: dims[d] }, (_, i) => build(d + 1, off + i * stride));
      };
      return build(0, 0);
    },
  };
}

// ------------------------------------------------------------------------------------------------- pipelines
const PIPELINE_CALL = {
  'fill-mask': ['signal'],  // + the engine's
  'text-generation': ['signal', 'streamer', 'return_full_text'],
  'feature-extraction': [],
  'text-classification': [],
  'token-classification': [],
  'question-answering': [],
  'zero-shot-classification': [],
  translation: [],
  'text2text-generation': [],
  summarization: [],
};
const TASK_ALIASES = { 'sentiment-analysis': 'text-classification', ner: 'token-classification', embeddings: 'feature-extraction' };

// The encoder tasks' pipelines, with transformers.js's call shapes and outputs.
function encoderPipeline(task, m) {
  switch (task) {
    case 'feature-extraction':
      return (texts, o) => m.embed(texts, o);
    case 'text-classification':
      // one text: its top_k labels; several: one list each, or one object each when top_k is 1 (the default)
      return async (texts, o = {}) => {
        const r = await m.classify(texts, o);
        if (!Array.isArray(texts)) return r[0];
        return (o.top_k ?? 1) === 1 ? r.map((l) => l[0]) : r;
      };
    case 'token-classification':
      return async (texts, o) => {
        const r = await m.classifyTokens(texts, o);
        return Array.isArray(texts) ? r : r[0];
      };
    case 'question-answering':
      // one answer (top_k 1) as an object, else a list; a list of questions: one of those each
      return async (question, context, o = {}) => {
        const r = await m.answer(question, context, o);
        const shape = (l) => ((o.top_k ?? 1) === 1 ? l[0] ?? null : l);
        return Array.isArray(question) ? r.map(shape) : shape(r[0]);
      };
    case 'zero-shot-classification':
      return async (texts, candidate_labels, o) => {
        const r = await m.zeroShot(texts, candidate_labels, o);
        return Array.isArray(texts) ? r : r[0];
      };
    case 'translation':
    case 'text2text-generation':
    case 'summarization': {
      // as transformers.js: one flat list of { translation_text } ({ generated_text }, { summary_text }),
      // num_return_sequences per text; with output_attentions each carries its cross_attentions
      const key = { translation: 'translation_text', summarization: 'summary_text' }[task] ?? 'generated_text';
      return async (texts, o = {}) => {
        const r = await m._run(task, { texts: textList(texts, task) }, o);
        return r.results.flat().map((h) => (h.cross_attentions ? { [key]: h[key], cross_attentions: h.cross_attentions } : { [key]: h[key] }));
      };
    }
  }
}

export async function pipeline(task, source, opts = {}) {
  task = TASK_ALIASES[task] ?? task;
  if (!(task in PIPELINE_CALL)) {
    const near = Object.keys(PIPELINE_CALL).find((t) => editDistance(task, t) <= 3);
    throw new Error(`unknown task "${task}"${near ? ` (did you mean "${near}"?)` : ''} (supported: ${Object.keys(PIPELINE_CALL).join(', ')})`);
  }
  if (source != null && typeof source === 'object' && !(source instanceof URL) && !Array.isArray(source) && !ArrayBuffer.isView(source) &&
      !(source instanceof ArrayBuffer) && !(typeof Blob !== 'undefined' && source instanceof Blob) && LOAD_OPTIONS.some((k) => k in source) &&
      Object.keys(opts).length === 0) {
    opts = source;  // pipeline(task, { dtype, … }): the default model with these options
    source = undefined;
  }
  const Cls = task === 'fill-mask' ? FillMask : task === 'text-generation' ? TextGenerator : null;
  const m = Cls ? await Cls.load(source, opts) : await Model._load(Model, task, source, opts);
  let run;
  if (!Cls) {
    run = encoderPipeline(task, m);
  } else if (task === 'fill-mask') {
    // one mask: its candidates; several masks: one list per mask; an array of texts: one of those per text
    const shape = ({ results }) => (results.length === 1 ? results[0] : results);
    run = async (texts, o = {}) => {
      const r = await m.fill(texts, o);
      return Array.isArray(r) ? r.map(shape) : shape(r);
    };
  } else {
    // a prompt → [{ generated_text: prompt + continuation }]; a chat (a list of { role, content }) → [{ generated_text:
    // the conversation with the assistant's reply }] (return_full_text: false → the reply's text alone, as Python
    // transformers); a list of either → one of those each
    run = async (prompts, { streamer, return_full_text, signal, ...o } = {}) => {
      const one = async (p) => {
        const own = streamer instanceof TextStreamer;
        const input = typeof p === 'string' ? p : { messages: p };
        let result;
        for await (const s of m._steps(input, o, signal)) {
          if (s.prompt_ids) {
            if (own) {
              streamer.put([]);  // the prompt: skipped, or shown as the user wrote it (a chat: as its template made it)
              if (!streamer.skip_prompt) streamer.on_finalized_text(s.prompt, false);
            } else {
              streamer?.put?.([s.prompt_ids]);
            }
          }
          if (s.id !== undefined) streamer?.put?.([[s.id]], own ? s.text : undefined);
          if (s.done) result = s.result;
        }
        streamer?.end?.();
        if (typeof p !== 'string') return [{ generated_text: return_full_text === false ? result.text : result.messages }];
        return [{ generated_text: return_full_text === false ? result.text : p + result.text }];
      };
      const batch = Array.isArray(prompts) && (prompts.every((p) => typeof p === 'string') || (prompts.length > 0 && prompts.every(isChat)));
      if (batch) {
        const out = [];
        for (const p of prompts) out.push(await one(p));
        return out;
      }
      if (isChat(prompts)) return one(prompts);
      if (Array.isArray(prompts))
        throw new TypeError('text-generation: give a string, a list of strings, a chat (a list of { role, content } objects) or a list of chats');
      return one(textArg(prompts, 'text-generation'));
    };
  }
  const dispose = () => m.dispose();
  return Object.assign(run, { task, model: m, tokenizer: m.tokenizer, dispose, [disposeKey]: () => void dispose(), [asyncDisposeKey]: dispose });
}
