// Timing of one row of the benchmark: two engines (A = wasmformer, B = a peer or wasmformer on other settings) on the
// same model shape and the same tokens, loaded side by side, warmed up, then timed alternately A B A B … .
// Runs unchanged in Node and in the Chromium page (page.html); what differs (the modules, where files are) comes in
// `ctx`. Each engine's result is a list of samples and its info (threads, and `output`: the token ids it produced
// in its last run — fill-mask's top-1, or the generated ids — to show that both engines computed the same model);
// one sample is
//   fill:     { ms }                                  one fill-mask call (BERT, 128 tokens)
//   prefill:  { prefill_ms }                          a generation of one token (GPT-2, 128-token prompt)
//   generate: { prefill_ms, decode_tps }              1 + 64 tokens: time to the first, then tokens/s of the 64 after it
//   embed:    { ms, sentences_per_s }                 feature-extraction of a batch of texts, mean pooling + L2 norm
//   classify: { ms }                                  text-classification of one text (softmax, the best label)
//   qa:       { ms }                                  question-answering, question + context in one window
// The encoder tasks also compare what the two engines computed (agreement(), in the row's result): A and B are fed
// the same ids — wasmformer's pipeline takes the texts, and its own tokenizer is checked at load to give the ids
// that B is fed — and their embeddings, labels or answers must agree.
// Generation rows whose two engines both can (wasmformer, wllama) also compare their greedy tokens and the
// log-probabilities behind them: after the timed runs, one more untimed generation of each (check()) returns every
// generated token's id and log-probability — wllama's with n_probs 5, its five best of each step, which its server
// computes by sorting the whole vocabulary every step: never inside a timed run — and generationAgreement() says how
// far they agree and, where they part, whether at a near-tie.
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

// Encoder post-processing on the peer's side, in JS, as transformers.js does it after onnxruntime-web's run.
const softmax = (xs) => {
  const m = Math.max(...xs), e = xs.map((x) => Math.exp(x - m)), s = e.reduce((a, b) => a + b, 0);
  return e.map((x) => x / s);
};
// mean of the unmasked rows of last_hidden_state (B, T, E), then each vector L2-normalized (transformers.js's
// mean_pooling and normalize)
function meanPoolNormalize(h, mask, B, T, E) {
  const out = new Float32Array(B * E);
  for (let b = 0; b < B; b++) {
    const o = out.subarray(b * E, (b + 1) * E);
    let n = 0;
    for (let t = 0; t < T; t++) {
      if (!mask[b * T + t]) continue;
      n++;
      const row = h.subarray((b * T + t) * E, (b * T + t + 1) * E);
      for (let e = 0; e < E; e++) o[e] += row[e];
    }
    let ss = 0;
    for (let e = 0; e < E; e++) ss += (o[e] /= n) * o[e];
    const inv = 1 / Math.max(Math.sqrt(ss), 1e-12);
    for (let e = 0; e < E; e++) o[e] *= inv;
  }
  return out;
}
// Hugging Face's QuestionAnsweringPipeline on one window: logits of the question and the special tokens other than
// [CLS] set to -10000, softmax over the window, then [CLS]'s probability zeroed; the best start ≤ end < start +
// max_answer_len inside the context, score p_start · p_end. Returns token indices.
function bestSpan(startLogits, endLogits, ctxStart, ctxEnd, maxAnswerLen = 15) {
  const prep = (l) => {
    const p = softmax(Array.from(l, (x, i) => (i === 0 || (i >= ctxStart && i < ctxEnd) ? x : -10000)));
    p[0] = 0;
    return p;
  };
  const ps = prep(startLogits), pe = prep(endLogits);
  let best = { start: -1, end: -1, score: -1 };
  for (let s = ctxStart; s < ctxEnd; s++)
    for (let e = s; e < Math.min(ctxEnd, s + maxAnswerLen); e++)
      if (ps[s] * pe[e] > best.score) best = { start: s, end: e, score: ps[s] * pe[e] };
  return best;
}

