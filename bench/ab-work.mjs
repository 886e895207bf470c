// The work bench/ab-builds.mjs times, for Node and for its Chromium page (ab-page.html) alike: compare(builds, source,
// opts, rounds) loads each model through each build's API (builds: { A: its index module, B: … }; source(name): where
// build/bench-models/name is), times them alternating and returns { ms: { A: { work: ms[] }, B: … }, simd: [A's, B's] }.
const words = 'the quick brown fox jumps over the lazy dog and then it runs far away into the deep dark forest where nobody can'.split(' ');
const text = (n, mask = -1) => Array.from({ length: n }, (_, i) => (i === mask ? '[MASK]' : words[i % words.length])).join(' ');
const classifyText = text(words.length), fillText = text(120, 60), prompt = text(128), short = text(8), long = text(600);
const texts = Array.from({ length: 32 }, (_, t) => Array.from({ length: 62 }, (_, i) => words[(i + t) % words.length]).join(' '));
const question = text(10) + '?', context = text(369) + '.';  // with [CLS] and two [SEP]: 384 tokens, one window

async function readJson(src) {
  if (/^https?:/.test(src)) return (await fetch(src)).json();
  const { readFile } = await import('node:fs/promises');
  return JSON.parse(await readFile(src, 'utf8'));
}

async function load(wf, source, opts) {
  const classify = await wf.pipeline('text-classification', source('distilbert-cls'), opts);
  const fill = await wf.FillMask.load(source('bert-base'), opts);
  const fillQ8 = await wf.FillMask.load(source('bert-base'), { ...opts, dtype: 'q8_0' });
  const gpt2f32 = await wf.pipeline('text-generation', source('gpt2-base'), { ...opts, dtype: 'f32' });
  const gpt2q8 = await wf.pipeline('text-generation', source('gpt2-base'), { ...opts, dtype: 'q8_0' });
  const gpt2q4 = await wf.pipeline('text-generation', source('gpt2-base'), { ...opts, dtype: 'q4_0' });
  const gpt2q4k = await wf.pipeline('text-generation', source('gpt2-base'), { ...opts, dtype: 'q4_k' });
  // SmolLM2-135M's shape (npm run bench's llama rows): 30 layers of small products, ~200 operations a decode step
  const llama = await wf.pipeline('text-generation', source('gguf/llama-q8_0.gguf'), opts);
  // the same in llama.cpp's Q4_K_M mix, the file most users download: its 576-wide rows Q5_0, ffn_down / attn_v of
  // half the layers and the output layer Q6_K, the rest Q4_K
  const llamaQ4km = await wf.pipeline('text-generation', source('gguf/llama-q4_k_m.gguf'), opts);
  // Marian (opus-mt-en-de's shape): npm run bench's source sentence and options (</s> banned: 32 tokens every run)
  const marian = await wf.Model.load(source('marian-en-de'), opts);
  // npm run bench's embed and qa rows: 32 texts of 62 words (64 tokens) on all-MiniLM-L6-v2's shape, mean pooling and
  // normalized; a question and a context of 384 tokens on DistilBERT-base's
  const embed = await wf.pipeline('feature-extraction', source('minilm-st'), opts);
  const qa = await wf.pipeline('question-answering', source('distilbert-qa'), opts);
  const ref = await readJson(source('marian-en-de/bench-reference.json'));
  const shared = { dispose() {} };  // a model that another workload disposes
  const translate = (num_beams, extra = {}) => marian.translate(ref.source_text, { num_beams, ...ref.options, ...extra });
  const work = {
    classify: Object.assign(() => classify(classifyText), { model: classify }),
    fill: Object.assign(() => fill.fill(fillText, { top_k: 1 }), { model: fill }),
    'fill q8_0': Object.assign(() => fillQ8.fill(fillText, { top_k: 1 }), { model: fillQ8 }),
    'gpt2 f32': Object.assign(() => gpt2f32(prompt, { max_new_tokens: 1, do_sample: false }), { model: gpt2f32 }),
    'gpt2 q8_0': Object.assign(() => gpt2q8(prompt, { max_new_tokens: 1, do_sample: false }), { model: gpt2q8 }),
    'gpt2 f32 decode 32': Object.assign(() => gpt2f32(short, { max_new_tokens: 32, do_sample: false }), { model: shared }),
    // each token's log-probability asked for: the full output layer every step (no screen, nn/head-screen.h)
    'gpt2 f32 decode 32 scored': Object.assign(() => gpt2f32.model.complete(short, { max_new_tokens: 32, do_sample: false, output_scores: true }), { model: shared }),
    'gpt2 q8_0 decode 32': Object.assign(() => gpt2q8(short, { max_new_tokens: 32, do_sample: false }), { model: shared }),
    'gpt2 q4_0 decode 32': Object.assign(() => gpt2q4(short, { max_new_tokens: 32, do_sample: false }), { model: gpt2q4 }),
    'gpt2 q4_k': Object.assign(() => gpt2q4k(prompt, { max_new_tokens: 1, do_sample: false }), { model: gpt2q4k }),
    'gpt2 q4_k decode 32': Object.assign(() => gpt2q4k(short, { max_new_tokens: 32, do_sample: false }), { model: shared }),
    // a long context: 32 greedy steps after a 600-token prompt, timed from the first token to the last (the prefill
    // not counted); the decode attention's share of a step grows with the cache
    'gpt2 q4_0 decode 32 after 600': Object.assign(async () => {
      const t = [];
      await gpt2q4(long, { max_new_tokens: 33, do_sample: false, streamer: { put: () => t.push(performance.now()), end() {} } });
      return { timed: t[t.length - 1] - t[1] };
    }, { model: shared }),
    'llama q8_0 decode 32': Object.assign(() => llama(short, { max_new_tokens: 32, do_sample: false }), { model: llama }),
    'llama q4_k_m': Object.assign(() => llamaQ4km(prompt, { max_new_tokens: 1, do_sample: false }), { model: llamaQ4km }),
    'llama q4_k_m decode 32': Object.assign(() => llamaQ4km(short, { max_new_tokens: 32, do_sample: false }), { model: shared }),
    embed: Object.assign(() => embed(texts, { pooling: 'mean', normalize: true }), { model: embed }),
    qa: Object.assign(() => qa(question, context, { max_seq_len: 384 }), { model: qa }),
    'marian greedy': Object.assign(() => translate(1), { model: marian }),
    // with a score: every logit of the output layer (no screen: nn/head-screen.h)
    'marian greedy scored': Object.assign(() => translate(1, { output_scores: true }), { model: shared }),
    'marian 4 beams': Object.assign(() => translate(4), { model: shared }),
  };
  // WF_AB_ONLY=a,b: only the workloads whose names contain one of these (every model is loaded all the same)
  const only = (globalThis.process?.env?.WF_AB_ONLY ?? globalThis.WF_AB_ONLY)?.split(',');  // Chromium: set by ab-builds.mjs
  if (only) for (const k of Object.keys(work)) if (k !== 'fill' && !only.some((o) => k.includes(o))) delete work[k];
  return work;
}

