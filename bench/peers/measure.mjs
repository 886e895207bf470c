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
//   translate: { greedy_ms, beam_ms }                 one translation of one source sentence (Marian), greedy, then
//                                                     with num_beams beams: text in, text out, max_new_tokens each
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

// Hugging Face's beam search (GenerationMixin._beam_search of transformers ≥ 4.50, as tools/reference/marian.py's
// _beam writes it) for one source on a transformers.js Seq2Seq pipeline's tokenizer and onnxruntime-web sessions
// (encoder_model, decoder_model_merged). The generation config's eos / decoder start / forced EOS / renormalize_logits /
// length_penalty / early_stopping / bad_words_ids, each unless the options give it; max_new_tokens. Each step: the num_beams running
// hypotheses' last tokens through the decoder as one batch (past fed back: the branch with past), log-softmax, the
// processors (bad words, forced EOS at the last step, renormalize), the running scores added, the best 2·num_beams
// candidates; those that end (EOS or the length) and rank among the first num_beams enter the finished list (score
// / generated length^length_penalty); the best num_beams others run on, the decoder's past reordered to them. The
// encoder's keys and values are the same for every beam and are not reordered. Returns the best finished
// hypothesis { ids (start token first), text }.
// logsumexp of a row (−inf entries count as 0): the log-softmax of a row is row − this
function logSumExp(row) {
  let m = -Infinity;
  for (let i = 0; i < row.length; i++) if (row[i] > m) m = row[i];
  let s = 0;
  for (let i = 0; i < row.length; i++) s += Math.exp(row[i] - m);
  return m + Math.log(s);
}
export async function beamSearch(tr, ortT, text, { num_beams: B, max_new_tokens, ...o }) {
  const gc = { ...tr.model.generation_config, ...o };  // the options over the generation config, as generate() takes them
  const eos = gc.eos_token_id, start = gc.decoder_start_token_id, forced = gc.forced_eos_token_id ?? null, bad_words_ids = gc.bad_words_ids ?? [];
  const lp = gc.length_penalty ?? 1, es = gc.early_stopping ?? false, renorm = !!gc.renormalize_logits;
  const L = 1 + max_new_tokens, f32 = Math.fround;
  const encoder = tr.model.sessions.model, decoder = tr.model.sessions.decoder_model_merged;
  const ids = Array.from(tr.tokenizer(text).input_ids.data, Number), S = ids.length;
  const i64 = (xs, dims) => ortT('int64', BigInt64Array.from(xs, BigInt), dims);
  const h = (await encoder.run({ input_ids: i64(ids, [1, S]), attention_mask: i64(ids.map(() => 1), [1, S]) })).last_hidden_state;
  const E = h.dims[2], hB = new Float32Array(B * S * E);
  for (let b = 0; b < B; b++) hB.set(h.data, b * S * E);
  const encH = ortT('float32', hB, [B, S, E]), encMask = i64(new Array(B * S).fill(1), [B, S]);
  const pastMeta = decoder.inputMetadata.filter((m) => m.name.startsWith('past_key_values.'));
  let past = null, running = Array.from({ length: B }, () => [start]);
  let runScores = Array.from({ length: B }, (_, b) => (b ? -1e9 : 0));
  let fin = Array.from({ length: B }, () => ({ seq: [start], score: -1e9, done: false }));
  let unsatisfied = true;
  for (let cur = 1; cur < L; cur++) {
    const feeds = { encoder_attention_mask: encMask, input_ids: i64(running.map((r) => r[cur - 1]), [B, 1]), encoder_hidden_states: encH,
                    use_cache_branch: ortT('bool', [past !== null], [1]) };
    for (const m of pastMeta)
      feeds[m.name] = past?.[m.name] ?? ortT('float32', new Float32Array(0), m.shape.map((d) => (typeof d === 'number' ? d : d === 'batch_size' ? B : 0)));
    const out = await decoder.run(feeds);
    const V = out.logits.dims[2], acc = new Float32Array(B * V).fill(-Infinity);
    for (let b = 0; b < B; b++) {
      const row = out.logits.data.subarray(b * V, (b + 1) * V), banned = new Set();
      for (const word of bad_words_ids) {
        const r = running[b], n = word.length - 1;
        if (r.length >= n && word.slice(0, n).every((x, j) => r[r.length - n + j] === x)) banned.add(word[n]);
      }
      if (forced !== null && cur === L - 1) {  // forced EOS: every score −inf, EOS's 0 (renormalized: still 0)
        acc[b * V + forced] = runScores[b];
        continue;
      }
      // log_softmax, the banned tokens at −inf, log_softmax again (renormalize_logits) = row − the logsumexp of the
      // tokens not banned: one pass of exp (the logits are this step's output, banned in place)
      const lseAll = renorm ? 0 : logSumExp(row);
      for (const v of banned) row[v] = -Infinity;
      const lse = renorm ? logSumExp(row) : lseAll;
      for (let v = 0; v < V; v++) acc[b * V + v] = f32(f32(row[v] - lse) + runScores[b]);
    }
    // the best 2B of B × V (ties: the lower index first)
    const K = 2 * B, top = [];
    for (let i = 0; i < acc.length; i++) {
      const x = acc[i];
      if (top.length === K && !(x > top[K - 1][0])) continue;
      let j = top.length === K ? K - 1 : top.length;
      while (j > 0 && top[j - 1][0] < x) j--;
      top.splice(j, 0, [x, i]);
      if (top.length > K) top.pop();
    }
    const cand = top.map(([, i]) => [...running[Math.floor(i / V)], i % V]);
    const src = top.map(([, i]) => Math.floor(i / V));
    const hits = cand.map((c) => c[cur] === eos || cur + 1 >= L);
    const runLp = top.map(([x], i) => f32(x + (hits[i] ? -1e9 : 0)));
    const nxt = [...runLp.keys()].sort((a, b) => runLp[b] - runLp[a] || a - b).slice(0, B);
    running = nxt.map((i) => cand[i]);
    runScores = nxt.map((i) => runLp[i]);
    // the past for the next step: the decoder's own keys and values follow the surviving beams
    const order = nxt.map((i) => src[i]);
    past = {};
    for (const [name, t] of Object.entries(out)) {
      if (!name.startsWith('present.')) continue;
      const key = name.replace('present', 'past_key_values');
      if (name.includes('.encoder.') || order.every((o, b) => o === b)) { past[key] = t; continue; }
      const row = t.data.length / B, data = new Float32Array(t.data.length);
      order.forEach((o, b) => data.set(t.data.subarray(o * row, (o + 1) * row), b * row));
      past[key] = ortT('float32', data, t.dims);
    }
    const allDone = fin.every((x) => x.done);
    const fresh = top.map(([x], i) => {
      let sc = f32(x / cur ** lp);
      if (allDone && es === true) sc -= 1e9;
      if (!unsatisfied) sc -= 1e9;
      const just = hits[i] && i < B;
      return { seq: cand[i], score: f32(sc + (just ? 0 : -1e9)), done: just };
    });
    fin = [...fin, ...fresh].map((x, i) => [x, i]).sort((a, b) => b[0].score - a[0].score || a[1] - b[1]).slice(0, B).map(([x]) => x);
    const length = es === 'never' && lp > 0 ? L - 1 : cur;
    const bestRunning = runScores[0] / length ** lp, lowest = Math.min(...fin.map((x) => x.score));
    unsatisfied &&= fin.some((x) => bestRunning > (x.done ? lowest : -1e9));
    if (!(unsatisfied && !(fin.every((x) => x.done) && es === true) && !hits.every(Boolean))) break;
  }
  let best = fin[0].seq;
  const e = best.indexOf(eos, 1);
  if (e > 0) best = best.slice(0, e + 1);
  return { ids: best, text: tr.tokenizer.decode(best, { skip_special_tokens: true }) };
}

