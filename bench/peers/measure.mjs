// Timing of one row of the benchmark: two engines (A = wasmformer, B = a peer or wasmformer on other settings) on the
// same model shape and the same tokens, loaded side by side, warmed up, then timed alternately A B A B … .
// Runs unchanged in Node and in the Chromium page (page.html); what differs (the modules, where files are) comes in
// `ctx`. Each engine's result is a list of samples and its info (threads, and `output`: the token ids it produced
// in its last run — fill-mask's top-1, or the generated ids — to show that both engines computed the same model);
// one sample is
//   fill:     { ms }                                  one fill-mask call (BERT, 128 tokens)
//   prefill:  { prefill_ms }                          a generation of one token (GPT-2, 128-token prompt)
//   generate: { prefill_ms, decode_tps }              1 + 64 tokens: time to the first, then tokens/s of the 64 after it
const now = () => performance.now();

export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

const argmaxLast = (t) => {
  const V = t.dims[t.dims.length - 1], d = t.data, off = d.length - V;
  let best = 0;
  for (let i = 1; i < V; i++) if (d[off + i] > d[off + best]) best = i;
  return best;
};

// ------------------------------------------------------------------------------------------------------ engines
// Each loads its model and returns { info, run() → sample, dispose() }; spec = the engine's side of the row, w = the
// row's workload (text, ids, …).
const engines = {
  async wasmformer(spec, w, ctx) {
    const { FillMask, pipeline } = ctx.wasmformer;
    // cache: false — browsers would keep every model in the Cache API, writing gigabytes to disk beside the timings
    const opts = { threads: spec.threads ?? 1, cache: false, ...(spec.dtype ? { dtype: spec.dtype } : {}) };
    const source = ctx.source(spec.model);
    const info = {};
    const seen = (timings) => Object.assign(info, { threads: timings.threads, threading: timings.threading });
    if (w.task === 'fill') {
      const fm = await FillMask.load(source, opts);
      info.dtype = fm.info.dtype;
      return {
        info,
        async run() {
          const t0 = now();
          const r = await fm.fill(w.text, { top_k: 1 });
          const ms = now() - t0;
          seen(r.timings);
          info.output = [r.results[0][0].token];
          return { ms };
        },
        dispose: () => fm.dispose(),
      };
    }
    const gen = await pipeline('text-generation', source, opts);
    info.dtype = gen.model.info.dtype;
    const steps = w.task === 'prefill' ? 0 : w.decode;
    return {
      info,
      async run() {
        const t = [], out = [];  // t[0]: the prompt is handed over (its ids come first), then one time per generated token
        let promptTokens = 0;
        await gen(w.prompt, { max_new_tokens: 1 + steps, do_sample: false, stop_at_eos: false,
          streamer: { put: (ids) => { if (t.length) out.push(Number(ids[0][0])); else promptTokens = ids[0].length; t.push(now()); }, end() {} } });
        info.output = out;
        if (promptTokens !== w.ids.length || t.length !== 2 + steps)
          throw new Error(`wasmformer read ${promptTokens} prompt tokens and generated ${t.length - 1} (expected ${w.ids.length} and ${1 + steps})`);
        seen(await gen.model.engineInfo());
        const prefill_ms = t[1] - t[0];
        return steps ? { prefill_ms, decode_tps: steps / ((t[t.length - 1] - t[1]) / 1e3) } : { prefill_ms };
      },
      dispose: () => gen.dispose(),
    };
  },

  async ort(spec, w, ctx) {
    const { ort } = ctx;
    const session = await ort.InferenceSession.create(await ctx.bytes(spec.model), { executionProviders: ['wasm'], graphOptimizationLevel: 'all' });
    const i64 = (xs, dims) => new ort.Tensor('int64', BigInt64Array.from(xs, BigInt), dims);
    const info = { threads: ctx.ortThreads, threading: `onnxruntime-web numThreads ${ctx.ortThreads}` };
    const T = w.ids.length;
    if (w.task === 'fill') {
      const feeds = { input_ids: i64(w.ids, [1, T]), attention_mask: i64(w.ids.map(() => 1), [1, T]),
                      token_type_ids: i64(w.ids.map(() => 0), [1, T]), mask_positions: i64([w.mask], [1]) };
      return {
        info,
        async run() {
          const t0 = now();
          info.output = [argmaxLast((await session.run(feeds)).logits)];
          return { ms: now() - t0 };
        },
        dispose: () => session.release(),
      };
    }
    const pastNames = session.inputNames.filter((n) => n.startsWith('past_key_values.'));
    const [H, D] = [w.n_head, w.n_embd / w.n_head];
    const steps = w.task === 'prefill' ? 0 : w.decode;
    return {
      info,
      async run() {
        const t0 = now();
        const feeds = { input_ids: i64(w.ids, [1, T]) };
        for (const n of pastNames) feeds[n] = new ort.Tensor('float32', new Float32Array(0), [1, H, 0, D]);
        let out = await session.run(feeds);
        const toks = [argmaxLast(out.logits)];
        const t1 = now();
        for (let s = 0; s < steps; s++) {
          const f = { input_ids: i64([toks[s]], [1, 1]) };
          for (const n of pastNames) f[n] = out[n.replace('past_key_values', 'present')];
          out = await session.run(f);
          toks.push(argmaxLast(out.logits));
        }
        const t2 = now();
        info.output = toks;
        return steps ? { prefill_ms: t1 - t0, decode_tps: steps / ((t2 - t1) / 1e3) } : { prefill_ms: t1 - t0 };
      },
      dispose: () => session.release(),
    };
  },

  // wllama's completion takes text; its own tokenizer must find the same number of tokens (checked on every run)
  async wllama(spec, w, ctx) {
    const wl = new ctx.Wllama(ctx.wllamaAssets, { suppressNativeLog: true, allowOffline: true });
    wl.setCompat(null);  // its own build only (no "compat" build fetched from a CDN)
    await wl.loadModel([await ctx.blob(spec.model)], { n_threads: spec.threads ?? 1, n_ctx: 512, n_batch: 512, n_ubatch: 512, n_gpu_layers: 0, warmup: true });
    const info = { threads: wl.getNumThreads(), threading: `wllama ${wl.isMultithread() ? 'multi-thread' : 'single-thread'} build, n_threads ${wl.getNumThreads()}` };
    const steps = w.task === 'prefill' ? 0 : w.decode;
    return {
      info,
      async run() {
        const t = [now()];
        let last;
        // cache_prompt: false, or llama.cpp's server keeps the prompt's KV cache and the next run skips its prefill
        await wl.createCompletion({ prompt: w.prompt, max_tokens: 1 + steps, temp: 0, top_k: 1, ignore_eos: true, seed: 1, cache_prompt: false,
          stream: true, onData: (chunk) => { t.push(now()); last = chunk; } });
        const usage = last?.usage ?? {}, lt = last?.timings ?? {};
        if (usage.prompt_tokens !== w.ids.length || lt.prompt_n !== w.ids.length || usage.completion_tokens !== 1 + steps)
          throw new Error(`wllama read ${usage.prompt_tokens} prompt tokens, computed ${lt.prompt_n} and generated ${usage.completion_tokens} ` +
                          `(expected ${w.ids.length}, ${w.ids.length} and ${1 + steps})`);
        info.llama_timings = { prompt_ms: lt.prompt_ms, predicted_ms: lt.predicted_ms, predicted_n: lt.predicted_n };
        const prefill_ms = t[1] - t[0];
        // t[1 + i]: token i's chunk (a last chunk with the usage may follow)
        return steps ? { prefill_ms, decode_tps: steps / ((t[1 + steps] - t[1]) / 1e3) } : { prefill_ms };
      },
      dispose: () => wl.exit(),
    };
  },
};

