// `node bench/ab-builds.mjs ROOT_A ROOT_B [--rounds N] [--env node|chromium] [--threads N]`: two builds of the engine in one process,
// alternating (A B, then B A, …), on the engine alone — what a change to the engine bought, without a peer:
// text-classification of one 32-token text (DistilBERT-base), fill-mask at 128 tokens (BERT-base; f32 and q8_0), and a 128-token
// GPT-2 small prompt + one token in f32, at q8_0 and q4_k (and on SmolLM2-135M's shape in Q4_K_M), an 8-token prompt + 32 greedy tokens in f32, at q8_0, q4_0 and q4_k (decode) and on SmolLM2-135M's shape at q8_0 and in Q4_K_M (its GGUFs), 32 q4_0 tokens after a 600-token prompt (the steps alone), Marian (opus-mt-en-de shape) translating npm run bench's sentence, greedy and 4 beams, f32, and npm run bench's embed (32 texts × 64 tokens, all-MiniLM-L6-v2's shape) and qa (384 tokens, DistilBERT-base's) rows (bench/ab-work.mjs). ROOT_A and ROOT_B are checkouts whose dist/
// holds a build (`npm run build:wasm`, or only `cmake --build build/wasm --target wasmformer-js` and its
// wasmformer.mjs / .wasm copied over another dist/); each needs node_modules (a symlink to this checkout's will do).
// Models from build/bench-models (npm run bench makes them). worker: false, threads: 1 (--threads N: N, Node only), cache: false. --env chromium
// runs both in one page of headless Chromium (bench/ab-page.html; relaxed SIMD where Chromium has it — the line
// printed says which each build ran); Node 20 runs SIMD128 only. Prints the median and quartiles of each, per build, and of B's time over A's
// per round. WF_AB_ONLY=marian,decode times only the workloads whose names contain one of those words (and
// fill-mask, which reports the SIMD build), after loading every model as before.
//   git worktree add /tmp/base HEAD~1 && …build there… && node bench/ab-builds.mjs /tmp/base . --env chromium
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { createReadStream, existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { compare, quantile as q } from './ab-work.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
let rounds = 6, env = 'node', threads = 1;
const roots = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--rounds') rounds = Number(args[++i]);
  else if (args[i] === '--env') env = args[++i];
  else if (args[i] === '--threads') threads = Number(args[++i]);
  else roots.push(path.resolve(args[i]));
}
if (roots.length !== 2 || !(Number.isInteger(rounds) && rounds >= 1) || !['node', 'chromium'].includes(env) ||
    !(Number.isInteger(threads) && threads >= 1) || (threads > 1 && env !== 'node')) {
  console.error('usage: node bench/ab-builds.mjs ROOT_A ROOT_B [--rounds N] [--env node|chromium] [--threads N (Node)]');
  process.exit(2);
}
const names = ['A', 'B'];
const opts = { worker: false, threads, cache: false };

const { ms, simd } = env === 'node'
  ? await compare({ A: await import(path.join(roots[0], 'web/src/index.node.js')), B: await import(path.join(roots[1], 'web/src/index.node.js')) },
    (m) => path.join(root, 'build/bench-models', m), opts, rounds)
  : await inChromium();

for (const [i, name] of names.entries()) {
  console.log(`${name} (${roots[i]}, ${env}, ${simd[i]}):`);
  for (const [k, a] of Object.entries(ms[name]))
    console.log(`  ${k.padEnd(10)} median ${q(a, 0.5).toFixed(1)} ms (quartiles ${q(a, 0.25).toFixed(1)}–${q(a, 0.75).toFixed(1)}, ${a.length} runs)`);
}
// each round's B / A (the two ran next to each other: a machine that changes pace between rounds cancels out)
console.log('B / A, per round:');
for (const k of Object.keys(ms.A)) {
  const r = ms.A[k].map((a, i) => ms.B[k][i] / a);
  console.log(`  ${k.padEnd(10)} median ${q(r, 0.5).toFixed(3)} (quartiles ${q(r, 0.25).toFixed(3)}–${q(r, 0.75).toFixed(3)})`);
}

// /a/… and /b/… from the two roots, everything else from this checkout; cross-origin isolated as the bench's page is
async function inChromium() {
  const types = { '.html': 'text/html', '.js': 'text/javascript', '.mjs': 'text/javascript', '.wasm': 'application/wasm', '.json': 'application/json' };
  const server = http.createServer((req, res) => {
    const url = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    const m = /^\/([ab])(\/.*)$/.exec(url);
    const base = m ? roots[m[1] === 'a' ? 0 : 1] : root;
    const file = path.join(base, m ? m[2] : url);
    if (!file.startsWith(base + path.sep) || !existsSync(file) || !statSync(file).isFile()) {
      res.writeHead(404);
      return res.end();
    }
    res.writeHead(200, { 'content-type': types[path.extname(file)] ?? 'application/octet-stream', 'content-length': statSync(file).size,
      'cross-origin-opener-policy': 'same-origin', 'cross-origin-embedder-policy': 'require-corp', 'cache-control': 'no-store' });
    if (req.method === 'HEAD') return res.end();
    createReadStream(file).pipe(res);
  });
  await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
  const { chromium } = await import('playwright-core');
  const profile = mkdtempSync(path.join(os.tmpdir(), 'wf-ab-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium', headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update'],
  });
  try {
    const page = context.pages()[0] ?? (await context.newPage());
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`http://127.0.0.1:${server.address().port}/bench/ab-page.html`);
    await page.waitForFunction(() => window.abReady, null, { timeout: 60000 }).catch(() => { throw new Error(`ab-page.html did not start: ${errors.join('; ')}`); });
    page.setDefaultTimeout(0);
    return await page.evaluate(([r, o, only]) => ((globalThis.WF_AB_ONLY = only), window.abRun(r, o)), [rounds, opts, process.env.WF_AB_ONLY ?? null]);
  } finally {
    await context.close();
    server.close();
    rmSync(profile, { recursive: true, force: true });
  }
}
