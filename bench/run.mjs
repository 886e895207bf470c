// `npm run bench` (scripts/bench.sh): wasmformer beside its peers — onnxruntime-web, wllama and (translation) transformers.js — on the same model
// shapes, the same tokens and the same machine, in one run, in Node 20 and in headless Chromium. Each row loads both
// engines, warms them up, then times them alternately (A B A B …); the table gives medians, the ratio (how many
// times faster wasmformer is) and each result's share of the machine's ceiling, measured in this run by a small
// wasm probe. Results: bench/results/<time>.json and .md. A ratio is printed only from timings of this run; an
// earlier run's ratios may follow, labelled as history.
//
//   scripts/bench.sh [--quick] [--env node|chromium] [--rows id,id,…]   (it makes the models, then runs this)
// --quick: 1 warm-up, 2 timed runs, 16 decode steps — for working on the harness, not for quoting.
// --rows: these rows only (ids without the env: bert-f32,llama-q8_0); rows marked opt-in run only when named there.
import { execFileSync } from 'node:child_process';
import { createReadStream, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { syncBuiltinESMExports } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import workerThreads from 'node:worker_threads';

import { median, runRow } from './peers/measure.mjs';
import { ceilings } from './peers/probe.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const MODELS = path.join(root, 'build/bench-models');
const RESULTS = path.join(root, 'bench/results');
const args = process.argv.slice(2);
const opt = (name) => (args.includes(name) ? args[args.indexOf(name) + 1] : null);
const quick = args.includes('--quick');
const envs = opt('--env') ? [opt('--env')] : ['node', 'chromium'];
const only = opt('--rows')?.split(',');
const reps = quick ? { warmup: 1, runs: 2 } : { warmup: 2, runs: 5 };
const PROMPT = 128, DECODE = quick ? 16 : 64;

// ------------------------------------------------------------------------------------------- the same tokens
// scripts/bench.sh makes the models when one of its list is missing; the encoder rows' models came later: made here
// (the same script: it makes only what is missing) when a folder made before them lacks them
// (and the Llama-style decoders' after them)
const encoderModels = ['minilm-st/model.safetensors', 'distilbert-cls/model.safetensors', 'distilbert-qa/model.safetensors',
  'onnx/minilm-fp32.onnx', 'onnx/minilm-int8.onnx', 'onnx/distilbert-cls-fp32.onnx', 'onnx/distilbert-qa-fp32.onnx',
  'llama-smollm2/config.json', 'qwen2-0.5b/config.json', 'gguf/llama-f32.gguf', 'gguf/llama-q8_0.gguf', 'gguf/llama-q4_0.gguf',
  'gguf/llama-q4_k_m.gguf', 'gguf/qwen2-q8_0.gguf', 'gguf/bert-q8_0.gguf'];
if (encoderModels.some((f) => !existsSync(path.join(MODELS, f)))) {
  console.log(`bench: making the encoder and decoder models in ${path.relative(root, MODELS)}`);
  execFileSync('/usr/bin/python3', [path.join(root, 'bench/peers/make_models.py'), MODELS], { stdio: 'inherit' });
}
// The translation rows (translate-marian, and translate-marian-q8 on 8-bit weights): their models
// (bench/peers/make_marian.py: a random MarianMTModel with opus-mt-en-de's shape as a Hugging Face folder and as the
// ONNX folder transformers.js loads, with the 8-bit files of its dtype 'q8'; then bench/peers/check_marian_onnx.mjs
// compares the ONNX graphs with PyTorch, once — the fp32 ones, and with --q8 the 8-bit ones — and keeps its reports
// beside them) and their peer, transformers.js (bench/peers/transformers-js, installed here when missing). A failure
// there fails those rows only (the 8-bit files' own, translate-marian-q8 only).
const TRANSLATE = 'translate-marian', TRANSLATE_Q8 = 'translate-marian-q8';
const wants = (id) => !only || only.some((o) => o === id || o.endsWith(':' + id));
const wantsTranslate = wants(TRANSLATE) || wants(TRANSLATE_Q8), wantsTranslateQ8 = wants(TRANSLATE_Q8);
let translateSetupError = null, translateQ8SetupError = null;
const checkOnnx = (file, args) => {  // check_marian_onnx.mjs once; its report kept as `file`
  const checked = path.join(MODELS, 'marian-en-de-onnx', file);
  if (existsSync(checked)) return;
  console.log(`bench: checking the Marian ONNX graphs${args.length ? ' (' + args.join(' ') + ')' : ''} against PyTorch (bench/peers/check_marian_onnx.mjs)`);
  let report;
  try {
    report = execFileSync(process.execPath, [path.join(root, 'bench/peers/check_marian_onnx.mjs'), MODELS, ...args], { encoding: 'utf8' });
  } catch (e) {
    throw new Error(`the ONNX check failed:\n${e.stdout ?? ''}${e.stderr ?? ''}`);
  }
  process.stdout.write(report.replace(/^/gm, '  '));
  writeFileSync(checked, report);
};
if (wantsTranslate) {
  const { transformersJsInstalled, TRANSFORMERS_JS_DIR } = await import('./peers/transformers-js.mjs');
  try {
    const needed = ['marian-en-de/bench-reference.json', 'marian-en-de-onnx/onnx/decoder_model_merged.onnx',
      ...(wantsTranslateQ8 ? ['marian-en-de-onnx/onnx/encoder_model_quantized.onnx', 'marian-en-de-onnx/onnx/decoder_model_merged_quantized.onnx'] : [])];
    if (needed.some((f) => !existsSync(path.join(MODELS, f)))) {
      console.log(`bench: making the Marian models in ${path.relative(root, MODELS)}`);
      execFileSync('/usr/bin/python3', [path.join(root, 'bench/peers/make_marian.py'), MODELS], { stdio: 'inherit', env: { ...process.env, OMP_NUM_THREADS: '1' } });
    }
    if (!transformersJsInstalled()) {
      console.log(`bench: installing transformers.js in ${path.relative(root, TRANSFORMERS_JS_DIR)} (npm ci --ignore-scripts)`);
      execFileSync('npm', ['ci', '--ignore-scripts', '--no-audit', '--no-fund'], { cwd: TRANSFORMERS_JS_DIR, stdio: 'inherit' });
    }
    checkOnnx('onnx-check.txt', []);
  } catch (e) {
    translateSetupError = String(e?.message ?? e);
    console.log(`bench: ${TRANSLATE}${wantsTranslateQ8 ? ' and ' + TRANSLATE_Q8 : ''} cannot run: ${translateSetupError}`);
  }
  if (wantsTranslateQ8 && !translateSetupError) {
    try {
      checkOnnx('onnx-check-q8.txt', ['--q8']);
    } catch (e) {
      translateQ8SetupError = String(e?.message ?? e);
      console.log(`bench: ${TRANSLATE_Q8} cannot run: ${translateQ8SetupError}`);
    }
  }
}
const wf = await import('wasmformer');
const config = (m) => JSON.parse(readFileSync(path.join(MODELS, m, 'config.json'), 'utf8'));
const bertCfg = config('bert-base'), gptCfg = config('gpt2-base');
const miniCfg = config('minilm-st'), clsCfg = config('distilbert-cls'), qaCfg = config('distilbert-qa');
// the Llama-style decoders (random weights, GPT-2's vocabulary: make_models.py), run from their GGUF files
const llamaCfg = config('llama-smollm2'), qwen2Cfg = config('qwen2-0.5b');
// the encoder rows' workloads: feature-extraction of EMBED_BATCH texts of EMBED_TOKENS tokens each (with [CLS] and
// [SEP]), text-classification of one text of CLS_TOKENS, question-answering of a question and a context that fill
// one window of QA_TOKENS
const EMBED_BATCH = 32, EMBED_TOKENS = 64, CLS_TOKENS = 32, QA_TOKENS = 384, QA_QUESTION_WORDS = 10;

async function workloads() {
  // BERT: 125 whole words of the vocabulary and one [MASK] → [CLS] … [SEP] = 128 tokens
  const words = readFileSync(path.join(MODELS, 'bert-base/vocab.txt'), 'utf8').split('\n').filter((w) => /^[a-z]{4,}$/.test(w));
  const pick = (list, n, step) => Array.from({ length: n }, (_, i) => list[(i * step) % list.length]);
  const bw = pick(words, PROMPT - 3, 37);
  const text = [...bw.slice(0, 62), '[MASK]', ...bw.slice(62)].join(' ');
  const bt = await wf.Tokenizer.load(path.join(MODELS, 'bert-base'));
  const ids = await bt.encode(text);
  const maskId = (await bt.encode('[MASK]', { add_special_tokens: false }))[0];
  if (ids.length !== PROMPT || ids.filter((i) => i === maskId).length !== 1) throw new Error(`the BERT text is ${ids.length} tokens, not ${PROMPT} with one mask`);
  // GPT-2: 128 words that are one token each (" word")
  const vocab = Object.keys(JSON.parse(readFileSync(path.join(MODELS, 'gpt2-base/vocab.json'), 'utf8'))).filter((t) => /^\u0120[a-z]{4,}$/.test(t));
  const prompt = pick(vocab, PROMPT, 41).map((t) => ' ' + t.slice(1)).join('');
  const gt = await wf.Tokenizer.load(path.join(MODELS, 'gpt2-base'));
  const gids = await gt.encode(prompt);
  if (gids.length !== PROMPT) throw new Error(`the GPT-2 prompt is ${gids.length} tokens, not ${PROMPT}`);
  // Encoders: whole words of bert-base-uncased's vocabulary (one token each), a period ending each text, so that
  // every text has exactly the tokens asked for; checked with wasmformer's tokenizer, whose ids the peer is fed.
  const seq = (n, from, step) => Array.from({ length: n }, (_, i) => words[((from + i) * step) % words.length]);
  const texts = Array.from({ length: EMBED_BATCH }, (_, b) => seq(EMBED_TOKENS - 3, b * (EMBED_TOKENS - 3), 7919).join(' ') + '.');
  const embedIds = await Promise.all(texts.map((t) => bt.encode(t)));
  if (embedIds.some((x) => x.length !== EMBED_TOKENS)) throw new Error(`the feature-extraction texts are ${embedIds.map((x) => x.length)} tokens, not ${EMBED_TOKENS}`);
  const clsText = seq(CLS_TOKENS - 3, 5000, 104729).join(' ') + '.';
  const clsIds = await bt.encode(clsText);
  if (clsIds.length !== CLS_TOKENS) throw new Error(`the classification text is ${clsIds.length} tokens, not ${CLS_TOKENS}`);
  // [CLS] question [SEP] context [SEP]: the context's words map one to one to its tokens (the peer's answer span)
  const question = seq(QA_QUESTION_WORDS, 9000, 31).join(' ') + '?';
  const qaWords = seq(QA_TOKENS - QA_QUESTION_WORDS - 4, 12000, 613);
  const context = qaWords.join(' ');
  const wordStarts = qaWords.reduce((acc, x, i) => (acc.push(i ? acc[i - 1] + qaWords[i - 1].length + 1 : 0), acc), []);
  const qIds = await bt.encode(question), cIds = await bt.encode(context, { add_special_tokens: false });
  const qaIds = [...qIds, ...cIds, qIds[qIds.length - 1]];
  if (qaIds.length !== QA_TOKENS || cIds.length !== qaWords.length)
    throw new Error(`the question-answering input is ${qaIds.length} tokens (context ${cIds.length} for ${qaWords.length} words), not ${QA_TOKENS}`);
  await bt.dispose();
  await gt.dispose();
  // Translation: make_marian.py's source sentence (32 ids with </s>) and PyTorch's answers; </s> banned so that both
  // engines generate max_new_tokens, the last one the forced EOS of generation_config.json
  const mref = path.join(MODELS, 'marian-en-de/bench-reference.json');
  const translate = existsSync(mref) ? (() => {
    const r = JSON.parse(readFileSync(mref, 'utf8'));
    return { task: 'translate', text: r.source_text, ids: r.source_ids, options: r.options, beams: r.num_beams, start: r.greedy[0],
             expected: { greedy: r.greedy, beam: r.beam } };
  })() : null;
  const gpt = { prompt, ids: gids, decode: DECODE, n_head: gptCfg.n_head, n_embd: gptCfg.n_embd };
  return { fill: { task: 'fill', text, ids, mask: ids.indexOf(maskId) }, generate: { task: 'generate', ...gpt }, prefill: { task: 'prefill', ...gpt },
    embed: { task: 'embed', texts, ids: embedIds }, load: { task: 'load' },
    classify: { task: 'classify', text: clsText, ids: [clsIds], labels: Object.values(clsCfg.id2label) },
    qa: { task: 'qa', question, context, ids: [qaIds], ctxStart: qIds.length, words: qaWords, wordStarts },
    translate };
}

// ------------------------------------------------------------------------------------------------- the rows
// a: wasmformer; b: the peer (or wasmformer on one thread). bpw: bytes per matrix weight that decode reads.
// --relaxed-simd false: the plain SIMD128 build where the relaxed one would load (true: require it); the rows' "how each
// engine ran" lines say which ran
const relaxedSimd = opt('--relaxed-simd');
if (relaxedSimd && !['true', 'false'].includes(relaxedSimd)) throw new Error(`--relaxed-simd ${relaxedSimd}: true or false`);
const WF = (model, dtype, extra = {}) => ({ engine: 'wasmformer', model, dtype, ...(relaxedSimd ? { relaxedSimd: relaxedSimd === 'true' } : {}), ...extra });
const ORT = (model, bpw) => ({ engine: 'ort', model, bpw });
const WLLAMA = (model, bpw, extra = {}) => ({ engine: 'wllama', model, bpw, ...extra });
// A side whose matrix products run on integers: 8- and 4-bit types (q8_0, q4_0, q4_k, …; int8 ONNX graphs).
const integerProducts = (spec) => /(^|[-_/ ])(q[2-8]|int8)/i.test(`${spec.dtype ?? ''} ${spec.model}`);
// GGUF generation rows: greedy tokens and their log-probabilities compared (measure.mjs, generationAgreement) within
// this many nats, by the file's type. f32: the engines differ by llama.cpp's f16 KV cache and summation order only.
// q8_0/q4_0: both round the activations to Q8_0 blocks, each its own way (llama.cpp's block scales are f16); on the
// 30-layer random decoder a numpy pass moves the first token's log-probability by 0.1 nats between such variants
// (f16 or f32 scales), as much as Q8_0-rounding every weight does: the two engines may part by a few tenths.
// q4_k_m: Q4_K/Q6_K against Q8_K activations and Q5_0/Q8_0 against Q8_0 ones, on both sides: as q4_0.
const GEN_AGREE = { f32: 0.05, q8_0: 0.3, q4_0: 0.3, q4_k_m: 0.3 };
// Bytes per weight of the matrices a decode step reads in llama-q4_k_m.gguf and qwen2-q4_k_m.gguf (make_models.py's
// q4_k_m_types: llama.cpp's Q4_K_M rules for a model 576 or 896 wide, neither a multiple of 256): the tied embeddings Q8_0 (34/32); Q, K, O, gate, up Q5_0 (22/32: 576 columns are
// not whole 256-weight super-blocks, so Q4_K falls back to Q5_0); V Q8_0 in the layers where use_more_bits holds, else
// Q5_0; ffn_down Q6_K (210/256) there, else Q4_K (144/256).
function q4kmBpw(c) {
  const L = c.num_hidden_layers, E = c.hidden_size, F = c.intermediate_size, V = c.vocab_size;
  const D = c.head_dim ?? E / c.num_attention_heads, Q = c.num_attention_heads * D, KV = c.num_key_value_heads * D;
  const more = (i) => i < Math.floor(L / 8) || i >= Math.floor((7 * L) / 8) || (i - Math.floor(L / 8)) % 3 === 2;
  let bytes = E * V * 34 / 32, n = E * V;
  for (let i = 0; i < L; i++) {
    bytes += (E * (Q + KV) + Q * E + 2 * E * F) * 22 / 32 + E * KV * (more(i) ? 34 / 32 : 22 / 32) + F * E * (more(i) ? 210 / 256 : 144 / 256);
    n += E * (Q + 2 * KV) + Q * E + 3 * E * F;
  }
  return bytes / n;
}
function rows(w) {
  const list = [];
  for (const env of ['node', 'chromium']) {
    // extra: { work } (the row's model, when not BERT-base/GPT-2 small), { optIn } (only when --rows names it),
    // { solo } (when the peer does not load in this environment, wasmformer is timed alone: no ratio)
    const add = (id, title, workload, a, b, agree, extra = {}) => list.push({ id: `${env}:${id}`, env, title, workload: w[workload], a, b, agree, ...extra });
    add('bert-f32', 'BERT-base fill-mask, 128 tokens: f32 vs onnxruntime-web fp32', 'fill', WF('bert-base', 'f32', { bpw: 4 }), ORT('onnx/bert-fp32.onnx', 4));
    add('bert-q8', 'BERT-base fill-mask, 128 tokens: q8_0 vs onnxruntime-web int8', 'fill', WF('bert-base', 'q8_0', { bpw: 34 / 32 }), ORT('onnx/bert-int8.onnx', 1));
    add('gpt2-f32', 'GPT-2 small, 128-token prompt + greedy decode: f32 vs onnxruntime-web fp32', 'generate', WF('gpt2-base', 'f32', { bpw: 4, screen: 34 / 32 }), ORT('onnx/gpt2-fp32.onnx', 4));
    add('gpt2-q8', 'GPT-2 small, 128-token prompt + greedy decode: q8_0 vs onnxruntime-web int8', 'generate', WF('gpt2-base', 'q8_0', { bpw: 34 / 32 }), ORT('onnx/gpt2-int8.onnx', 1));
    // 4-bit: the f32 checkpoint converted at load (dtype 'q4_0' / 'q4_k'; the tied embeddings / output layer at q8_0),
    // its bytes per weight those it holds (model.info.weight_bytes)
    add('gpt2-q4', 'GPT-2 small, 128-token prompt + greedy decode: q4_0 vs onnxruntime-web int8', 'generate', WF('gpt2-base', 'q4_0', { bpw: 18 / 32, bpwHeld: true }), ORT('onnx/gpt2-int8.onnx', 1));
    add('gpt2-q4k', 'GPT-2 small, 128-token prompt + greedy decode: q4_k vs onnxruntime-web int8', 'generate', WF('gpt2-base', 'q4_k', { bpw: 144 / 256, bpwHeld: true }), ORT('onnx/gpt2-int8.onnx', 1));
    for (const [t, bpw] of [['f32', 4], ['q8_0', 34 / 32], ['q4_0', 18 / 32]])
      add(`gguf-${t}`, `GPT-2 small GGUF ${t}, 128-token prompt + greedy decode: wasmformer vs wllama (same file)`, 'generate',
        // wasmformer computes every file's matrices as stored (q4_0 by its integer GEMV below 16 rows)
        WF(`gguf/gpt2-${t}.gguf`, undefined, { bpw, bpwHeld: true, ...(t === 'f32' && { screen: 34 / 32 }) }), WLLAMA(`gguf/gpt2-${t}.gguf`, bpw), GEN_AGREE[t]);
    // Llama-style decoders from GGUF, the same file on both sides: SmolLM2-135M's shape as llama.cpp's "llama"
    // architecture (grouped-query attention, SwiGLU, RMSNorm, RoPE on adjacent pairs after the converter's Q/K
    // permutation) and Qwen2.5-0.5B's as "qwen2" (Q/K/V biases, NeoX RoPE); both tied, GPT-2's 50257-token vocabulary
    // wasmformer's decode bytes: the file's bytes per weight where it computes from the file's bytes as they are, else
    // what it holds (its converted copies) — bpwHeld, from model.info
    // q4_k_m: llama.cpp's Q4_K_M mix of the same model (make_models.py's q4_k_m_types: the rule it follows), each
    // tensor in its own type on both sides
    for (const [t, bpw] of [['q8_0', 34 / 32], ['q4_0', 18 / 32], ['q4_k_m', q4kmBpw(llamaCfg)], ['f32', 4]])
      add(`llama-${t}`, `SmolLM2-135M shape (llama, GPT-2's vocabulary) GGUF ${t}, 128-token prompt + greedy decode: wasmformer vs wllama (same file)`, 'generate',
        WF(`gguf/llama-${t}.gguf`, undefined, { bpw, bpwHeld: true, ...(t === 'f32' && { screen: 34 / 32 }) }), WLLAMA(`gguf/llama-${t}.gguf`, bpw), GEN_AGREE[t], { work: work.llama, solo: true });
    // 2 threads on both sides: wasmformer { threads: 2 }, wllama n_threads 2 (its pthreads; the probe counts the
    // workers each engine's worker started, and the row's own CPU use is given under the table). llama-q4_k_m-2t is opt-in.
    for (const [t, bpw, optIn] of [['q8_0', 34 / 32, false], ['q4_k_m', q4kmBpw(llamaCfg), true]])
      add(`llama-${t}-2t`, `SmolLM2-135M shape (llama, GPT-2's vocabulary) GGUF ${t}, 128-token prompt + greedy decode, 2 threads each: wasmformer vs wllama (same file)`, 'generate',
        WF(`gguf/llama-${t}.gguf`, undefined, { threads: 2, bpw, bpwHeld: true }), WLLAMA(`gguf/llama-${t}.gguf`, bpw, { threads: 2 }), GEN_AGREE[t],
        { work: work.llama, solo: true, optIn });
    // opt-in (--rows qwen2-q8_0,qwen2-q4_0,qwen2-q4_k_m): about 7 minutes each in Chromium, where wllama takes some
    // 40 s a run (wllama does not run in Node)
    for (const [t, bpw] of [['q8_0', 34 / 32], ['q4_0', 18 / 32], ['q4_k_m', q4kmBpw(qwen2Cfg)]])
      add(`qwen2-${t}`, `Qwen2.5-0.5B shape (qwen2, GPT-2's vocabulary) GGUF ${t}, 128-token prompt + greedy decode: wasmformer vs wllama (same file)`, 'generate',
        WF(`gguf/qwen2-${t}.gguf`, undefined, { bpw, bpwHeld: true }), WLLAMA(`gguf/qwen2-${t}.gguf`, bpw), GEN_AGREE[t], { work: work.qwen2, solo: true, optIn: true });
    // and with 2 threads each (opt-in likewise: --rows qwen2-q4_0-2t,qwen2-q4_k_m-2t)
    for (const [t, bpw] of [['q4_0', 18 / 32], ['q4_k_m', q4kmBpw(qwen2Cfg)]])
      add(`qwen2-${t}-2t`, `Qwen2.5-0.5B shape (qwen2, GPT-2's vocabulary) GGUF ${t}, 128-token prompt + greedy decode, 2 threads each: wasmformer vs wllama (same file)`, 'generate',
        WF(`gguf/qwen2-${t}.gguf`, undefined, { threads: 2, bpw, bpwHeld: true }), WLLAMA(`gguf/qwen2-${t}.gguf`, bpw, { threads: 2 }), GEN_AGREE[t],
        { work: work.qwen2, solo: true, optIn: true });
    // encoders; agree: how far the outputs may part (embeddings: 1 − cosine; labels and answers must be the same, their
    // scores within it, relative). q8_0 and int8 round differently: a looser bound. A QA score is a product of two
    // probabilities from large random logits (about ±20): f32 rounding of the logits moves it by a few 1e-5.
    add('embed-f32', `all-MiniLM-L6-v2 shape feature-extraction, ${EMBED_BATCH} texts × ${EMBED_TOKENS} tokens, mean + normalize: f32 vs onnxruntime-web fp32`, 'embed',
      WF('minilm-st', 'f32'), ORT('onnx/minilm-fp32.onnx'), 1e-4);
    add('embed-q8', `all-MiniLM-L6-v2 shape feature-extraction, ${EMBED_BATCH} texts × ${EMBED_TOKENS} tokens, mean + normalize: q8_0 vs onnxruntime-web int8`, 'embed',
      WF('minilm-st', 'q8_0'), ORT('onnx/minilm-int8.onnx'), 2e-2);
    add('cls-f32', `DistilBERT-base text-classification (2 labels), one text of ${CLS_TOKENS} tokens: f32 vs onnxruntime-web fp32`, 'classify',
      WF('distilbert-cls', 'f32'), ORT('onnx/distilbert-cls-fp32.onnx'), 1e-4);
    add('qa-f32', `DistilBERT-base question-answering, question + context = ${QA_TOKENS} tokens (one window): f32 vs onnxruntime-web fp32`, 'qa',
      WF('distilbert-qa', 'f32'), ORT('onnx/distilbert-qa-fp32.onnx'), 1e-3);
    // translation: the same random MarianMTModel (opus-mt-en-de's shape), a Hugging Face folder for wasmformer and the
    // ONNX folder (encoder_model + decoder_model_merged) for transformers.js; greedy and 4 beams, 32 new tokens.
    // bpw: the bytes per weight a decoder step reads (% of ceiling).
    add(TRANSLATE, 'Marian (opus-mt-en-de shape) translation, 32-token source → 32 new tokens, greedy and 4 beams: f32 vs transformers.js fp32', 'translate',
      WF('marian-en-de', 'f32', { bpw: 4, screen: 34 / 32 }), { engine: 'tjs', model: 'marian-en-de-onnx', dtype: 'fp32', bpw: 4 }, undefined, { work: work.marian, setupError: translateSetupError });
    // the same on 8-bit weights: wasmformer converts the F32 folder to Q8_0 at load (dtype 'q8_0'); transformers.js's
    // dtype 'q8' loads onnx/encoder_model_quantized.onnx + decoder_model_merged_quantized.onnx (make_marian.py: int8
    // matrices, one scale each, activations quantized at run time, the merged decoder's branches included). Their ids
    // may part (two roundings): the row reports how far, and gives the ratio (both generate 32 tokens every run).
    add(TRANSLATE_Q8, 'Marian (opus-mt-en-de shape) translation, 32-token source → 32 new tokens, greedy and 4 beams: q8_0 vs transformers.js q8 (int8)', 'translate',
      WF('marian-en-de', 'q8_0', { bpw: 34 / 32 }), { engine: 'tjs', model: 'marian-en-de-onnx', dtype: 'q8', bpw: 1 }, undefined,
      { work: work.marian, setupError: translateSetupError ?? translateQ8SetupError, quantized: true });
    // loads: from the model's files (read or fetched every time) to something that runs, then released. wasmformer's
    // Model.load also builds the tokenizer and (q8_0) converts the F32 file; onnxruntime-web's InferenceSession.create
    // gets the .onnx bytes (graph optimizations 'all', as the timed rows) and no tokenizer. No share of a ceiling.
    add('bert-f32-load', 'BERT-base load, f32: wasmformer Model.load (files, tokenizer) vs onnxruntime-web InferenceSession.create (fp32 .onnx)', 'load',
      WF('bert-base', 'f32'), ORT('onnx/bert-fp32.onnx'));
    // 8-bit from an 8-bit file on both sides (wasmformer's Q8_0 GGUF, 119 MB; onnxruntime's int8 .onnx, 205 MB: its
    // word embeddings stay fp32), and wasmformer's conversion of the F32 file at load (4 times the bytes read)
    add('bert-q8-load', 'BERT-base load, 8-bit: wasmformer Model.load of a Q8_0 GGUF vs onnxruntime-web InferenceSession.create (int8 .onnx)', 'load',
      WF('gguf/bert-q8_0.gguf'), ORT('onnx/bert-int8.onnx'));
    add('bert-f32-q8-load', 'BERT-base load, 8-bit: wasmformer Model.load dtype q8_0 (the F32 file converted) vs onnxruntime-web InferenceSession.create (int8 .onnx)', 'load',
      WF('bert-base', 'q8_0'), ORT('onnx/bert-int8.onnx'));
    add('gpt2-f32-load', 'GPT-2 small load, f32: wasmformer Model.load (files, tokenizer) vs onnxruntime-web InferenceSession.create (fp32 .onnx)', 'load',
      WF('gpt2-base', 'f32'), ORT('onnx/gpt2-fp32.onnx'));
    add('bert-threads', 'BERT-base fill-mask, 128 tokens, f32: wasmformer 2 threads vs 1 thread', 'fill', WF('bert-base', 'f32', { threads: 2, bpw: 4 }), WF('bert-base', 'f32', { bpw: 4 }));
    add('prefill-threads', 'GPT-2 small prefill of 128 tokens, f32: wasmformer 2 threads vs 1 thread', 'prefill', WF('gpt2-base', 'f32', { threads: 2, bpw: 4 }), WF('gpt2-base', 'f32', { bpw: 4 }));
  }
  const named = (r) => only?.some((o) => r.id === o || r.id.endsWith(':' + o));
  return list.filter((r) => envs.includes(r.env) && (only ? named(r) : !r.optIn));
}

// ------------------------------------------------------------------------------------------------ the work
// Useful work, the same for every engine of a row: 2 FLOPs per multiply-add of the layers' matrices (Q, K, V, the
// attention output, the two MLP matrices) and of attention (all T² pairs for BERT, the causal half for GPT-2), plus
// BERT's masked-LM head at the one mask and GPT-2's LM head at the last position. A decode step reads every matrix,
// the LM head (the tied embeddings) included, once.
const bert = { L: bertCfg.num_hidden_layers, E: bertCfg.hidden_size, F: bertCfg.intermediate_size, V: bertCfg.vocab_size };
const gpt = { L: gptCfg.n_layer, E: gptCfg.n_embd, F: gptCfg.n_inner ?? 4 * gptCfg.n_embd, V: gptCfg.vocab_size };
const layerWeights = ({ L, E, F }) => L * (4 * E * E + 2 * E * F);
const T = PROMPT;
const enc = (c, T) => {  // BERT (hidden_size …) or DistilBERT (dim …) config: the layers' matrices and attention for T tokens
  const L = c.num_hidden_layers ?? c.n_layers, E = c.hidden_size ?? c.dim, F = c.intermediate_size ?? c.hidden_dim;
  return 2 * T * layerWeights({ L, E, F }) + 4 * L * T * T * E;
};
// A Llama-style decoder (config.json): Q, K, V (grouped: KV = key/value heads · head_dim), O and the three SwiGLU
// matrices per layer; attention of the causal half over Q's width; the tied LM head at the last position.
const decoderWork = (c) => {
  const L = c.num_hidden_layers, E = c.hidden_size, F = c.intermediate_size, V = c.vocab_size;
  const D = c.head_dim ?? E / c.num_attention_heads, Q = c.num_attention_heads * D, KV = (c.num_key_value_heads ?? c.num_attention_heads) * D;
  const weights = L * (E * (Q + 2 * KV) + Q * E + 3 * E * F);
  return { prefill: 2 * T * weights + 2 * L * T * (T + 1) * Q + 2 * E * V, decodeWeights: weights + E * V, decodeHead: E * V };
};
// Marian: the weights one decoder step reads (self-attention q, k, v, out; cross-attention q and out — its keys and
// values are computed once per source; the MLP; the tied output layer); the 4 beams' step reads them once too.
function marianWork() {
  const f = path.join(MODELS, 'marian-en-de/config.json');
  if (!existsSync(f)) return null;
  const c = JSON.parse(readFileSync(f, 'utf8')), E = c.d_model;
  return { stepWeights: c.decoder_layers * (6 * E * E + 2 * E * c.decoder_ffn_dim) + E * c.vocab_size, headWeights: E * c.vocab_size };
}
const work = {
  // per text (its tokens, all of them real: every text has EMBED_TOKENS); the pooling is not counted
  embed: enc(miniCfg, EMBED_TOKENS),
  // plus DistilBERT's classifier on position 0 (pre_classifier, classifier) and the QA head on every position
  classify: enc(clsCfg, CLS_TOKENS) + 2 * clsCfg.dim * (clsCfg.dim + 2),
  qa: enc(qaCfg, QA_TOKENS) + 2 * QA_TOKENS * qaCfg.dim * 2,
  fill: 2 * T * layerWeights(bert) + 4 * bert.L * T * T * bert.E + 2 * bert.E * (bert.E + bert.V),
  prefill: 2 * T * layerWeights(gpt) + 2 * gpt.L * T * (T + 1) * gpt.E + 2 * gpt.E * gpt.V,
  decodeWeights: layerWeights(gpt) + gpt.E * gpt.V,
  decodeHead: gpt.E * gpt.V,  // the tied output layer's share
  // rows with another model than GPT-2 small carry theirs (row.work)
  llama: decoderWork(llamaCfg),
  qwen2: decoderWork(qwen2Cfg),
  marian: marianWork(),
};

// -------------------------------------------------------------------------------------------------- Chromium
function serve() {
  const types = { '.html': 'text/html', '.js': 'text/javascript', '.mjs': 'text/javascript', '.wasm': 'application/wasm', '.json': 'application/json' };
  const server = http.createServer((req, res) => {
    const file = path.join(root, decodeURIComponent(new URL(req.url, 'http://x').pathname));
    if (!file.startsWith(root + path.sep) || !existsSync(file) || !statSync(file).isFile()) {
      res.writeHead(404);
      return res.end();
    }
    res.writeHead(200, { 'content-type': types[path.extname(file)] ?? 'application/octet-stream', 'content-length': statSync(file).size,
      'cross-origin-opener-policy': 'same-origin', 'cross-origin-embedder-policy': 'require-corp', 'cross-origin-resource-policy': 'same-origin',
      'cache-control': 'no-store' });
    if (req.method === 'HEAD') return res.end();
    createReadStream(file).pipe(res);
  });
  return new Promise((ok) => server.listen(0, '127.0.0.1', () => ok(server)));
}

async function chromium() {
  const { chromium } = await import('playwright-core');
  const server = await serve();
  const profile = mkdtempSync(path.join(os.tmpdir(), 'wf-bench-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium', headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
           '--disable-component-update', '--disable-sync'],
  });
  const page = context.pages()[0] ?? (await context.newPage());
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  // which wasm files the page and its workers fetch (the engines' builds), with WF_BENCH_VERBOSE
  page.on('request', (r) => { if (process.env.WF_BENCH_VERBOSE && /\.wasm$/.test(r.url())) console.log('  [page] fetches', new URL(r.url()).pathname); });
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); else if (process.env.WF_BENCH_VERBOSE) console.log('  [page]', m.text()); });
  await page.goto(`http://127.0.0.1:${server.address().port}/bench/peers/page.html`);
  await page.waitForFunction(() => window.benchInfo, null, { timeout: 60000 }).catch(() => { throw new Error(`the benchmark page did not start: ${errors.join('; ')}`); });
  const info = await page.evaluate(() => window.benchInfo);
  if (!info.crossOriginIsolated) throw new Error('the benchmark page is not cross-origin isolated (no threads): check the server headers');
  if (info.tjsVersions) tjsVersions ??= info.tjsVersions;
  return {
    env: `Chromium ${context.browser()?.version() ?? info.userAgent.match(/Chrome\/\S+/)?.[0]} (cross-origin isolated, hardwareConcurrency ${info.hardwareConcurrency})`,
    run: (row, o) => page.evaluate(([row, o]) => window.benchRow(row, o), [row, o]),
    async close() {
      await context.close();
      server.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

let tjsVersions = null;  // transformers.js and its onnxruntime-web, where the translation row loaded them
// The memory probe in wasmformer's Node worker (peers/memprobe-install.mjs): the package's worker_threads Worker for
// web/src/worker-node.js is started on peers/wf-worker-node-probe.mjs instead (the probe, then that file unchanged),
// with a MessagePort in its workerData; memProbes lists them in the order they started.
const memProbes = [];
{
  const RealWorker = workerThreads.Worker, target = path.join(root, 'web/src/worker-node.js');
  const probe = pathToFileURL(path.join(root, 'bench/peers/wf-worker-node-probe.mjs'));
  workerThreads.Worker = class extends RealWorker {
    constructor(file, opts = {}) {
      const mine = (file instanceof URL || /^file:/.test(String(file)) ? fileURLToPath(file) : String(file)) === target && opts.workerData === undefined;
      const ch = mine ? new workerThreads.MessageChannel() : null;
      super(mine ? probe : file, mine ? { ...opts, workerData: { wfBenchPort: ch.port2 }, transferList: [...(opts.transferList ?? []), ch.port2] } : opts);
      if (!mine) return;
      ch.port1.unref();
      memProbes.push({ kind: 'wasmformer', ask: () => new Promise((ok) => {
        ch.port1.ref();
        ch.port1.once('message', (m) => { ch.port1.unref(); ok(m); });
        ch.port1.postMessage(0);
      }) });
    }
  };
  syncBuiltinESMExports();
}
async function node() {
  const ort = await import('onnxruntime-web');
  ort.env.wasm.numThreads = 1;
  const file = (name) => path.join(MODELS, name);
  // transformers.js on its onnxruntime-web (peers/transformers-js.mjs), for the translation row only
  const tjs = plan.some((r) => r.env === 'node' && r.b.engine === 'tjs' && !r.setupError)
    ? await (await import('./peers/transformers-js.mjs')).loadTransformersJs({ numThreads: 1 }) : null;
  if (tjs) tjsVersions = tjs.versions;
  const ctx = {
    wasmformer: wf, ort, ortThreads: 1, memProbes,
    // wllama as a Node user would try it: its ES module entry (its package.json "main" names no existing file)
    Wllama: (await import('@wllama/wllama/esm/index.js')).Wllama,
    wllamaAssets: { default: path.join(root, 'node_modules/@wllama/wllama/esm/wasm/wllama.wasm') },
    source: file,
    transformers: tjs?.transformers, tjsModelOptions: tjs?.modelOptions, tjsVersions: tjs?.versions, tjsSource: file,
    bytes: async (name) => new Uint8Array(readFileSync(file(name))),
    blob: async (name) => new Blob([readFileSync(file(name))]),
  };
  return { env: `Node ${process.version}`, run: (row, o) => runRow(row, ctx, { ...o, log: process.env.WF_BENCH_VERBOSE ? (s) => console.log('  ' + s) : undefined }), close() {} };
}

// ---------------------------------------------------------------------------------------------------- report
// CPU used by other processes (not this one or its children, Chromium included) while something runs, in cores;
// and the hypervisor's steal. From /proc: a row with other work beside it is marked in the table.
function cpuSnapshot() {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  const procs = readdirSync('/proc').filter((d) => /^\d+$/.test(d)).map((pid) => {
    try {
      const st = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const x = st.slice(st.lastIndexOf(')') + 2).split(' ');
      return { pid: +pid, ppid: +x[1], ticks: +x[11] + +x[12] };
    } catch {
      return null;  // gone meanwhile
    }
  }).filter(Boolean);
  const mine = new Set([process.pid]);
  for (let grew = true; grew;) {
    grew = false;
    for (const p of procs)
      if (!mine.has(p.pid) && mine.has(p.ppid)) {
        mine.add(p.pid);
        grew = true;
      }
  }
  const own = procs.filter((p) => mine.has(p.pid)).reduce((s, p) => s + p.ticks, 0);
  return { total: f.slice(0, 8).reduce((a, b) => a + b, 0), busy: f[0] + f[1] + f[2] + f[5] + f[6], steal: f[7], own };
}
function otherCores(a, b) {
  const cores = (ticks) => Math.max(0, (ticks * os.cpus().length) / (b.total - a.total));
  return { other_cores: +cores(b.busy - a.busy - (b.own - a.own)).toFixed(2), steal_cores: +cores(b.steal - a.steal).toFixed(2),
           own_cores: +cores(b.own - a.own).toFixed(2) };
}

const fmt = (x, d = 0) => x.toFixed(d);
// One table line per measured quantity of a row: fill → ms; generate → prefill ms and decode tokens/s; prefill → ms;
// embed → sentences/s; classify and qa → ms.
function lines(row, res, ceil) {
  const metrics = { fill: [['ms', 'ms', false]], prefill: [['prefill_ms', 'ms', false]], generate: [['prefill_ms', 'ms', false], ['decode_tps', 'tok/s', true]],
    embed: [['sentences_per_s', 'sentences/s', true]], classify: [['ms', 'ms', false]], qa: [['ms', 'ms', false]], load: [['ms', 'ms', false]],
    translate: [['greedy_ms', 'ms', false], ['beam_ms', 'ms', false]] }[row.workload?.task ?? 'translate'];
  const tw = row.workload?.task === 'translate' ? row.workload : null;
  const what = (key) => (key === 'decode_tps' ? `decode ${DECODE} tokens`
    : key === 'greedy_ms' ? `translate ${tw?.ids.length ?? '?'} → ${tw?.options.max_new_tokens ?? '?'}, greedy`
    : key === 'beam_ms' ? `translate ${tw?.ids.length ?? '?'} → ${tw?.options.max_new_tokens ?? '?'}, ${tw?.beams ?? '?'} beams`
    : { fill: 'fill-mask 128', prefill: 'prefill 128', generate: 'prefill 128', embed: `embed ${EMBED_BATCH} × ${EMBED_TOKENS}`,
        classify: `classify ${CLS_TOKENS}`, qa: `qa ${QA_TOKENS}`, load: 'load: files → ready' }[row.workload.task]);
  const line = { id: row.id, env: row.env, title: row.title, other_cores: res.other_cores, steal_cores: res.steal_cores };
  if (res.unavailable || res.error) return [{ ...line, what: metrics.map(([key]) => what(key)).join(', '), note: res.unavailable ?? `failed: ${res.error}` }];
  return metrics.map(([key, unit, higherIsBetter]) => {
    const side = (s, spec) => {
      const xs = s.samples.map((x) => x[key]);
      const m = median(xs);
      const threads = s.info.threads ?? 1;
      const c = ceil[threads] ?? ceil[1];
      const wk = row.work ?? work;
      // bpwHeld: the file's bytes per weight while the engine computes from the file as stored (it borrows the file's
      // bytes, holding little beside them), else the bytes it holds per weight (its converted copies)
      const bpw = !spec.bpwHeld || s.info.weight_bytes == null ? spec.bpw
        : Math.max(s.info.borrows_file_bytes ? spec.bpw : 0, s.info.weight_bytes / wk.decodeWeights);
      // a greedy step that screens the output layer (spec.screen: its copy's bytes per weight) reads the copy, not the layer
      // (translation's greedy steps; the decode rows whose output layer is f32)
      const bytes = (weights, head, screened) => (screened ? (weights - head) * (bpw ?? 4) + head * spec.screen : weights * (bpw ?? 4));
      const stepBytes = tw && bytes(row.work.stepWeights, row.work.headWeights, spec.screen && key === 'greedy_ms');
      const pct = row.workload.task === 'load' ? null
        : tw ? (100 * tw.options.max_new_tokens * stepBytes) / (m / 1e3) / 1e9 / c.read_gbs
        : key === 'decode_tps' ? (100 * m * bytes(wk.decodeWeights, wk.decodeHead, spec.screen)) / 1e9 / c.read_gbs
        : key === 'sentences_per_s' ? (100 * m * work.embed) / 1e9 / c.gflops
        : (100 * wk[row.workload.task === 'generate' ? 'prefill' : row.workload.task]) / (m / 1e3) / 1e9 / c.gflops;
      // integer products on a compute-bound row: also against the int16 dot's ceiling, the instruction they run on
      const compute = pct != null && !tw && key !== 'decode_tps';
      const pct_dot = compute && integerProducts(spec) ? (pct * c.gflops) / c.dot_gops : undefined;
      return { median: m, min: Math.min(...xs), max: Math.max(...xs), n: xs.length, pct, pct_dot, threads, threading: s.info.threading, dtype: s.info.dtype, bpw };
    };
    const a = side(res.a, row.a);
    if (!res.b) {  // a solo row whose peer did not load here: wasmformer's numbers, no ratio
      if (a.n !== reps.runs) throw new Error(`${row.id}: ${a.n} samples, not ${reps.runs}`);
      return { ...line, what: what(key), unit, a, b: null, ratio: null, note: `peer failed: ${res.peer_error}` };
    }
    const b = side(res.b, row.b);
    // a ratio comes only from the two sides of one row of this run, each with every timed run
    if (a.n !== reps.runs || b.n !== reps.runs) throw new Error(`${row.id}: ${a.n} and ${b.n} samples, not ${reps.runs}`);
    // the f32 translation row: no ratio where the two engines' token ids differ (the 8-bit row says how far they part)
    const refused = tw && !row.quantized && res.agreement && !res.agreement[key === 'greedy_ms' ? 'greedy_ok' : 'beam_ok'];
    if (refused) console.log(`WARNING: ${row.id} ${what(key)}: the engines' token ids differ; no ratio (${res.agreement.text})`);
    return { ...line, what: what(key), unit, a, b, ratio: refused ? null : higherIsBetter ? a.median / b.median : b.median / a.median,
             ...(refused ? { note: 'ratio refused: the engines\' token ids differ' } : {}) };
  });
}

function table(all) {
  const head = ['env', 'comparison', 'measure', 'wasmformer', 'peer', '× faster', 'wasmformer % of ceiling', 'peer % of ceiling', 'threads (wasmformer / peer)'];
  const noise = (l) => (l.other_cores > 0.1 ? `; other processes used ${l.other_cores} cores meanwhile` : '');
  const out = [head, head.map(() => '---')];
  const v = (s, unit) => `${fmt(s.median, unit === 'ms' ? 0 : 1)} ${unit} (${fmt(s.min, unit === 'ms' ? 0 : 1)}–${fmt(s.max, unit === 'ms' ? 0 : 1)})`;
  const pct = (s) => (s.pct == null ? '—' : fmt(s.pct) + ' %' + (s.pct_dot == null ? '' : ` (${fmt(s.pct_dot)} % of dot)`));  // (a load has no ceiling)
  for (const l of all) {
    const short = l.id.split(':')[1];
    if (!l.a) out.push([l.env, short, l.what, '—', '—', '—', '—', '—', l.note]);
    else if (!l.b) out.push([l.env, short, l.what, v(l.a, l.unit), '—', '—', pct(l.a), '—', `${l.a.threads} / —; ${l.note}${noise(l)}`]);
    else if (l.ratio == null) out.push([l.env, short, l.what, v(l.a, l.unit), v(l.b, l.unit), '—', pct(l.a), pct(l.b),
      `${l.a.threads} / ${l.b.threads}; ${l.note}${noise(l)}`]);
    else out.push([l.env, short, l.what, v(l.a, l.unit), v(l.b, l.unit), fmt(l.ratio, 2) + '×', pct(l.a), pct(l.b),
      `${l.a.threads} / ${l.b.threads}${noise(l)}`]);
  }
  return out.map((r) => `| ${r.join(' | ')} |`).join('\n');
}

function history(current) {
  if (!existsSync(RESULTS)) return '';
  const prev = readdirSync(RESULTS).filter((f) => f.endsWith('.json') && f !== path.basename(current)).sort().pop();
  if (!prev) return '';
  const old = JSON.parse(readFileSync(path.join(RESULTS, prev), 'utf8'));
  const rowsOld = old.lines.filter((l) => l.ratio != null).map((l) => `| ${l.env} | ${l.id.split(':')[1]} | ${l.what} | ${fmt(l.ratio, 2)}× |`);
  if (!rowsOld.length) return '';
  return `\n### History, not measured in this run: ratios of the run of ${old.started}${old.quick ? ' (quick mode)' : ''} (${prev})\n\n` +
    `| env | comparison | measure | × faster then |\n| --- | --- | --- | --- |\n${rowsOld.join('\n')}\n`;
}

// ------------------------------------------------------------------------------------------------------ main
const started = new Date();
const w = await workloads();
const plan = rows(w);
const before = cpuSnapshot();
await new Promise((r) => setTimeout(r, 1000));
const busy = otherCores(before, cpuSnapshot()).other_cores;
console.log(`wasmformer benchmark${quick ? ' — QUICK MODE (1 warm-up, 2 runs, 16 decode steps): for working on the harness, not for quoting' : ''}`);
if (busy > 0.3) console.log(`warning: ${fmt(busy, 1)} of ${os.cpus().length} cores were busy before the run started (other processes): numbers will be noisy`);
console.log('measuring the machine ceilings (wasm probe: f32x4 mul+add, i32x4.dot_i16x8_s, v128 read of 256 MiB)…');
const ceil = { 1: await ceilings(1), 2: await ceilings(2) };
for (const c of Object.values(ceil)) console.log(`  ${c.threads} thread${c.threads > 1 ? 's' : ''}: ${fmt(c.gflops, 1)} GFLOP/s, int16 dot ${fmt(c.dot_gops, 1)} GOP/s, read ${fmt(c.read_gbs, 1)} GB/s`);

const results = {}, envNames = {};
for (const env of envs) {
  const envRows = plan.filter((r) => r.env === env);
  if (!envRows.length) continue;
  let runner;
  try {
    runner = env === 'node' ? await node() : await chromium();
  } catch (e) {
    for (const row of envRows) results[row.id] = { error: `${env} did not start: ${String(e?.message ?? e).split('\n')[0]}` };
    console.log(`\n${env} did not start: ${e?.message ?? e}`);
    continue;
  }
  envNames[env] = runner.env;
  console.log(`\n${runner.env}`);
  try {
    for (const row of envRows) {
      const t0 = Date.now(), cpu0 = cpuSnapshot();
      try {
        if (row.setupError || !row.workload) throw new Error(row.setupError ?? 'its model is missing');
        results[row.id] = await runner.run(row, reps);
      } catch (e) {
        results[row.id] = { error: String(e?.message ?? e).split('\n')[0] };
      }
      const r = Object.assign(results[row.id], otherCores(cpu0, cpuSnapshot()));
      console.log(`  ${row.id.split(':')[1]}: ${r.error ? 'failed: ' + r.error : r.unavailable ?? 'done'} (${fmt((Date.now() - t0) / 1e3)} s` +
                  `${r.other_cores > 0.1 ? `; other processes used ${r.other_cores} cores meanwhile` : ''})`);
    }
  } finally {
    await runner.close();
  }
}

const all = plan.flatMap((row) => lines(row, results[row.id], ceil));
const stamp = started.toISOString().replace(/:/g, '-').replace(/\..*/, '');
mkdirSync(RESULTS, { recursive: true });
const jsonFile = path.join(RESULTS, `${stamp}.json`);
const git = (...a) => { try { return execFileSync('git', a, { cwd: root, encoding: 'utf8' }).trim(); } catch { return null; } };
const version = (p) => JSON.parse(readFileSync(path.join(root, 'node_modules', p, 'package.json'), 'utf8')).version;
const meta = {
  started: started.toISOString(), seconds: Math.round((Date.now() - started) / 1e3), quick, warmup: reps.warmup, runs: reps.runs, prompt_tokens: PROMPT, decode_steps: DECODE,
  machine: { cpu: os.cpus()[0]?.model, cores: os.cpus().length, busy_cores_before: +fmt(busy, 2) }, envs: envNames, ceilings: ceil,
  commit: git('rev-parse', 'HEAD'), dirty: !!git('status', '--porcelain'), dist: statSync(path.join(root, 'dist/wasmformer.wasm')).mtime.toISOString(),
  peers: { 'onnxruntime-web': version('onnxruntime-web'), '@wllama/wllama': version('@wllama/wllama'),
           ...(tjsVersions ? { '@huggingface/transformers': tjsVersions['@huggingface/transformers'], 'onnxruntime-web (transformers.js)': tjsVersions['onnxruntime-web'] } : {}) },
};
const ceilText = Object.values(ceil).map((c) => `${c.threads} thread${c.threads > 1 ? 's' : ''}: ${fmt(c.gflops, 1)} GFLOP/s f32x4 mul+add, ${fmt(c.dot_gops, 1)} GOP/s i32x4.dot_i16x8_s, ${fmt(c.read_gbs, 1)} GB/s read`).join('; ');
const held = (s) => (s.weight_bytes == null ? '' : `, ${fmt(s.weight_bytes / 2 ** 20, 1)} MiB of weights held beside the file${s.borrows_file_bytes ? ', the rest computed from the file as stored' : ''}`);
const how = (s) => (s.dtype ? `wasmformer (dtype ${s.dtype}${held(s)}): ${s.threading}` : s.threading);
const same = ({ a, b }) => {  // how far A's output tokens agree with B's (the same model computed by both)
  if (!a?.info.output || !b?.info.output) return '';
  const n = Math.min(a.info.output.length, b.info.output.length);
  const k = a.info.output.findIndex((t, i) => i >= n || t !== b.info.output[i]);
  return `; output tokens ${k === -1 || k >= n ? `identical (${n})` : `identical for the first ${k} of ${n}`}`;
};
const agreed = ({ agreement: g }) => (!g ? '' : g.quantized ? `; ${g.input}; 8-bit outputs ${g.ok ? 'identical' : 'differ (two 8-bit roundings; no bound, the ratio stands)'}: ${g.text}`
  : `; ${g.input}; ${g.ok ? 'outputs agree' : 'OUTPUTS DO NOT AGREE'}: ${g.text}`);
const threadRow = (row) => (row.a.threads ?? 1) > 1 || (row.b.threads ?? 1) > 1;
const notes = plan.filter((row) => results[row.id]?.a).map((row) => {
  const r = results[row.id];
  const cpu = threadRow(row) && r.own_cores != null ? `; this process and its children (the engines' workers, Chromium) used ${r.own_cores} cores on average over the row (loads, warm-ups and checks included)` : '';
  return `${row.env} ${row.id.split(':')[1]}: A = ${how(r.a.info)}; B = ${r.b ? how(r.b.info) : `did not run (${r.peer_error})`}${r.agreement ? agreed(r) : same(r)}${cpu}`;
});
// Rows against wllama: each engine's wasm memory (the probe in its worker: WebAssembly.Memory byteLength) after load
// and after the timed runs; a wasm memory only grows, so the second is the peak through them.
const mib = (x) => (x == null ? '?' : fmt(x / 2 ** 20));
const memSide = (m, name) => (!m?.load && !m?.run ? `${name} —`
  : `${name} ${mib(m.load?.bytes)} → ${mib(m.run?.bytes)} MiB (${m.run?.memories ?? m.load?.memories} memor${(m.run?.memories ?? m.load?.memories) === 1 ? 'y' : 'ies'}${(m.run ?? m.load)?.shared ? ', shared' : ''}, ${(m.run ?? m.load)?.workers} worker${(m.run ?? m.load)?.workers === 1 ? '' : 's'} started by the engine's worker)`);
const memLines = plan.filter((row) => results[row.id]?.memory).map((row) => {
  const m = results[row.id].memory;
  return `${row.env} ${row.id.split(':')[1]}: ${memSide(m.a, 'wasmformer')}; ${memSide(m.b, 'wllama')}`;
});
const memText = memLines.length ? `\nPeak wasm memory (MiB, after load → after the timed runs; WebAssembly.Memory byteLength in each engine's worker):\n${memLines.map((n) => `- ${n}`).join('\n')}\n` : '';
for (const l of memLines) console.log(`memory: ${l}`);
const md = `# wasmformer benchmark, ${meta.started}${quick ? ' — QUICK MODE, not for quoting' : ''}

${Object.values(envNames).join('; ')}. ${meta.machine.cpu}, ${meta.machine.cores} cores. Commit ${meta.commit?.slice(0, 10)}${meta.dirty ? ' (with uncommitted changes)' : ''}, dist/ built ${meta.dist}.
onnxruntime-web ${meta.peers['onnxruntime-web']}, @wllama/wllama ${meta.peers['@wllama/wllama']}${tjsVersions ? `, transformers.js ${tjsVersions['@huggingface/transformers']} (on its onnxruntime-web ${tjsVersions['onnxruntime-web']})` : ''}. Random weights with BERT-base, GPT-2-small, all-MiniLM-L6-v2 and DistilBERT-base shapes${plan.some((r) => r.work && r.work !== work.marian) ? ', and SmolLM2-135M / Qwen2.5-0.5B shapes with GPT-2\'s 50257-token vocabulary (not their own 49152 / 151936)' : ''} (build/bench-models).
Medians of ${reps.runs} timed runs (min–max) after ${reps.warmup} warm-up runs, engines alternating A B A B in one process; one thread unless the row says.
× faster: how many times faster wasmformer is, from this run only. Machine ceilings, measured in this run (wasm probe in Node): ${ceilText}.
% of ceiling: fill-mask and prefill, useful FLOPs (${fmt(work.fill / 1e9, 1)} and ${fmt(work.prefill / 1e9, 1)} GFLOP) over time against the mul+add ceiling (for int8/q8_0/q4_0 as f32-equivalent work; "of dot": those integer rows' useful operations against the int16 dot product's ceiling — the instruction their products run on in SIMD128; relaxed SIMD's int8 dot, which Chromium runs, does more a cycle);
likewise embed (${fmt(work.embed / 1e9, 2)} GFLOP a text), classify (${fmt(work.classify / 1e9, 1)} GFLOP) and qa (${fmt(work.qa / 1e9, 1)} GFLOP); the peer's times of these include building its input tensors and the post-processing in JS (pooling, softmax, the answer span), not tokenizing;
decode, the bytes of the weight matrices each token reads (${fmt(work.decodeWeights / 1e6, 1)} M weights × the format's bytes per weight; wasmformer's greedy steps on an f32 output layer read its q8_0 copy instead, nn/head-screen.h) against read bandwidth; for the threads used.${
  plan.some((r) => r.work && r.work !== work.marian) ? `\nThe Llama-style rows count their own: llama (SmolLM2-135M shape) prefill ${fmt(work.llama.prefill / 1e9, 1)} GFLOP, ${fmt(work.llama.decodeWeights / 1e6, 1)} M weights a decode step; ` +
    `qwen2 (Qwen2.5-0.5B shape) ${fmt(work.qwen2.prefill / 1e9, 1)} GFLOP, ${fmt(work.qwen2.decodeWeights / 1e6, 1)} M weights (the tied embeddings as the LM head included); wasmformer's bytes per weight are the file's where it computes from the file's bytes as stored, else those of the copies it holds (a matrix converted at load counts its new type's bytes).` : ''}${
  plan.some((r) => r.workload?.task === 'translate') && work.marian ? `\nTranslation (${[...new Set(plan.filter((r) => r.workload?.task === 'translate').map((r) => r.id.split(':')[1]))].join(', ')}): a random MarianMTModel with opus-mt-en-de's shape (bench/peers/make_marian.py), one source sentence of ${w.translate?.ids.length} ids, ` +
    `${w.translate?.options.max_new_tokens} new tokens on both sides (</s> banned through bad_words_ids, the last token the forced </s>), text in and text out on both sides; wasmformer Model.translate, transformers.js pipeline('translation') ` +
    `for greedy and, as transformers.js ${tjsVersions?.['@huggingface/transformers'] ?? ''} has no beam search (its generate keeps one candidate a step), Hugging Face's beam search in bench/peers/measure.mjs on its tokenizer and onnxruntime-web sessions for ${w.translate?.beams} beams. ` +
    `% of ceiling: the decoder's weights read per step (${fmt(work.marian.stepWeights / 1e6, 1)} M, the tied output layer included, × the bytes per weight: f32 4, q8_0 34/32, int8 1; the beams of a step read them once; wasmformer's f32 greedy steps read the output layer's q8_0 copy instead of the layer, nn/head-screen.h) × ${w.translate?.options.max_new_tokens} steps against read bandwidth. ` +
    `No ratio is given where the engines' token ids differ (f32).` +
    (plan.some((r) => r.id.endsWith(':' + TRANSLATE_Q8)) ? ` ${TRANSLATE_Q8}: wasmformer dtype q8_0 (Q8_0 blocks of 32 weights, converted from the F32 file at load) vs transformers.js dtype 'q8' ` +
      `(onnx/encoder_model_quantized.onnx, decoder_model_merged_quantized.onnx: int8 matrices with one scale each, activations quantized to uint8 at run time, MatMulInteger; embeddings f32); ` +
      `two different roundings, so their ids may part from each other's and from PyTorch's f32 answer: how far is said under the table, and the ratio is given (both generate 32 tokens every run).` : '') : ''}

${table(all)}

How each engine ran:
${notes.map((n) => `- ${n}`).join('\n')}
${memText}${history(jsonFile)}`;
writeFileSync(jsonFile, JSON.stringify({ ...meta, lines: all, results }, null, 1));
writeFileSync(jsonFile.replace(/\.json$/, '.md'), md);
console.log('\n' + md);
console.log(`written: ${path.relative(root, jsonFile)} and .md (${meta.seconds} s)`);
process.exit(0);
