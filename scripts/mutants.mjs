#!/usr/bin/env node
// Mutation check: plausible bugs, written into src/ one at a time, must each make the native Catch2 suite fail.
// For each mutant: replace the exact text in the file (the script stops if the text is no longer there, or is
// there more often than expected: update the mutant with the code), rebuild wf-tests (incremental, build/native),
// run it, restore the file. A mutant the suite survives is a hole in the tests; the script then exits 1.
// Each mutant lists the test cases that failed on it (tests): those run first, and only if none of them fails does
// the whole suite run; either stops at its first failure. A listed test the suite no longer has stops the script.
// (The whole suite for every mutant took 28 of `npm test`'s 64 minutes on a 2-core machine.)
//
//   node scripts/mutants.mjs            every mutant
//   node scripts/mutants.mjs top-p …    the ones named
//
// The original text is saved to build/mutants/restore.json before a file is changed, and restored on exit,
// on Ctrl-C, and at the next start if a run was killed.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const build = path.join(root, 'build/native');
const saved = path.join(root, 'build/mutants/restore.json');

// { name, why, file, from, to, count (occurrences replaced; default 1), tests (the test cases expected to fail) }
export const mutants = [
  // the seven bugs of issue 21, which the suite once let through
  { name: 'temperature-multiplied', why: 'logits multiplied by the temperature instead of divided',
    file: 'src/tasks/sampling.cpp', from: ') / p_.temperature', to: ') * p_.temperature', count: 2,
    tests: ['sampler: frequencies follow softmax(l / T) over the tokens top-k, top-p and min-p keep'] },
  { name: 'top-p-drops-crossing-token', why: 'top-p keeps only the tokens strictly inside p, not the one that crosses it',
    file: 'src/tasks/sampling.cpp', from: 'keep = i + 1;', to: 'keep = std::max<size_t>(i, 1);',
    tests: ['sampler: frequencies follow softmax(l / T) over the tokens top-k, top-p and min-p keep'] },
  { name: 'min-p-absolute', why: 'min-p compared with the probability itself, not relative to the top token',
    file: 'src/tasks/sampling.cpp', from: 'prob_[keep - 1] < double(p_.min_p) * prob_[0]', to: 'prob_[keep - 1] < double(p_.min_p)',
    tests: ['sampler: frequencies follow softmax(l / T) over the tokens top-k, top-p and min-p keep'] },
  { name: 'stop-hold-back-off', why: 'streamed text not held back while it could still grow into a stop string',
    file: 'src/tasks/generation.cpp', from: 'if (!final)', to: 'if (false && !final)',
    tests: ['generation: a stop string across token boundaries is held back while it may still match, then cut'] },
  { name: 'logprob-unnormalised', why: 'a token\'s log-probability is its raw logit',
    file: 'src/tasks/generation.cpp', from: 'raw) - lse;', to: 'raw);',
    tests: ['generation: greedy equals the reference continuation'] },
  { name: 'screen-approximate-choice', why: 'a screened greedy step chooses on the output layer\'s approximate logits',
    file: 'src/tasks/generation.cpp', from: 'screen_->exact(hidden_.data(), std::span<float>(approx_.data(), size_t(V)), l, [&](std::span<float> v) { exclude(v); });',
    to: 'std::copy(approx_.begin(), approx_.begin() + V, l.begin());',
    tests: ["generation: greedy steps without scores screen the output layer: the full logits' tokens; log-probs with output_scores only"] },
  { name: 'screen-under-repetition-penalty', why: 'greedy steps with a repetition penalty (which moves logits) take the screen',
    file: 'src/tasks/generation.cpp', from: ' && p.sampling.repetition_penalty == 1.0f;', to: ';',
    tests: ["generation: greedy steps without scores screen the output layer: the full logits' tokens; log-probs with output_scores only"] },
  { name: 'screen-bound-without-activation-error', why: 'the screen\'s bound leaves out the activations\' quantization error',
    file: 'src/nn/head-screen.cpp', from: 'm.beta = float((err + gamma * (2 * norm + err)) * room);', to: 'm.beta = float(gamma * 2 * norm * room);',
    tests: ["The output layer's screen picks the full layer's arg-max, within a bound that holds for every row"] },
  { name: 'fill-mask-target-last-piece', why: 'a target of several word pieces scored by its last piece',
    file: 'src/tasks/fill-mask.cpp', from: 'target_ids.push_back(tid[0]);', to: 'target_ids.push_back(tid.back());',
    tests: ['fill-mask: targets, and clear errors'] },
  { name: 'f16-subnormal-flush', why: 'f16 → f32 flushes subnormals to zero (tiny q8_0 scales become 0)',
    file: 'src/core/half.h', from: '    } else {\n        float f;', to: '    } else if (em < 0x400) {\n        bits = sign;\n    } else {\n        float f;',
    tests: ['f16 and bf16 conversions are exact round trips'] },
  // more of the same kind
  { name: 'q8-scale-subnormal-flush', why: 'the integer paths\' own f16 block-scale conversion (half1) flushes subnormals',
    file: 'src/kernels/half4.h', from: 'scaled = em << 13;', to: 'scaled = (h & 0x7c00) ? em << 13 : 0u;',
    tests: ['matmul on ggml\'s q8_0 and q4_0 rows equals f32 matmul on their reference dequantization'] },
  { name: 'gelu-erf-as-tanh', why: 'BERT\'s "gelu" (erf) computed as the tanh approximation',
    file: 'src/nn/hparams.cpp', from: 'if (name == "gelu") return activation::gelu_erf;', to: 'if (name == "gelu") return activation::gelu_tanh;',
    tests: ['BERT matches the reference layer by layer'] },
  { name: 'layer-norm-eps-outside-sqrt', why: 'layer norm divides by sqrt(var) + eps instead of sqrt(var + eps)',
    file: 'src/kernels/rowwise.cpp', from: '1.0f / std::sqrt(var / float(n) + eps)', to: '1.0f / (std::sqrt(var / float(n)) + eps)',
    tests: ['GPT-2 matches the reference, and KV-cache decoding equals the full forward'] },
  { name: 'repetition-penalty-one-sided', why: 'repetition penalty divides negative logits too (raising them)',
    file: 'src/tasks/sampling.cpp', from: 'l = l > 0 ? l / p_.repetition_penalty : l * p_.repetition_penalty;', to: 'l = l / p_.repetition_penalty;',
    tests: ['sampler: top-k, top-p, min-p, penalties and NaN'] },
  { name: 'softmax-masked-not-zero', why: 'softmax\'s exponential clamps −inf scores to e^−87 instead of giving them weight 0',
    file: 'src/kernels/rowwise.cpp', from: 'return xsimd::select(a < B(-87.0f), B(0.0f), exp_clamped(a));', to: 'return exp_clamped(a);',
    tests: ['activations and softmax match their twins beyond their exponential\'s clamps'] },
  { name: 'q8-round-half-toward-zero', why: 'q8_0 quantization rounds halves toward zero (ggml rounds them away from zero)',
    file: 'src/kernels/rowwise.cpp', from: 'xsimd::trunc(xsimd::abs(v) + B(0.49999997f))', to: 'xsimd::ceil(xsimd::abs(v) - B(0.5f))',
    tests: ['q8_0 and q4_0 blocks quantize and dequantize bit for bit as ggml\'s reference, subnormal scales included'] },
  { name: 'q8-round-plus-half', why: 'q8_0 quantization adds a plain 0.5 before truncating (0.5 − 2^-25 rounds up to 1)',
    file: 'src/kernels/rowwise.cpp', from: 'xsimd::abs(v) + B(0.49999997f)', to: 'xsimd::abs(v) + B(0.5f)',
    tests: ['q8_0 quantization rounds halves away from zero, as ggml\'s roundf'] },
  { name: 'q5k-int8-fifth-bit', why: 'the int8 decode GEMV moves Q5_K\'s fifth bit of the high nibbles one place too far',
    file: 'src/kernels/quants-gemv.cpp', from: 'shl16(h[i], 3 - 2 * c)', to: 'shl16(h[i], 4 - 2 * c)',
    tests: ['The integer GEMV equals its scalar twin bit for bit on every block type, in both forms'] },
  { name: 'grouped-q5_0-fifth-bit', why: 'grouped q5_0\'s GEMV takes a row\'s fifth bits of elements 16–31 from those of elements 0–15',
    file: 'src/kernels/quants-gemv.cpp', from: 'fifth_bit(H, 2 * j + 1)', to: 'fifth_bit(H, 2 * j)',
    tests: ['q8_0, q4_0, q5_0, iq4_nl and q4_K rows grouped by 4 give the same results bit for bit as the rows as stored, on every path'] },
  { name: 'decode-attention-small-weights', why: 'the decode attention\'s P·V skips the keys whose weight is below 1e-3 as it skips masked ones',
    file: 'src/kernels/attention.cpp', from: 'if (*p == 0.0f) continue;', to: 'if (*p < 1e-3f) continue;',
    tests: ['attention matches a naive reference with padding and causal masks'] },
  // the encoder families and pipelines (issue 15)
  { name: 'roberta-positions-from-zero', why: 'RoBERTa\'s positions counted from 0 instead of padding_idx + 1',
    file: 'src/models/roberta.cpp', from: '    hp.position_offset = hp.pad_token_id + 1;', to: '    hp.position_offset = 0;',
    tests: ['BERT-family encoders match the reference: ids, every layer, every head, on a padded batch'] },
  { name: 'qa-cls-outside-softmax', why: 'question answering leaves [CLS] out of the softmax (Hugging Face keeps it in, then zeroes it)',
    file: 'src/tasks/encoder-tasks.cpp', from: 'm.sequence[size_t(t)] == 1 || m.ids[size_t(t)] == tok.special().cls;', to: 'm.sequence[size_t(t)] == 1;',
    tests: ['encoder pipelines give the reference pipelines\' outputs (Hugging Face\'s post-processing)'] },
  { name: 'ner-subword-by-space', why: 'WordPiece subwords told by the space before them (the BPE heuristic) instead of their "##"',
    file: 'src/tasks/encoder-tasks.cpp', from: 'const bool prefixed = !tok.is_byte_level();', to: 'const bool prefixed = false;',
    tests: ['encoder pipelines give the reference pipelines\' outputs (Hugging Face\'s post-processing)'] },
  { name: 'pair-extra-token-to-first', why: 'pairs cut to the positions give the odd token to the first text, not the longer',
    file: 'src/tasks/encoder-tasks.cpp', from: 'nx = swap ? n2 : n1, ny = swap ? n1 : n2;', to: 'nx = std::max(n1, n2), ny = std::min(n1, n2);',
    tests: ['text pairs are cut to the positions as Hugging Face\'s tokenizers cut them (longest_first, only_first)'] },
  { name: 'last-layer-rows-cross-sequences', why: 'the last layer at the rows a task reads gives a sequence\'s queries the next sequence\'s first row too',
    file: 'src/models/bert.cpp', from: 'in.out_rows[size_t(r1)] < (b + 1) * T', to: 'in.out_rows[size_t(r1)] <= (b + 1) * T',
    tests: ['the last layer at the rows a task reads (batch.out_rows): those rows as the reference\'s, on a padded batch'] },
];

