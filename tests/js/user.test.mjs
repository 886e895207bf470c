// What a new user meets (issue #20), in Node: Hugging Face repo ids through the hub's API (a local stand-in), folders
// behind servers that answer every path with HTML, a free event loop and AbortSignal.timeout(), strict options,
// transformers.js-shaped progress events and streamers, concurrent calls, a stopped engine, and models too large
// for wasm32 refused before loading.
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { test } from 'node:test';

import { FillMask, Model, TextGenerator, TextStreamer, pipeline, terminate } from 'wasmformer';
import { fixture, root, serve } from './helpers.mjs';

const BERT = fixture('bert-tiny');
const GPT2 = fixture('gpt2-tiny');
const GPT2_MINI = path.join(root, 'models/wasmformer-gpt2-mini');

// A stand-in for the Hugging Face hub: GET /api/models/{repo}/tree/{rev} lists a folder's files, and
// /{repo}/resolve/{rev}/{file} serves them. repos: { 'org/name': folder }.
async function fakeHub(repos) {
  const requests = [];
  const server = http.createServer((req, res) => {
    const u = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    requests.push(`${req.method} ${u}`);
    const api = u.match(/^\/api\/models\/([^/]+\/[^/]+)\/tree\/([^/]+)$/);
    const file = u.match(/^\/([^/]+\/[^/]+)\/resolve\/([^/]+)\/([^/]+)$/);
    const dir = repos[(api ?? file)?.[1]];
    if (!dir) { res.writeHead(404); return res.end('{"error":"Repository not found"}'); }
    if (api) {
      const list = readdirSync(dir).map((n) => ({ type: 'file', path: n, size: statSync(path.join(dir, n)).size }));
      const body = JSON.stringify([...list, { type: 'directory', path: 'onnx' }]);
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(body);
    }
    const body = readFileSync(path.join(dir, file[3]));
    res.writeHead(200, { 'content-length': body.length });
    res.end(body);
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${server.address().port}`, requests, close: () => new Promise((r) => { server.closeAllConnections?.(); server.close(r); }) };
}

test('a Hugging Face repo id loads through the hub\'s file list, at a revision, with no probing', async () => {
  const hub = await fakeHub({ 'org/bert-tiny': BERT });
  try {
    const m = await FillMask.load('org/bert-tiny', { hub: hub.url, revision: 'v1.0', cache: false });
    assert.equal((await m.fill('hello [MASK].', { top_k: 2 })).results[0].length, 2);
    assert.deepEqual(hub.requests.filter((r) => r.startsWith('HEAD')), []);
    assert.ok(hub.requests.includes('GET /api/models/org/bert-tiny/tree/v1.0'));
    assert.ok(hub.requests.includes('GET /org/bert-tiny/resolve/v1.0/model.safetensors'));
    await m.dispose();
    // a repo URL works the same; a missing repo is named in the error
    const byUrl = await Model.load(`${hub.url}/org/bert-tiny/tree/main`, { hub: hub.url, cache: false });
    assert.deepEqual(byUrl.info.tasks, ['feature-extraction', 'fill-mask']);
    await byUrl.dispose();
    await assert.rejects(Model.load('org/missing', { hub: hub.url }), /org\/missing \(revision main\): no such model on the Hugging Face hub, or it is private/);
  } finally {
    await hub.close();
  }
});

test('servers that answer every path with an HTML page (SPA fallback): HTML counts as absent, never as the file', async () => {
  const srv = await serve(GPT2, { spa: true, hide: ['model-files.json'] });
  try {
    const gen = await TextGenerator.load(srv.url, { cache: false });
    assert.equal((await gen.complete('The dog', { max_new_tokens: 3 })).tokens.length, 3);
    await gen.dispose();
    await assert.rejects(TextGenerator.load(srv.url + 'nothing-here.gguf', { cache: false }), /nothing-here\.gguf: the server answered with an HTML page, not the file/);
    await assert.rejects(TextGenerator.load(srv.url + 'no/such/folder/', { cache: false }), /no\/such\/folder\/: no model files there/);
  } finally {
    await srv.close();
  }
  await assert.rejects(FillMask.load(path.join(root, 'no-such-model')), (e) => e.message.includes(path.join(root, 'no-such-model')) && /no such folder or file/.test(e.message));
});

test('Node: the event loop stays free while the engine works, and AbortSignal.timeout() stops a generation', async () => {
  const gen = await TextGenerator.load(GPT2_MINI);
  let ticks = 0;
  const timer = setInterval(() => ticks++, 5);
  const server = http.createServer((req, res) => res.end('ok'));
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const s = gen.generate('It is a truth universally acknowledged', { max_new_tokens: 120, stop_at_eos: false });
  let answered = null;
  let n = 0;
  for await (const _ of s) {
    if (++n === 2) fetch(`http://127.0.0.1:${server.address().port}/`).then(async (r) => (answered = await r.text()));
  }
  clearInterval(timer);
  server.close();
  assert.equal(s.result.tokens.length, 120);
  assert.equal(answered, 'ok');
  assert.ok(ticks >= 10, `${ticks} timer ticks while 120 tokens were generated`);
  // the model's 256 positions end a generation after ~250 tokens, 0.1–0.2 s on this VM: the timeout fires well before
  await assert.rejects(gen.complete('It was', { max_new_tokens: 100000, stop_at_eos: false, signal: AbortSignal.timeout(20) }),
                       (e) => e.name === 'TimeoutError' || e.name === 'AbortError');
  assert.equal((await gen.complete('Again', { max_new_tokens: 4 })).tokens.length, 4);  // still usable
  await gen.dispose();
});