function dispose(work) {
  for (const w of Object.values(work)) w.model.dispose?.();
}

export async function compare(builds, source, opts, rounds) {
  const engines = [];
  for (const [name, wf] of Object.entries(builds)) engines.push({ name, work: await load(wf, source, opts) });
  const simd = await Promise.all(engines.map((e) => e.work.fill.model.engineInfo().then((i) => i.simd)));
  const ms = await alternate(engines, rounds);
  for (const e of engines) dispose(e.work);
  return { ms, simd };
}

// rounds of every workload per engine, A B then B A, …, after one warm-up each: { [engine]: { [work]: ms[] } } (a
// workload that times a part of itself returns { timed: ms }); engines: [{ name, work: { [work]: () => promise } }]
export async function alternate(engines, rounds) {
  const ms = Object.fromEntries(engines.map((e) => [e.name, {}]));
  for (const e of engines) for (const w of Object.values(e.work)) await w();
  for (let r = 0; r < rounds; r++)
    for (const e of r % 2 ? [...engines].reverse() : engines)
      for (const [k, w] of Object.entries(e.work)) {
        const t0 = performance.now();
        const result = await w();
        (ms[e.name][k] ??= []).push(typeof result?.timed === 'number' ? result.timed : performance.now() - t0);
      }
  return ms;
}

// the p-quantile of a (the element at ⌊p·(n − 1)⌋ of a sorted copy)
export const quantile = (a, p) => [...a].sort((x, y) => x - y)[Math.floor(p * (a.length - 1))];