function restoreSaved(interrupted = false) {
  if (!existsSync(saved)) return;
  const { file, text } = JSON.parse(readFileSync(saved, 'utf8'));
  writeFileSync(path.join(root, file), text);
  rmSync(saved);
  if (interrupted) console.log(`mutants: restored ${file}, left mutated by an interrupted run`);
}

function rebuild() {
  const r = spawnSync('cmake', ['--build', build, '--target', 'wf-tests', '-j', '2'], { encoding: 'utf8' });
  return r.status === 0 ? null : (r.stdout + r.stderr).split('\n').filter((l) => /error/.test(l)).slice(0, 3).join('\n');
}

// Catch2 stops at the first failing test case (-a): a mutant is killed by one failure.
function suite(args) {
  const r = spawnSync(path.join(build, 'wf-tests'), ['-a', '-r', 'xml', ...args], { encoding: 'utf8', timeout: 300_000, maxBuffer: 1 << 28 });
  const failed = [...(r.stdout ?? '').matchAll(/<TestCase name="([^"]*)"[\s\S]*?<OverallResult success="(true|false)"/g)].filter((x) => x[2] === 'false').map((x) => x[1]);
  return { status: r.status, signal: r.signal, failed };
}

// A test-name file for Catch2's -f: one name a line, its pattern characters escaped.
function hintFile(m) {
  const file = path.join(root, 'build/mutants/tests.txt');
  writeFileSync(file, m.tests.map((t) => t.replace(/[\\,[\]*"~]/g, (c) => `\\${c}`)).join('\n') + '\n');
  return file;
}

function checkTests(chosen) {
  const r = spawnSync(path.join(build, 'wf-tests'), ['--list-test-names-only'], { encoding: 'utf8', maxBuffer: 1 << 24 });
  const names = new Set(r.stdout.split('\n').map((l) => l.trim()));
  for (const m of chosen) {
    if (!m.tests?.length) throw new Error(`mutant ${m.name}: no tests listed`);
    for (const t of m.tests) if (!names.has(t)) throw new Error(`mutant ${m.name}: the suite has no test case "${t}"; update the mutant`);
  }
}

function main() {
  restoreSaved(true);
  for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => { restoreSaved(); process.exit(130); });
  process.on('exit', restoreSaved);
  const names = process.argv.slice(2);
  // headers last: restoring one rebuilds every file that includes it, which the next mutant would wait for
  const chosen = (names.length ? mutants.filter((m) => names.includes(m.name)) : [...mutants]).sort((a, b) => a.file.endsWith('.h') - b.file.endsWith('.h'));
  if (names.length && chosen.length !== names.length) throw new Error(`unknown mutant; known: ${mutants.map((m) => m.name).join(', ')}`);
  if (!existsSync(path.join(build, 'CMakeCache.txt'))) execFileSync('bash', ['scripts/build.sh', 'native'], { cwd: root, stdio: 'inherit' });
  mkdirSync(path.dirname(saved), { recursive: true });
  const first = rebuild();
  if (first) throw new Error(`the unmutated tree does not build: ${first}`);
  checkTests(chosen);
  const results = [];
  for (const m of chosen) {
    const file = path.join(root, m.file);
    const text = readFileSync(file, 'utf8');
    const found = text.split(m.from).length - 1;
    if (found !== (m.count ?? 1))
      throw new Error(`mutant ${m.name}: "${m.from}" occurs ${found} times in ${m.file}, expected ${m.count ?? 1}; update the mutant`);
    writeFileSync(saved, JSON.stringify({ file: m.file, text }));
    writeFileSync(file, text.split(m.from).join(m.to));
    const t0 = Date.now();
    let outcome, detail = '';
    const err = rebuild();
    if (err) {
      outcome = 'does not compile';
      detail = err;
    } else {
      // the test cases that killed it before first; the whole suite only if they no longer do
      let run = suite(['-f', hintFile(m)]);
      const whole = run.status === 0;
      if (whole) run = suite([]);
      outcome = run.status === 0 ? 'SURVIVED' : 'killed';
      detail = run.failed.length ? run.failed.join(' | ') + (whole ? ' (not one of its listed tests: update them)' : '')
        : run.status === 0 ? '' : `exit ${run.status ?? run.signal}`;
    }
    restoreSaved();
    results.push({ ...m, outcome });
    console.log(`${outcome === 'killed' ? 'killed  ' : outcome.padEnd(8)} ${m.name} (${((Date.now() - t0) / 1000).toFixed(0)} s): ${m.why}${detail ? `\n         failing: ${detail}` : ''}`);
  }
  const err = rebuild();  // the unmutated library and tests again
  if (err) throw new Error(`the restored tree does not build: ${err}`);
  const bad = results.filter((r) => r.outcome !== 'killed');
  console.log(`mutants: ${results.length - bad.length} of ${results.length} killed by the suite${bad.length ? `; not killed: ${bad.map((b) => `${b.name} (${b.outcome})`).join(', ')}` : ''}`);
  process.exitCode = bad.length ? 1 : 0;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
