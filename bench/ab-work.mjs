// The work bench/ab-builds.mjs times, for Node and for its Chromium page (ab-page.html) alike: load(wf, source, opts)
// loads each model through one build's API (wf: its index module; source(name): where build/bench-models/name is) and
// returns { name: () => Promise } per workload; dispose(work) frees them.
const words = 'the quick brown fox jumps over the lazy dog and then it runs far away into the deep dark forest where nobody can'.split(' ');
const text = (n, mask = -1) => Array.from({ length: n }, (_, i) => (i === mask ? '[MASK]' : words[i % words.length])).join(' ');
const classifyText = text(words.length), fillText = text(120, 60), prompt = text(128);

export async function load(wf, source, opts) {
  const classify = await wf.pipeline('text-classification', source('distilbert-cls'), opts);
  const fill = await wf.FillMask.load(source('bert-base'), opts);
  const gpt2f32 = await wf.pipeline('text-generation', source('gpt2-base'), { ...opts, dtype: 'f32' });
  const gpt2q8 = await wf.pipeline('text-generation', source('gpt2-base'), { ...opts, dtype: 'q8_0' });
  return {
    classify: Object.assign(() => classify(classifyText), { model: classify }),
    fill: Object.assign(() => fill.fill(fillText, { top_k: 1 }), { model: fill }),
    'gpt2 f32': Object.assign(() => gpt2f32(prompt, { max_new_tokens: 1, do_sample: false }), { model: gpt2f32 }),
    'gpt2 q8_0': Object.assign(() => gpt2q8(prompt, { max_new_tokens: 1, do_sample: false }), { model: gpt2q8 }),
  };
}

export function dispose(work) {
  for (const w of Object.values(work)) w.model.dispose?.();
}

// rounds of every workload per engine, A B then B A, …, after one warm-up each: { [engine]: { [work]: ms[] } }
export async function alternate(engines, rounds) {
  const ms = Object.fromEntries(engines.map((e) => [e.name, {}]));
  for (const e of engines) for (const w of Object.values(e.work)) await w();
  for (let r = 0; r < rounds; r++)
    for (const e of r % 2 ? [...engines].reverse() : engines)
      for (const [k, w] of Object.entries(e.work)) {
        const t0 = performance.now();
        await w();
        (ms[e.name][k] ??= []).push(performance.now() - t0);
      }
  return ms;
}