test('options: unknown names suggest the nearest, types are checked, chat messages need a model with a chat template', async () => {
  await assert.rejects(FillMask.load(BERT, { dtpye: 'f32' }), /^Error: load \(fill-mask\): unknown option "dtpye" \(did you mean "dtype"\?\)$/);
  await assert.rejects(FillMask.load(BERT, { device: 'webgpu' }), /device "webgpu" is not supported/);
  await assert.rejects(FillMask.load(BERT, { quantized: true }), /unknown option "quantized" \(use dtype/);
  const gen = await TextGenerator.load(GPT2);
  await assert.rejects(gen.complete('x', { max_length: 5 }), /unknown option "max_length" \(use max_new_tokens/);
  await assert.rejects(gen.complete('x', { max_new_tokens: '10' }), /option max_new_tokens must be an integer, got "10" \(a string\)/);
  await assert.rejects(gen.complete('x', { num_return_sequences: 2 }), /num_return_sequences.*not supported/);
  await assert.rejects(gen.complete([{ role: 'user', content: 'hi' }]), /chat messages are for chat models/);
  await assert.rejects(pipeline('text-generation', GPT2).then((g) => g([{ role: 'user', content: 'hi' }])), /chat messages/);
  await assert.rejects(pipeline('fill-msk', BERT), /unknown task "fill-msk" \(did you mean "fill-mask"\?\)/);
  await gen.dispose();
});

test('progress events as transformers.js sends them: per file, across files, then ready', async () => {
  const events = [];
  const m = await FillMask.load(BERT, { progress_callback: (e) => events.push(e) });
  const files = ['config.json', 'model.safetensors', 'vocab.txt', 'tokenizer_config.json'];
  for (const f of files) {
    assert.ok(events.some((e) => e.status === 'initiate' && e.file === f), `initiate ${f}`);
    assert.ok(events.some((e) => e.status === 'done' && e.file === f), `done ${f}`);
  }
  const p = events.filter((e) => e.status === 'progress' && e.file === 'model.safetensors').at(-1);
  assert.equal(p.loaded, statSync(path.join(BERT, 'model.safetensors')).size);
  assert.equal(p.total, p.loaded);
  assert.equal(p.progress, 100);
  const total = events.filter((e) => e.status === 'progress_total').at(-1);
  assert.equal(total.loaded, total.total);
  assert.equal(total.files['vocab.txt'].loaded, statSync(path.join(BERT, 'vocab.txt')).size);
  assert.deepEqual(events.at(-1), { status: 'ready', task: 'fill-mask', model: BERT });
  assert.ok(events.every((e) => e.status === 'ready' || e.name === BERT));
  await m.dispose();
});

test('streamers: TextStreamer (skip_prompt, ids) and any object with put/end', async () => {
  const generator = await pipeline('text-generation', GPT2);
  let text = '';
  const ids = [];
  const streamer = new TextStreamer(generator.tokenizer, { skip_prompt: true, callback_function: (t) => (text += t), token_callback_function: (x) => ids.push(...x) });
  const [{ generated_text }] = await generator('Once upon a time', { max_new_tokens: 10, streamer });
  assert.equal('Once upon a time' + text, generated_text);
  assert.equal(ids.length, 10);
  assert.equal(typeof ids[0], 'bigint');
  const calls = [];
  await generator('Hello', { max_new_tokens: 3, streamer: { put: (x) => calls.push(x), end: () => calls.push('end') } });
  assert.deepEqual(calls[0], [await generator.tokenizer.encode('Hello')]);  // the prompt's ids first, then one put per token
  assert.equal(calls.length, 5);
  assert.equal(calls.at(-1), 'end');
  await generator.dispose();
});

test('concurrent calls: one object queues them in order, several objects share the engine', async () => {
  const fm = await FillMask.load(BERT);
  const gen = await TextGenerator.load(GPT2);
  const texts = Array.from({ length: 8 }, (_, i) => `word ${i} is a [MASK].`);
  const alone = [];
  for (const t of texts) alone.push((await fm.fill(t, { top_k: 1 })).results[0][0].token_str);
  const [together, story] = await Promise.all([Promise.all(texts.map((t) => fm.fill(t, { top_k: 1 }))), gen.complete('The dog', { max_new_tokens: 12 })]);
  assert.deepEqual(together.map((r) => r.results[0][0].token_str), alone);
  assert.equal(story.tokens.length, 12);
  // a batch is one padded forward pass, with the same answers
  const batch = await fm.fill(texts, { top_k: 1 });
  assert.deepEqual(batch.map((r) => r.results[0][0].token_str), alone);
  await fm.dispose();
  await gen.dispose();
});

test('a stopped engine rejects what was pending, says so, and the next load starts a fresh one', async () => {
  const gen = await TextGenerator.load(GPT2_MINI);
  const pending = gen.complete('It is a truth', { max_new_tokens: 100000, stop_at_eos: false });
  setTimeout(terminate, 100);
  await assert.rejects(pending, /the engine was terminated; models loaded in it are gone/);
  await assert.rejects(gen.complete('x', { max_new_tokens: 1 }), /this model was lost when its engine stopped; load it again/);
  const again = await TextGenerator.load(GPT2);
  assert.equal((await again.complete('x', { max_new_tokens: 2 })).tokens.length, 2);
  await again.dispose();
});

test('models too large for wasm32 are refused before loading, and the engine stays usable', async () => {
  // files announced at 5 GB
  const huge = http.createServer((req, res) => {
    res.writeHead(200, { 'content-length': String(5e9), 'content-type': 'application/octet-stream' });
    res.end();
  });
  await new Promise((r) => huge.listen(0, '127.0.0.1', r));
  await assert.rejects(TextGenerator.load(`http://127.0.0.1:${huge.address().port}/big.gguf`, { cache: false }),
                       /the model's files total 4\.66 GiB, more than this engine can still hold/);
  huge.closeAllConnections?.();
  huge.close();
  // a config whose KV cache alone is 68 GiB: the engine's estimate refuses it before allocating
  const files = Object.fromEntries(readdirSync(GPT2).map((n) => [n, new Uint8Array(readFileSync(path.join(GPT2, n)))]));
  const cfg = JSON.parse(new TextDecoder().decode(files['config.json']));
  files['config.json'] = JSON.stringify({ ...cfg, n_layer: 128, n_positions: 8192, n_embd: 8192, n_head: 64 });
  await assert.rejects(TextGenerator.load(files), /out of memory: this model needs about \d+ MiB .* over the budget of \d+ MiB/);
  const gen = await TextGenerator.load(GPT2);
  assert.equal((await gen.complete('x', { max_new_tokens: 2 })).tokens.length, 2);
  await gen.dispose();
});