// What the two engines of an encoder row computed, compared; { ok, text } for the report. f32 rows must agree to
// `row.agree` (embeddings: 1 − cosine of each text's vectors; labels and answers: the same, scores within it, relative).
export function agreement(task, a, b, tol) {
  if (task === 'embed') {
    const [B, E] = a.dims, x = a.vectors, y = b.vectors;
    let worst = 0, maxAbs = 0;
    for (let i = 0; i < B; i++) {
      let d = 0, nx = 0, ny = 0;
      for (let e = 0; e < E; e++) {
        const u = x[i * E + e], v = y[i * E + e];
        d += u * v; nx += u * u; ny += v * v;
        maxAbs = Math.max(maxAbs, Math.abs(u - v));
      }
      worst = Math.max(worst, 1 - d / Math.sqrt(nx * ny));
    }
    const ok = b.dims.join() === a.dims.join() && worst <= tol;
    return { ok, text: `embeddings ${a.dims.join(' × ')} (B ${b.dims.join(' × ')}): largest 1 − cosine ${worst.toExponential(1)}, ` +
      `largest |difference| ${maxAbs.toExponential(1)} (required 1 − cosine ≤ ${tol})` };
  }
  const [oa, ob] = [a.output[0], b.output[0]];
  const same = task === 'qa' ? oa.answer === ob.answer && oa.start === ob.start && oa.end === ob.end : oa.label === ob.label;
  // scores relative: a random model's best span can be unlikely (its best start and end apart), its score small
  const dScore = Math.abs(oa.score - ob.score) / Math.max(Math.abs(oa.score), Math.abs(ob.score), 1e-30);
  const show = (o) => (task === 'qa' ? `"${o.answer.length > 40 ? o.answer.slice(0, 37) + '…' : o.answer}" [${o.start}, ${o.end})` : o.label) +
    ` score ${o.score.toPrecision(5)}`;
  return { ok: same && dScore <= tol, text: `${task === 'qa' ? 'answer' : 'label'} ${same ? 'identical' : 'DIFFERENT'}: A ${show(oa)}, B ${show(ob)} ` +
    `(scores differ by ${dScore.toExponential(1)} relative, required ≤ ${tol})` };
}