// The translation rows: the two engines' token ids, greedy and beam, against each other and against the PyTorch
// reference (make_marian.py's bench-reference.json, f32). f32 row: a ratio is given only where the engines' ids are
// identical. 8-bit row (quantized): two different 8-bit roundings of the weights (wasmformer's Q8_0 blocks; int8
// matrices with activations quantized at run time on the peer's side), so the ids may part; what is reported is how
// far each answer follows the other's and PyTorch's f32 answer (the ratio stands: both sides generate
// max_new_tokens tokens every run, whichever they are).
export function translationAgreement(w, a, b, bCheck, quantized = false) {
  const eq = (x, y) => JSON.stringify(x) === JSON.stringify(y);
  const part = (x, y) => { let k = 0; while (k < x.length && x[k] === y[k]) k++; return k; };
  const say = (what, x, y, ref) => (eq(x, y) ? `${what} ids identical (${x.length - 1} generated)${eq(x, ref) ? ', = PyTorch\'s' : ', NOT PyTorch\'s'}`
    : `${what} ids DIFFER after ${part(x, y) - 1} of ${x.length - 1} tokens`);
  // 8-bit: identical for the first k generated tokens (after the start token), and each against PyTorch's f32 answer
  const follows = (x, ref) => (eq(x, ref) ? `all ${x.length - 1}` : `${part(x, ref) - 1}`);
  const sayQ = (what, x, y, ref) => `${what}: ${eq(x, y) ? `ids identical (${x.length - 1} generated)` : `ids DIFFER after ${part(x, y) - 1} of ${x.length - 1} tokens`}` +
    ` (same as PyTorch's f32 answer for the first: A ${follows(x, ref)}, B ${follows(y, ref)})`;
  const greedy_ok = eq(a.output.greedy, bCheck.greedy), beam_ok = eq(a.output.beam, b.output.beam);
  const texts = a.output.greedy_text === b.output.greedy_text && a.output.beam_text === b.output.beam_text ? 'texts identical' : 'texts DIFFER';
  const own = eq(bCheck.own_beams, bCheck.greedy) ? `transformers.js's own generate(num_beams ${w.beams}) returned its greedy ids (it has no beam search)`
    : `transformers.js's own generate(num_beams ${w.beams}) did NOT return its greedy ids`;
  if (quantized)
    return { ok: greedy_ok && beam_ok, greedy_ok, beam_ok, quantized: true,
             text: `${sayQ('greedy', a.output.greedy, bCheck.greedy, w.expected.greedy)}; ${sayQ(`${w.beams}-beam best`, a.output.beam, b.output.beam, w.expected.beam)}; ${texts}; ${own}` };
  return { ok: greedy_ok && beam_ok, greedy_ok, beam_ok,
           text: `${say('greedy', a.output.greedy, bCheck.greedy, w.expected.greedy)}; ${say(`${w.beams}-beam best`, a.output.beam, b.output.beam, w.expected.beam)}; ${texts}; ${own}` };
}

