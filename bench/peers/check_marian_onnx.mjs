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
// --q8: the 8-bit files that transformers.js's dtype 'q8' loads (encoder_model_quantized.onnx,
// decoder_model_merged_quantized.onnx: make_marian.py's make_quantized), for translate-marian-q8. They cannot give
// PyTorch's f32 numbers; the check is that they run through both branches of the merged decoder, that they are
// quantized (every tensor parts from PyTorch's by at least 1e-4 relative: an fp32 MatMul left in a branch would
// not), that they stay near it (at most 0.3 relative: a wrong scale or a broken graph gives ~1), that transformers.js
// with dtype 'q8' asks for exactly these files, and that its generate gives 32 tokens; where its ids part from
// PyTorch's f32 answer is reported, not required.
//
//   node bench/peers/check_marian_onnx.mjs [MODELS_DIR] [--q8]      (default build/bench-models)
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const q8 = process.argv.includes('--q8');
const dirArg = process.argv.slice(2).find((a) => a !== '--q8');
const models = path.resolve(dirArg ?? path.join(root, 'build/bench-models'));
const suffix = q8 ? '_quantized' : '';
const hf = path.join(models, 'marian-en-de'), tj = path.join(models, 'marian-en-de-onnx');
const ref = JSON.parse(readFileSync(path.join(hf, 'bench-reference.json'), 'utf8'));
const f32 = (name) => { const b = readFileSync(path.join(hf, name)); return new Float32Array(b.buffer, b.byteOffset, b.byteLength / 4); };
const { loadTransformersJs } = await import('./transformers-js.mjs');
const { ort, transformers, modelOptions, versions } = await loadTransformersJs();
console.log(`transformers.js ${versions['@huggingface/transformers']}, onnxruntime-web ${versions['onnxruntime-web']} (Node build, wasm, 1 thread)` +
            `${q8 ? ': the 8-bit files (dtype q8) against PyTorch\'s f32' : ''}`);

let failed = false;
const [LO, TOL] = q8 ? [1e-4, 0.3] : [0, 1e-4];
function compare(what, a, b) {
  let d = 0, m = 0;
  for (let i = 0; i < b.length; i++) { d = Math.max(d, Math.abs(a[i] - b[i])); m = Math.max(m, Math.abs(b[i])); }
  const rel = d / m, ok = a.length === b.length && rel <= TOL && rel >= LO;
  failed ||= !ok;
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}: max |ONNX − PyTorch| ${d.toExponential(2)}, relative ${rel.toExponential(2)} (${LO ? `${LO} … ` : '≤ '}${TOL})`);
}

const opts = { executionProviders: ['wasm'], graphOptimizationLevel: 'all' };
const enc = await ort.InferenceSession.create(path.join(tj, `onnx/encoder_model${suffix}.onnx`), opts);
const dec = await ort.InferenceSession.create(path.join(tj, `onnx/decoder_model_merged${suffix}.onnx`), opts);
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
// the ONNX files it asks for (its progress events), which must be this check's
const files = [];
const model = await transformers.AutoModelForSeq2SeqLM.from_pretrained(tj, { ...modelOptions, dtype: q8 ? 'q8' : modelOptions.dtype,
  progress_callback: (e) => { if (e.status === 'initiate' && e.file.endsWith('.onnx')) files.push(e.file); } });
const want = [`onnx/encoder_model${suffix}.onnx`, `onnx/decoder_model_merged${suffix}.onnx`];
const sameFiles = JSON.stringify([...files].sort()) === JSON.stringify([...want].sort());
failed ||= !sameFiles;
console.log(`${sameFiles ? 'ok  ' : 'FAIL'} transformers.js (dtype ${q8 ? 'q8' : modelOptions.dtype}) loads ${files.join(', ')}${sameFiles ? '' : ` (expected ${want.join(', ')})`}`);
const T64 = (xs) => new transformers.Tensor('int64', BigInt64Array.from(xs, BigInt), [1, xs.length]);
const seq = await model.generate({ input_ids: T64(ref.source_ids), attention_mask: T64(ref.source_ids.map(() => 1)), num_beams: 1, do_sample: false,
  ...ref.options });
const got = Array.from(seq.data, Number);
if (q8) {
  let k = 0;
  while (k < got.length && got[k] === ref.greedy[k]) k++;
  const ok = got.length === ref.greedy.length;
  failed ||= !ok;
  console.log(`${ok ? 'ok  ' : 'FAIL'} transformers.js greedy generate (dtype q8): ${got.length - 1} tokens; ` +
              `${k === got.length ? 'PyTorch\'s f32 answer' : `PyTorch's f32 answer for the first ${k - 1}, then its own (not required)`}`);
} else {
  const same = JSON.stringify(got) === JSON.stringify(ref.greedy);
  failed ||= !same;
  console.log(`${same ? 'ok  ' : 'FAIL'} transformers.js greedy generate: ${same ? `PyTorch's ${got.length - 1} tokens` : `${got} ≠ PyTorch's ${ref.greedy}`}`);
}
await model.dispose();
process.exit(failed ? 1 : 0);
