// `npm start`: builds the wasm engine if it is missing, then serves the repository on localhost with the headers
// the demo wants: COOP/COEP (cross-origin isolation, so threads can be used) and a strict Content-Security-Policy
// (no eval: the engine runs under script-src 'self' 'wasm-unsafe-eval').
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, createReadStream, readFileSync, statSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const port = Number(args[args.indexOf('--port') + 1] || process.env.PORT || 8080);
const isolation = !args.includes('--no-isolation');
const quiet = args.includes('--quiet');

if (!['dist/wasmformer.wasm', 'dist/wasmformer-mt.wasm'].every((f) => existsSync(path.join(root, f)))) {
  console.log('building the wasm engine (first run)…');
  execFileSync('bash', [path.join(root, 'scripts/build.sh'), 'wasm'], { stdio: 'inherit' });
}

const types = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.mjs': 'text/javascript', '.css': 'text/css',
  '.json': 'application/json', '.wasm': 'application/wasm', '.txt': 'text/plain; charset=utf-8', '.png': 'image/png', '.svg': 'image/svg+xml' };

// The demo's inline import map (it maps @huggingface/jinja) is allowed by its hash, and no other inline script.
const importMap = readFileSync(path.join(root, 'web/demo/index.html'), 'utf8').match(/<script type="importmap">([\s\S]*?)<\/script>/)?.[1];
const importMapHash = importMap ? ` 'sha256-${createHash('sha256').update(importMap).digest('base64')}'` : '';
export const CSP = `default-src 'self'; script-src 'self' 'wasm-unsafe-eval'${importMapHash}; worker-src 'self'; style-src 'self'; img-src 'self' data:; ` +
  "connect-src 'self' https://huggingface.co https://*.huggingface.co https://*.hf.co; object-src 'none'; base-uri 'none'";

const server = http.createServer((req, res) => {
  const url = new URL(req.url, 'http://localhost');
  if (url.pathname === '/') {
    res.writeHead(302, { location: '/web/demo/' });
    return res.end();
  }
  let file = path.join(root, decodeURIComponent(url.pathname));
  if (!file.startsWith(root + path.sep)) {
    res.writeHead(403);
    return res.end();
  }
  if (existsSync(file) && statSync(file).isDirectory()) file = path.join(file, 'index.html');
  if (!existsSync(file) || !statSync(file).isFile()) {
    res.writeHead(404, { 'content-type': 'text/plain' });
    return res.end('not found');
  }
  const headers = { 'content-type': types[path.extname(file)] ?? 'application/octet-stream', 'content-length': statSync(file).size,
    'content-security-policy': CSP, 'cache-control': 'no-cache', 'cross-origin-resource-policy': 'same-origin' };
  if (isolation) Object.assign(headers, { 'cross-origin-opener-policy': 'same-origin', 'cross-origin-embedder-policy': 'require-corp' });
  res.writeHead(200, headers);
  if (req.method === 'HEAD') return res.end();
  createReadStream(file).pipe(res);
});

server.listen(port, '127.0.0.1', () => {
  if (!quiet) console.log(`wasmformer demo: http://127.0.0.1:${server.address().port}/web/demo/`);
  process.send?.({ port: server.address().port });
});
