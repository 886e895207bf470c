// npm pack → install the tarball into an empty folder → import it by name and run fill-mask.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';

import { fixture, root } from './helpers.mjs';

test('the packed package installs and runs fill-mask', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'wasmformer-pack-'));
  try {
    execFileSync('npm', ['pack', '--ignore-scripts', '--pack-destination', dir], { cwd: root, stdio: 'ignore' });
    const tgz = readdirSync(dir).find((f) => f.endsWith('.tgz'));
    const listing = execFileSync('tar', ['tzf', path.join(dir, tgz)], { encoding: 'utf8' });
    assert.match(listing, /package\/dist\/wasmformer\.wasm/);
    assert.doesNotMatch(listing, /package\/(src|tests|tools|build)\//);
    const app = path.join(dir, 'app');
    execFileSync('mkdir', ['-p', app]);
    writeFileSync(path.join(app, 'package.json'), '{"name":"app","type":"module","private":true}');
    execFileSync('npm', ['install', '--no-audit', '--no-fund', '--offline', path.join(dir, tgz)], { cwd: app, stdio: 'ignore' });
    writeFileSync(path.join(app, 'run.mjs'),
      `import { pipeline } from 'wasmformer';\nconst u = await pipeline('fill-mask', ${JSON.stringify(fixture('bert-tiny'))});\n` +
      `console.log(JSON.stringify(await u('hello [MASK].', { top_k: 2 })));\n`);
    const out = JSON.parse(execFileSync('node', ['run.mjs'], { cwd: app, encoding: 'utf8' }));
    assert.equal(out.length, 2);
    assert.ok(out[0].score > 0 && typeof out[0].token_str === 'string');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
