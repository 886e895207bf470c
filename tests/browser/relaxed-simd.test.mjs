// Relaxed SIMD in Chromium. The kernel tests (C++, Catch2's [kernels], less the two that read ggml's reference files)
// run in a page from the plain .wasm and from its relaxed-SIMD twin (scripts/relax-wasm.mjs): every SIMD kernel
// against its scalar twin, the relaxed int8 tile (matmul_q7) included, and each instance says which it is. Node 20 cannot run them: behind its flag it still
// computes the proposal's early dot product. Then the package as users load it: the relaxed build where Chromium
// runs relaxed SIMD, the plain one on request, with fill-mask results that agree within the 7-bit rounding.
import assert from 'node:assert/strict';
import { fork } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';

import { root } from '../js/helpers.mjs';
import { launch, watch } from './helpers.mjs';

let browser, server, port;
before(async () => {
  browser = await launch();
  server = fork(path.join(root, 'scripts/serve.mjs'), ['--port', '0', '--quiet'], { stdio: 'ignore' });
  port = await new Promise((resolve, reject) => {
    server.once('message', (m) => resolve(m.port));
    server.once('exit', (c) => reject(new Error(`server exited with ${c}`)));
  });
});
after(async () => {
  await browser?.close();
  server?.kill();
});

async function openPage() {
  const context = await browser.newContext();
  const page = await context.newPage();
  const problems = await watch(context, page, (u) => u.hostname === '127.0.0.1' || u.protocol === 'blob:' || u.protocol === 'data:');
  await page.goto(`http://127.0.0.1:${port}/tests/browser/pages/api.html`);
  await page.waitForSelector('body[data-ready="true"]', { state: 'attached' });
  return { page, problems, close: () => context.close() };
}

const supported = async (page) => page.evaluate(async () => (await import('/web/src/features.js')).relaxedSimdSupported());

for (const relaxed of [false, true]) {
  test(`the kernel tests pass in Chromium from the ${relaxed ? 'relaxed-SIMD' : 'plain'} .wasm`, { timeout: 600000 }, async (t) => {
    const wasm = `build/wasm/wf-kernel-tests-web${relaxed ? '-relaxed' : ''}.wasm`;
    assert.ok(existsSync(path.join(root, wasm)), `${wasm} is missing: run scripts/build.sh wasm`);
    const { page, problems, close } = await openPage();
    try {
      if (relaxed && !(await supported(page))) return t.skip(`this Chromium (${browser.version()}) does not run relaxed SIMD`);
      const run = await page.evaluate(async ({ wasm, relaxed }) => {
        const { default: create } = await import('/build/wasm/wf-kernel-tests-web.mjs');
        const wasmBinary = await (await fetch('/' + wasm)).arrayBuffer();
        const lines = [];
        return new Promise((resolve) => {
          create({
            wasmBinary, arguments: ["[kernels]~*ggml's*", '--use-colour', 'no'], print: (l) => lines.push(l), printErr: (l) => lines.push(l),
            preRun: [(M) => { M.ENV.WF_EXPECT_RELAXED = relaxed ? '1' : '0'; }],
            onExit: (code) => resolve({ code, out: lines.join('\n') }),
          }).catch((e) => resolve({ code: -1, out: `${lines.join('\n')}\n${e?.message ?? e}` }));
        });
      }, { wasm, relaxed });
      assert.equal(run.code, 0, run.out.slice(-4000));
      assert.match(run.out, /All tests passed \(\d+ assertions in \d+ test cases\)/);
      assert.deepEqual(problems, []);
    } finally {
      await close();
    }
  });
}

// Runs in the page: q8_0 fill-mask with the package's default build choice, or with relaxedSimd as given.
async function fillQ8(relaxedSimd) {
  const { FillMask } = window.wasmformer;
  const fm = await FillMask.load('/models/wasmformer-bert-mini/', { dtype: 'q8_0', threads: 1, cache: false, relaxedSimd });
  // more than 16 tokens: the integer tile's rows (fewer take the integer GEMV, the same in both builds)
  const r = await fm.fill('In the beginning God created the heaven and the earth. And God said, Let there be [MASK]: and there was light.', { top_k: 5 });
  const info = await fm.engineInfo();
  await fm.dispose();
  return { results: r.results[0], simd: info.simd };
}

test('the package loads the relaxed-SIMD build where Chromium runs it; q8_0 fill-mask agrees with the plain build', { timeout: 300000 }, async (t) => {
  const { page, problems, close } = await openPage();
  try {
    if (!(await supported(page))) return t.skip(`this Chromium (${browser.version()}) does not run relaxed SIMD`);
    const auto = await page.evaluate(fillQ8, undefined);
    const plain = await page.evaluate(fillQ8, false);
    assert.equal(auto.simd, 'relaxed');
    assert.equal(plain.simd, 'simd128');
    assert.equal(auto.results.length, 5);
    assert.equal(auto.results[0].token_str, plain.results[0].token_str);
    for (const r of auto.results) {
      const p = plain.results.find((q) => q.token === r.token);
      // 7-bit activations move this small model's probabilities by a spread of about 0.02: "light" differed by 0.016,
      // then by 0.020 after GELU's erf changed by ~1e-7 (2026-11-29; the plain build's score moved 0.0016)
      if (p) assert.ok(Math.abs(p.score - r.score) < 0.04, `${r.token_str}: ${r.score} relaxed, ${p.score} plain`);
    }
    assert.deepEqual(problems, []);
  } finally {
    await close();
  }
});