// How far two greedy generations of the same model agree: identical ids, log-probabilities of the tokens both chose
// within tol (nats); where the ids part, the token B chose must lead A's token by at most tol in B's own top five (a
// near-tie, which different accumulation orders or rounding — Q8_0 activations, llama.cpp's f16 KV cache — can flip
// on random weights). a: { ids, logprobs }; b: the same and top: the five best [id, logprob] of each step.
export function generationAgreement(a, b, tol) {
  const n = Math.min(a.ids.length, b.ids.length);
  let k = 0;
  while (k < n && a.ids[k] === b.ids[k]) k++;
  let dl = 0;
  for (let i = 0; i < k; i++) dl = Math.max(dl, Math.abs(a.logprobs[i] - b.logprobs[i]));
  const f = (x) => (x == null ? '?' : x.toFixed(3));
  const top = (i) => b.top?.[i]?.map(([id, lp]) => `${id} ${f(lp)}`).join(', ') ?? `? (${b.top_error ?? 'not asked for'})`;
  const first = `first token: A ${a.ids[0]} (logprob ${f(a.logprobs[0])}), B ${b.ids[0]} (${f(b.logprobs[0])}); B's top 5 of the first logits: ${top(0)}`;
  const within = `log-probabilities of the tokens both chose within ${dl.toExponential(1)} (largest |A − B|, required ≤ ${tol})`;
  if (a.ids.length !== b.ids.length) return { ok: false, text: `A generated ${a.ids.length} tokens, B ${b.ids.length}` };
  if (k === n) return { ok: dl <= tol, text: `greedy tokens identical (${n}); ${within}; ${first}` };
  const [x, y] = [a.ids[k], b.ids[k]];
  const bx = b.top?.[k]?.find(([id]) => id === x)?.[1];
  const margin = bx == null ? null : b.logprobs[k] - bx;
  const tie = margin != null && margin <= tol;
  return {
    ok: dl <= tol && tie,
    text: `greedy tokens identical for the first ${k} of ${n}, ${within}; at token ${k} A chose ${x} (logprob ${f(a.logprobs[k])}), ` +
      `B chose ${y} (${f(b.logprobs[k])}) and gives ${x} ${bx == null ? 'no place in its top 5' : `${f(bx)}: ${tie ? 'a near-tie' : 'NOT a near-tie'}, ${margin.toFixed(3)} nats apart`} ` +
      `(B's top 5 there: ${top(k)}); ${first}`,
  };
}

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
    const encoderTask = { embed: 'feature-extraction', classify: 'text-classification', qa: 'question-answering' }[w.task];
    if (encoderTask) {
      const p = await pipeline(encoderTask, source, opts);
      info.dtype = p.model.info.dtype;
      // the pipeline's own tokenizer must give the ids the peer is fed (the pipeline itself takes the texts)
      const enc = (t, special) => p.tokenizer.encode(t, { add_special_tokens: special });
      const ids = w.task === 'embed' ? await Promise.all(w.texts.map((t) => enc(t, true)))
        : w.task === 'classify' ? [await enc(w.text, true)]
        : [[...(await enc(w.question, true)), ...(await enc(w.context, false)), w.ids[0][w.ids[0].length - 1]]];
      if (JSON.stringify(ids) !== JSON.stringify(w.ids)) throw new Error(`wasmformer's tokenizer gives other ids than the peer is fed`);
      info.input = `${w.ids.length} × ${w.ids[0].length} ids`;
      seen(await p.model.engineInfo());
      return {
        info,
        async run() {
          const t0 = now();
          if (w.task === 'embed') {
            const e = await p(w.texts, { pooling: 'mean', normalize: true });
            const ms = now() - t0;
            info.vectors = e.data;
            info.dims = e.dims;
            return { ms, sentences_per_s: w.texts.length / (ms / 1e3) };
          }
          const r = w.task === 'classify' ? (await p(w.text))[0] : await p(w.question, w.context, { max_seq_len: w.ids[0].length });
          const ms = now() - t0;
          info.output = [w.task === 'classify' ? { label: r.label, score: r.score } : { answer: r.answer, score: r.score, start: r.start, end: r.end }];
          return { ms };
        },
        dispose: () => p.dispose(),
      };
    }
    const gen = await pipeline('text-generation', source, opts);
    info.dtype = gen.model.info.dtype;
    // the bytes of weights it holds beside the file's, and whether it computes from the file's bytes as they are
    info.weight_bytes = gen.model.info.weight_bytes;
    info.borrows_file_bytes = gen.model.info.borrows_file_bytes;
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
      // untimed: the same greedy generation with each token's log-probability (the model's TextGenerator)
      async check() {
        const r = await gen.model.complete(w.prompt, { max_new_tokens: 1 + steps, do_sample: false, stop_at_eos: false });
        return { ids: r.tokens.map((x) => x.id), logprobs: r.tokens.map((x) => x.logprob) };
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
    if (w.task === 'embed' || w.task === 'classify' || w.task === 'qa') {
      const B = w.ids.length, T = Math.max(...w.ids.map((x) => x.length));
      info.input = `${B} × ${T} ids`;
      return {
        info,
        async run() {
          const t0 = now();
          // the texts' ids padded to the longest (0, [PAD]), as the tokenizer of transformers.js pads a batch
          const ids = new BigInt64Array(B * T), mask = new BigInt64Array(B * T);
          w.ids.forEach((x, b) => x.forEach((id, t) => { ids[b * T + t] = BigInt(id); mask[b * T + t] = 1n; }));
          const feeds = { input_ids: new ort.Tensor('int64', ids, [B, T]), attention_mask: new ort.Tensor('int64', mask, [B, T]) };
          if (session.inputNames.includes('token_type_ids')) feeds.token_type_ids = new ort.Tensor('int64', new BigInt64Array(B * T), [B, T]);
          const out = await session.run(feeds);
          if (w.task === 'embed') {
            const h = out.last_hidden_state, E = h.dims[2];
            info.vectors = meanPoolNormalize(h.data, mask, B, T, E);
            const ms = now() - t0;
            info.dims = [B, E];
            return { ms, sentences_per_s: B / (ms / 1e3) };
          }
          if (w.task === 'classify') {
            const p = softmax(Array.from(out.logits.data));
            const k = p.indexOf(Math.max(...p));
            const ms = now() - t0;
            info.output = [{ label: w.labels[k], score: p[k] }];
            return { ms };
          }
          const sp = bestSpan(out.start_logits.data, out.end_logits.data, w.ctxStart, w.ctxStart + w.words.length);
          const ms = now() - t0;
          // every context token is one whole word: token ctxStart + i is words[i], at wordStarts[i] in the context
          const [i, j] = [sp.start - w.ctxStart, sp.end - w.ctxStart];
          const start = w.wordStarts[i], end = w.wordStarts[j] + w.words[j].length;
          info.output = [{ answer: w.context.slice(start, end), score: sp.score, start, end }];
          return { ms };
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
        // t[1 + i]: token i's chunk (a last chunk with the usage may follow). llama.cpp's server holds a token back
        // while its text is an incomplete UTF-8 sequence and sends it with the next one: then fewer chunks than tokens
        // came, and the last chunk (sent as generation ends) marks the last token.
        return steps ? { prefill_ms, decode_tps: steps / ((t[Math.min(1 + steps, t.length - 1)] - t[1]) / 1e3) } : { prefill_ms };
      },
      // untimed: the same greedy generation with n_probs (each step's token and its n best, with log-probabilities):
      // n_probs 1 for every token, then n_probs 5 up to where the generation parts from ref's (A's) ids, for the five
      // best of the first logits and of that step. wllama 3.8.1 fails to hand over n_probs 5 of some steps (a
      // RangeError in its worker, seen 29 tokens into one run, where the candidates include byte tokens that are not
      // whole UTF-8); then the five best are missing and top_error says why.
      async check(ref) {
        const probs = async (n_probs, max_tokens) => {
          const out = { ids: [], logprobs: [], top: [] };
          await wl.createCompletion({ prompt: w.prompt, max_tokens, temp: 0, top_k: 1, ignore_eos: true, seed: 1, cache_prompt: false,
            n_probs, stream: true, onData: (chunk) => {
              for (const c of chunk.choices?.[0]?.logprobs?.content ?? []) {
                out.ids.push(c.id);
                out.logprobs.push(c.logprob);
                out.top.push(c.top_logprobs.map((x) => [x.id, x.logprob]));
              }
            } });
          return out;
        };
        const { ids, logprobs } = await probs(1, 1 + steps);
        let k = 0;  // where the two part (0 when they never do: then only the first logits' five best are needed)
        while (ref && k < ids.length && ids[k] === ref.ids[k]) k++;
        if (k === ids.length) k = 0;
        try {
          return { ids, logprobs, top: (await probs(5, k + 1)).top };
        } catch (e) {
          return { ids, logprobs, top: [], top_error: String(e?.message ?? e).split('\n')[0] };
        }
      },
      dispose: () => wl.exit(),
    };
  },
};