// The wasm memory of the workers an engine started while it loaded (ctx.memProbes: the bench's probe in them,
// memprobe-install.mjs): { bytes (their WebAssembly.Memory byteLengths summed), memories, shared, workers (the
// workers those workers started: the engine's pthreads) }, or null where no probe answered (within 5 s).
const probesSince = (ctx, n0) => (ctx.memProbes ?? []).slice(n0);
async function memoryOf(probes) {
  if (!probes.length) return null;
  const rs = (await Promise.all(probes.map((p) => Promise.race([p.ask(), new Promise((ok) => setTimeout(() => ok(null), 5000))])))).filter(Boolean);
  if (!rs.length) return null;
  return { bytes: rs.reduce((s, r) => s + r.bytes, 0), memories: rs.reduce((s, r) => s + r.memories, 0), shared: rs.some((r) => r.shared),
           workers: rs.reduce((s, r) => s + r.workers, 0), probes: rs.length };
}

// A load row's side: each run times open() (a load, resolving to the function that releases what it loaded), then
// releases it untimed; nothing stays loaded between runs.
function timedLoads(info, open) {
  return {
    info,
    async run() {
      const t0 = now();
      const release = await open();
      const ms = now() - t0;
      await release();
      return { ms };
    },
    dispose() {},
  };
}

