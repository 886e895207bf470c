// Checks the translate-marian row's ONNX graphs (bench/peers/make_marian.py) against the PyTorch reference
// (tools/reference/marian.py) before anything is timed on them, in Node with the onnxruntime-web that transformers.js
// 4.3.1 depends on (bench/peers/transformers-js/node_modules), one thread:
//   - encoder_model.onnx's last_hidden_state for the bench's source = PyTorch's encoder output;
//   - decoder_model_merged.onnx: step 0 through the branch without past (use_cache_branch false, empty past tensors
//     shaped as transformers.js makes them from the input metadata), steps 1-3 through the branch with past (the
//     presents fed back), on greedy's first 4 decoder ids; each step's logits = PyTorch's;
//   - transformers.js itself (its MarianMTModel.generate on these files, greedy, the row's options): the ids of
//     PyTorch's greedy answer.
// Relative error: max |a − b| / max |b| per tensor, at most 1e-4. Prints a line per check; exit status 1 on a failure.
//
//   node bench/peers/check_marian_onnx.mjs [MODELS_DIR]      (default build/bench-models)
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const models = path.resolve(process.argv[2] ?? path.join(root, 'build/bench-models'));
const hf = path.join(models, 'marian-en-de'), tj = path.join(models, 'marian-en-de-onnx');
const ref = JSON.parse(readFileSync(path.join(hf, 'bench-reference.json'), 'utf8'));
const f32 = (name) => { const b = readFileSync(path.join(hf, name)); return new Float32Array(b.buffer, b.byteOffset, b.byteLength / 4); };
const { loadTransformersJs } = await import('./transformers-js.mjs');
const { ort, transformers, modelOptions, versions } = await loadTransformersJs();
console.log(`transformers.js ${versions['@huggingface/transformers']}, onnxruntime-web ${versions['onnxruntime-web']} (Node build, wasm, 1 thread)`);

let failed = false;
const TOL = 1e-4;
function compare(what, a, b) {
  let d = 0, m = 0;
  for (let i = 0; i < b.length; i++) { d = Math.max(d, Math.abs(a[i] - b[i])); m = Math.max(m, Math.abs(b[i])); }
  const rel = d / m, ok = a.length === b.length && rel <= TOL;
  failed ||= !ok;
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}: max |ONNX − PyTorch| ${d.toExponential(2)}, relative ${rel.toExponential(2)} (≤ ${TOL})`);
}

const opts = { executionProviders: ['wasm'], graphOptimizationLevel: 'all' };
const enc = await ort.InferenceSession.create(path.join(tj, 'onnx/encoder_model.onnx'), opts);
const dec = await ort.InferenceSession.create(path.join(tj, 'onnx/decoder_model_merged.onnx'), opts);
const i64 = (xs, dims) => new ort.Tensor('int64', BigInt64Array.from(xs, BigInt), dims);
const S = ref.source_ids.length, [, V] = ref.logits_shape;
const mask = i64(ref.source_ids.map(() => 1), [1, S]);
const h = (await enc.run({ input_ids: i64(ref.source_ids, [1, S]), attention_mask: mask })).last_hidden_state;
compare(`encoder last_hidden_state (${h.dims.join(' × ')})`, h.data, f32('reference-encoder.f32'));

const logits = f32('reference-logits.f32');
let past = null;
for (let t = 0; t < ref.decoder_input_ids.length; t++) {
  const feeds = { encoder_attention_mask: mask, input_ids: i64([ref.decoder_input_ids[t]], [1, 1]), encoder_hidden_states: h,
                  use_cache_branch: new ort.Tensor('bool', [past !== null], [1]) };
  for (const meta of dec.inputMetadata.filter((x) => x.name.startsWith('past_key_values.'))) {
    // as transformers.js's addPastKeyValues: the symbolic dims other than batch_size are 0 on the first step
    const shape = meta.shape.map((d) => (typeof d === 'number' ? d : d === 'batch_size' ? 1 : 0));
    feeds[meta.name] = past?.[meta.name.replace('past_key_values', 'present')] ?? new ort.Tensor('float32', new Float32Array(0), shape);
  }
  const out = await dec.run(feeds);
  compare(`decoder step ${t} (${past ? 'with past' : 'without past'}) logits`, out.logits.data, logits.subarray(t * V, (t + 1) * V));
  past = out;
}

// transformers.js's own generate on the folder: greedy, the row's options
const model = await transformers.AutoModelForSeq2SeqLM.from_pretrained(tj, modelOptions);
const T64 = (xs) => new transformers.Tensor('int64', BigInt64Array.from(xs, BigInt), [1, xs.length]);
const seq = await model.generate({ input_ids: T64(ref.source_ids), attention_mask: T64(ref.source_ids.map(() => 1)), num_beams: 1, do_sample: false,
  ...ref.options });
const got = Array.from(seq.data, Number);
const same = JSON.stringify(got) === JSON.stringify(ref.greedy);
failed ||= !same;
console.log(`${same ? 'ok  ' : 'FAIL'} transformers.js greedy generate: ${same ? `PyTorch's ${got.length - 1} tokens` : `${got} ≠ PyTorch's ${ref.greedy}`}`);
await model.dispose();
process.exit(failed ? 1 : 0);