// One row: B and A loaded (the peer first: if it cannot load, nothing else is spent), `warmup` untimed runs of each,
// then `runs` timed runs A B A B …; every sample kept. A side marked optional that does not load makes the row
// { unavailable } rather than an error (e.g. a dtype this build does not accept yet).
export async function runRow(row, ctx, { warmup, runs, log = () => {} }) {
  const loaded = {};
  try {
    for (const key of ['b', 'a']) {
      try {
        loaded[key] = await engines[row[key].engine](row[key], row.workload, ctx);
      } catch (e) {
        if (row[key].optional) return { unavailable: `not available in this build (${e?.message ?? e})` };
        throw new Error(`${row[key].engine} did not load ${row[key].model}: ${e?.message ?? e}`);
      }
    }
    const samples = { a: [], b: [] };
    for (let r = 0; r < warmup + runs; r++)
      for (const key of ['a', 'b']) {
        const s = await loaded[key].run();
        if (r >= warmup) samples[key].push(s);
        log(`${row.id} ${key.toUpperCase()} ${r < warmup ? 'warm-up' : `run ${r - warmup + 1}`}: ${JSON.stringify(s, (k, v) => (typeof v === 'number' ? +v.toFixed(1) : v))}`);
      }
    return { a: { samples: samples.a, info: loaded.a.info }, b: { samples: samples.b, info: loaded.b.info } };
  } finally {
    for (const e of Object.values(loaded)) await e.dispose();
  }
}