// ------------------------------------------------------------------------------------------------------ engines
// Each loads its model and returns { info, run() → sample, dispose() }; spec = the engine's side of the row, w = the
// row's workload (text, ids, …).
const engines = {
  async wasmformer(spec, w, ctx) {
    const { FillMask, pipeline } = ctx.wasmformer;
    // cache: false — browsers would keep every model in the Cache API, writing gigabytes to disk beside the timings
    const opts = { threads: spec.threads ?? 1, cache: false, ...(spec.dtype ? { dtype: spec.dtype } : {}), ...(spec.relaxedSimd !== undefined ? { relaxedSimd: spec.relaxedSimd } : {}) };
    const source = ctx.source(spec.model);
    const info = {};
    const seen = (timings) => Object.assign(info, { threads: timings.threads, threading: timings.simd ? `${timings.threading}; ${timings.simd === 'relaxed' ? 'relaxed SIMD' : 'SIMD128'}` : timings.threading });
    if (w.task === 'load') {  // each run: the files to a model that runs (the tokenizer built, the weights converted), disposed
      Object.assign(info, { threads: opts.threads, threading: `Model.load, ${opts.threads} thread${opts.threads === 1 ? '' : 's'}` });
      return timedLoads(info, async () => {
        const m = await ctx.wasmformer.Model.load(source, opts);
        info.dtype = m.info.dtype;
        return () => m.dispose();
      });
    }
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
    if (w.task === 'translate') {
      const { Model } = ctx.wasmformer;
      const m = await Model.load(source, opts);
      info.dtype = m.info.dtype;
      // its own tokenizer must give the source ids the peer's does (both are checked against the reference's)
      const ids = await m.tokenizer.encode(w.text);
      if (JSON.stringify(ids) !== JSON.stringify(w.ids)) throw new Error(`wasmformer's tokenizer gives ${ids.length} other ids than the reference's ${w.ids.length}`);
      info.input = `${ids.length} source ids`;
      seen(await m.engineInfo());
      const one = async (num_beams) => {
        const t0 = now();
        const [hyps] = await m.translate(w.text, { num_beams, ...w.options });
        const ms = now() - t0;
        const out = [w.start, ...hyps[0].token_ids];
        if (out.length !== 1 + w.options.max_new_tokens) throw new Error(`wasmformer generated ${out.length - 1} tokens with ${num_beams} beams, not ${w.options.max_new_tokens}`);
        return { ms, ids: out, text: hyps[0].translation_text };
      };
      return {
        info,
        async run() {
          const g = await one(1), b = await one(w.beams);
          info.output = { greedy: g.ids, beam: b.ids, greedy_text: g.text, beam_text: b.text };
          seen(await m.engineInfo());
          return { greedy_ms: g.ms, beam_ms: b.ms };
        },
        dispose: () => m.dispose(),
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
    // spec.memory: a fresh worker (the package keeps one per set of engine options across rows, and a wasm memory
    // never shrinks), so that its memory is this model's alone; the probe in it says how large it is
    if (spec.memory) ctx.wasmformer.terminate();
    const n0 = ctx.memProbes?.length ?? 0;
    const gen = await pipeline('text-generation', source, opts);
    const probes = spec.memory ? probesSince(ctx, n0).filter((p) => p.kind === 'wasmformer') : [];
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
        const r = await gen.model.complete(w.prompt, { max_new_tokens: 1 + steps, do_sample: false, stop_at_eos: false, output_scores: true });
        return { ids: r.tokens.map((x) => x.id), logprobs: r.tokens.map((x) => x.logprob) };
      },
      memory: () => memoryOf(probes),
      dispose: () => gen.dispose(),
    };
  },

  async ort(spec, w, ctx) {
    const { ort } = ctx;
    const create = async () => ort.InferenceSession.create(await ctx.bytes(spec.model), { executionProviders: ['wasm'], graphOptimizationLevel: 'all' });
    if (w.task === 'load') {  // each run: the .onnx bytes read (fetched) and a session created, then released
      const info = { threads: ctx.ortThreads, threading: `InferenceSession.create, onnxruntime-web numThreads ${ctx.ortThreads}` };
      return timedLoads(info, async () => {
        const session = await create();
        return () => session.release();
      });
    }
    const session = await create();
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

  // transformers.js (@huggingface/transformers) on onnxruntime-web, the translation row: its pipeline('translation')
  // on the ONNX folder (encoder_model.onnx + decoder_model_merged.onnx, as Optimum exports Marian), text in, text out.
  // Greedy: the pipeline with num_beams 1 and the row's options. Beam search: transformers.js 4.3.1 has none — its
  // generate() accepts num_beams but keeps the first candidate of each step (generation loop: "TODO: Support beam
  // search"), so num_beams 4 returns the greedy answer at greedy's cost (check() shows it every run); the beam side
  // is therefore Hugging Face's beam search written here (beamSearch below) on the pipeline's own tokenizer and
  // onnxruntime-web sessions, the num_beams hypotheses as one batch with the decoder's past fed back (reordered to
  // each step's surviving beams) — what transformers.js would run if it had beam search.
  // spec.dtype: transformers.js's dtype ('fp32' unless given; 'q8': onnx/*_quantized.onnx), the files it asked for
  // (its progress events) named in the report.
  async tjs(spec, w, ctx) {
    const { transformers } = ctx;
    const dtype = spec.dtype ?? ctx.tjsModelOptions.dtype, files = [];
    const tr = await transformers.pipeline('translation', ctx.tjsSource(spec.model), { ...ctx.tjsModelOptions, dtype,
      progress_callback: (e) => { if (e.status === 'initiate' && e.file.endsWith('.onnx')) files.push(e.file); } });
    const ids = Array.from(tr.tokenizer(w.text).input_ids.data, Number);
    if (JSON.stringify(ids) !== JSON.stringify(w.ids)) throw new Error(`transformers.js's tokenizer gives other ids (${ids.length}) than the reference's (${w.ids.length})`);
    const info = { threads: ctx.ortThreads, input: `${ids.length} source ids`, files,
                   threading: `transformers.js ${ctx.tjsVersions['@huggingface/transformers']} (dtype ${dtype}: ${files.sort().join(', ')}) on onnxruntime-web ${ctx.tjsVersions['onnxruntime-web']} (wasm), numThreads ${ctx.ortThreads}` };
    const ortT = (type, data, dims) => new transformers.Tensor(type, data, dims).ort_tensor;
    const T64 = (xs) => new transformers.Tensor('int64', BigInt64Array.from(xs, BigInt), [1, xs.length]);
    const generate = async (num_beams) => Array.from((await tr.model.generate({ input_ids: T64(w.ids), attention_mask: T64(w.ids.map(() => 1)),
      num_beams, do_sample: false, ...w.options })).data, Number);
    return {
      info,
      async run() {
        const t0 = now();
        const [g] = await tr(w.text, { num_beams: 1, ...w.options });
        const t1 = now();
        const b = await beamSearch(tr, ortT, w.text, { num_beams: w.beams, ...w.options });
        const t2 = now();
        if (b.ids.length !== 1 + w.options.max_new_tokens) throw new Error(`the beam search generated ${b.ids.length - 1} tokens, not ${w.options.max_new_tokens}`);
        info.output = { greedy_text: g.translation_text, beam: b.ids, beam_text: b.text };
        return { greedy_ms: t1 - t0, beam_ms: t2 - t1 };
      },
      // untimed: the pipeline's greedy ids (the same generate() call it makes), and what transformers.js's own
      // generate() returns for num_beams 4
      async check() {
        return { greedy: await generate(1), own_beams: await generate(w.beams) };
      },
      dispose: () => tr.dispose(),
    };
  },

  // wllama's completion takes text; its own tokenizer must find the same number of tokens (checked on every run)
  async wllama(spec, w, ctx) {
    // n_threads: wllama 3.8.1 has one wasm build (shared memory, pthreads); with n_threads > 1 it starts that many
    // threads when the page can share memory (its isSupportMultiThread: SharedArrayBuffer can be posted and a
    // shared-memory module validates: a cross-origin isolated page), else it runs on one (isMultithread() false)
    const n0 = ctx.memProbes?.length ?? 0;
    const wl = new ctx.Wllama(ctx.wllamaAssets, { suppressNativeLog: true, allowOffline: true });
    wl.setCompat(null);  // its own build only (no "compat" build fetched from a CDN)
    await wl.loadModel([await ctx.blob(spec.model)], { n_threads: spec.threads ?? 1, n_ctx: 512, n_batch: 512, n_ubatch: 512, n_gpu_layers: 0, warmup: true });
    const probes = spec.memory ? probesSince(ctx, n0) : [];
    const info = { threads: wl.getNumThreads(), threading: `wllama ${wl.isMultithread() ? 'multi-thread' : 'single-thread'}, n_threads ${wl.getNumThreads()} (asked ${spec.threads ?? 1})` };
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
      memory: () => memoryOf(probes),
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
  // rows against wllama: each engine's wasm memory after load and after the timed runs (its peak through them)
  const memRow = row.b.engine === 'wllama';
  const memory = { a: {}, b: {} };
  try {
    for (const key of ['b', 'a']) {
      try {
        loaded[key] = await engines[row[key].engine](memRow ? { ...row[key], memory: true } : row[key], row.workload, ctx);
      } catch (e) {
        if (row[key].optional) return { unavailable: `not available in this build (${e?.message ?? e})` };
        const why = `${row[key].engine} did not load ${row[key].model}: ${e?.message ?? e}`;
        if (key !== 'b' || !row.solo) throw new Error(why);
        peerError = why;
      }
    }
    const memories = async (when) => {
      for (const key of ['a', 'b']) if (loaded[key]?.memory) memory[key][when] = await loaded[key].memory();
    };
    if (memRow) await memories('load');
    const samples = { a: [], b: [] };
    for (let r = 0; r < warmup + runs; r++)
      for (const key of ['a', 'b'].filter((k) => loaded[k])) {
        const s = await loaded[key].run();
        if (r >= warmup) samples[key].push(s);
        log(`${row.id} ${key.toUpperCase()} ${r < warmup ? 'warm-up' : `run ${r - warmup + 1}`}: ${JSON.stringify(s, (k, v) => (typeof v === 'number' ? +v.toFixed(1) : v))}`);
      }
    if (memRow) await memories('run');
    const mem = memRow ? { memory } : {};
    if (peerError) return { a: { samples: samples.a, info: loaded.a.info }, b: null, peer_error: peerError, ...mem };
    const res = { a: { samples: samples.a, info: loaded.a.info }, b: { samples: samples.b, info: loaded.b.info }, ...mem };
    if (row.workload.task === 'generate' && loaded.a.check && loaded.b.check) {
      const ca = await loaded.a.check();
      const cb = await loaded.b.check(ca);
      res.agreement = generationAgreement(ca, cb, row.agree ?? 0.05);
      res.agreement.input = `${row.workload.ids.length} prompt tokens each`;
      res.check = { a: ca, b: cb };
    }
    if (row.workload.task === 'translate') {
      const cb = await loaded.b.check();
      res.agreement = translationAgreement(row.workload, loaded.a.info, loaded.b.info, cb, !!row.quantized);
      res.agreement.input = loaded.a.info.input === loaded.b.info.input ? `source ids identical (${loaded.a.info.input})` : `source DIFFERENT: A ${loaded.a.info.input}, B ${loaded.b.info.input}`;
      res.check = { b: cb };
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