// One row: B and A loaded (the peer first: if it cannot load, nothing else is spent), `warmup` untimed runs of each,
// then `runs` timed runs A B A B …; every sample kept. A side marked optional that does not load makes the row
// { unavailable } rather than an error (e.g. a dtype this build does not accept yet). A row marked solo whose peer
// does not load in this environment (wllama in Node) times A alone: { a, b: null, peer_error }, no ratio.
export async function runRow(row, ctx, { warmup, runs, log = () => {} }) {
  const loaded = {};
  let peerError = null;
  try {
    for (const key of ['b', 'a']) {
      try {
        loaded[key] = await engines[row[key].engine](row[key], row.workload, ctx);
      } catch (e) {
        if (row[key].optional) return { unavailable: `not available in this build (${e?.message ?? e})` };
        const why = `${row[key].engine} did not load ${row[key].model}: ${e?.message ?? e}`;
        if (key !== 'b' || !row.solo) throw new Error(why);
        peerError = why;
      }
    }
    const samples = { a: [], b: [] };
    for (let r = 0; r < warmup + runs; r++)
      for (const key of ['a', 'b'].filter((k) => loaded[k])) {
        const s = await loaded[key].run();
        if (r >= warmup) samples[key].push(s);
        log(`${row.id} ${key.toUpperCase()} ${r < warmup ? 'warm-up' : `run ${r - warmup + 1}`}: ${JSON.stringify(s, (k, v) => (typeof v === 'number' ? +v.toFixed(1) : v))}`);
      }
    if (peerError) return { a: { samples: samples.a, info: loaded.a.info }, b: null, peer_error: peerError };
    const res = { a: { samples: samples.a, info: loaded.a.info }, b: { samples: samples.b, info: loaded.b.info } };
    if (row.workload.task === 'generate' && loaded.a.check && loaded.b.check) {
      const ca = await loaded.a.check();
      const cb = await loaded.b.check(ca);
      res.agreement = generationAgreement(ca, cb, row.agree ?? 0.05);
      res.agreement.input = `${row.workload.ids.length} prompt tokens each`;
      res.check = { a: ca, b: cb };
    }
    if (['embed', 'classify', 'qa'].includes(row.workload.task)) {
      res.agreement = agreement(row.workload.task, loaded.a.info, loaded.b.info, row.agree);
      res.agreement.input = loaded.a.info.input === loaded.b.info.input ? `input ids identical (${loaded.a.info.input})`
        : `input DIFFERENT: A ${loaded.a.info.input}, B ${loaded.b.info.input}`;
      for (const s of [res.a, res.b]) s.info = { ...s.info, vectors: undefined };
    }
    return res;
  } finally {
    for (const e of Object.values(loaded)) await e.dispose();
  }
}
