// The examples as users build them: each is copied into a fresh folder, the packed tarballs are installed in it,
// it is built by its bundler with default settings (Vite, webpack, esbuild) or served as it is (no bundler), and
// run in Chromium from a server that answers every unknown path with index.html (as Vite's servers and many
// static hosts do). The page must show the default models' answers with no error, failed request or 404.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { after, before, test } from 'node:test';

import { root } from '../js/helpers.mjs';
import { freshApp, toolsEnv } from '../js/pack-helpers.mjs';
import { launch, watch } from './helpers.mjs';

const types = { '.html': 'text/html', '.js': 'text/javascript', '.mjs': 'text/javascript', '.wasm': 'application/wasm', '.json': 'application/json' };

// Serves dir; a path that is no file gets index.html with 200 (the "SPA fallback"). isolated: COOP/COEP headers,
// so the page may use threads.
async function spaServer(dir, { isolated = false } = {}) {
  const seen = [];
  const server = http.createServer((req, res) => {
    const p = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    let file = path.join(dir, p);
    seen.push(`${req.method} ${p}`);
    if (!file.startsWith(dir) || !existsSync(file) || !statSync(file).isFile()) file = path.join(dir, 'index.html');
    const body = readFileSync(file);
    const isolation = isolated ? { 'cross-origin-opener-policy': 'same-origin', 'cross-origin-embedder-policy': 'require-corp' } : {};
    res.writeHead(200, { 'content-type': types[path.extname(file)] ?? 'application/octet-stream', 'content-length': body.length, ...isolation });
    res.end(req.method === 'HEAD' ? undefined : body);
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${server.address().port}/`, seen, close: () => new Promise((r) => { server.closeAllConnections?.(); server.close(r); }) };
}

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

const EXAMPLES = [
  { name: 'vite', out: 'dist' },
  // imports the three default models it uses one by one: the others' files must not be in its build
  { name: 'webpack', out: 'dist', without: ['wasmformer-embed-mini-q8_0.gguf', 'wasmformer-chat-mini-q8_0.gguf'] },
  { name: 'esbuild', out: 'dist' },
  { name: 'no-bundler', out: '.' },
];

for (const ex of EXAMPLES) {
  test(`examples/${ex.name}: built with its defaults from the packed package, runs in Chromium`, { timeout: 300000 }, async () => {
    const app = freshApp(`app-${ex.name}`, path.join(root, 'examples', ex.name));
    const pkg = JSON.parse(readFileSync(path.join(app, 'package.json'), 'utf8'));
    if (pkg.scripts?.build) execFileSync('npm', ['run', 'build'], { cwd: app, env: toolsEnv(), stdio: 'pipe' });
    if (ex.without) {  // by content: the bundler names files as it likes
      const built = readdirSync(path.join(app, ex.out), { recursive: true }).map((f) => path.join(app, ex.out, f)).filter((f) => statSync(f).isFile());
      const sizes = new Set(built.map((f) => statSync(f).size));
      for (const f of ex.without) assert.ok(!sizes.has(statSync(path.join(root, 'packages/models', f)).size), `${ex.name}'s build has ${f}`);
      assert.ok(sizes.has(statSync(path.join(root, 'packages/models/wasmformer-bert-mini-q8_0.gguf')).size), `${ex.name}'s build lacks the fill-mask model`);
    }
    for (const isolated of [false, true]) {
    const srv = await spaServer(path.join(app, ex.out), { isolated });
    try {
      const context = await browser.newContext();
      const page = await context.newPage();
      const problems = await watch(context, page, (u) => u.hostname === '127.0.0.1' || u.protocol === 'blob:' || u.protocol === 'data:');
      page.on('requestfailed', (r) => problems.push(`request failed: ${r.method()} ${r.url()} (${r.failure()?.errorText})`));
      page.on('response', (r) => { if (r.status() >= 400) problems.push(`HTTP ${r.status()}: ${r.url()}`); });
      await page.goto(srv.url);
      await page.waitForSelector('body[data-result], body[data-error]', { state: 'attached', timeout: 180000 });
      const error = await page.getAttribute('body', 'data-error');
      assert.equal(error, null, `the page says: ${error}`);
      const r = JSON.parse(await page.getAttribute('body', 'data-result'));
      assert.match(r.fill, /^[a-z]+$/);
      assert.ok(r.text.startsWith('In the beginning') && r.text.length > 'In the beginning'.length + 5, r.text);
      assert.match(r.translation, /^Y dijo Dios\b/);  // the default translation model: a folder's files, each by its own URL
      // threads where the page is cross-origin isolated (esbuild's example picks its .wasm: one thread)
      const cores = await page.evaluate(() => navigator.hardwareConcurrency);
      assert.equal(r.threads, isolated && ex.name !== 'esbuild' ? Math.min(cores, 8) : 1, `${isolated ? 'isolated' : 'not isolated'}: ${r.threads} threads`);
      assert.deepEqual(problems, []);
      await context.close();
    } finally {
      await srv.close();
    }
    }
  });
}
