// The package as users get it: `npm pack` of the runtime and of the default-models workspace, installed into a
// fresh folder from the tarballs alone (offline), as an app would.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { root } from './helpers.mjs';

let packed = null;
// → { dir, runtime, models }: the two tarballs (made once per test process)
export function pack() {
  if (packed) return packed;
  const dir = mkdtempSync(path.join(tmpdir(), 'wasmformer-pack-'));
  execFileSync('npm', ['pack', '--ignore-scripts', '--pack-destination', dir], { cwd: root, stdio: 'ignore' });
  execFileSync('npm', ['pack', '--ignore-scripts', '--pack-destination', dir], { cwd: path.join(root, 'packages/models'), stdio: 'ignore' });
  const find = (re) => path.join(dir, readdirSync(dir).find((f) => re.test(f)));
  packed = { dir, runtime: find(/^wasmformer-\d/), models: find(/^wasmformer-models-/) };
  return packed;
}

// A fresh app: `from` (an example folder) copied, or an empty package; both tarballs installed offline.
export function freshApp(name, from = null) {
  const { dir, runtime, models } = pack();
  const app = path.join(dir, name);
  if (from) {
    cpSync(from, app, { recursive: true, filter: (s) => !/node_modules|[\\/]dist$/.test(s) });
    // The example's bundler is the repository's own (on PATH through toolsEnv): an offline install cannot resolve
    // devDependencies from the registry on a fresh machine (ENOTCACHED, even with --omit=dev), so they are dropped.
    const pj = path.join(app, 'package.json');
    const manifest = JSON.parse(readFileSync(pj, 'utf8'));
    delete manifest.devDependencies;
    writeFileSync(pj, JSON.stringify(manifest, null, 2));
  } else {
    execFileSync('mkdir', ['-p', app]);
    writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name, private: true, type: 'module' }));
  }
  execFileSync('npm', ['install', '--offline', '--no-audit', '--no-fund', '--omit=dev', runtime, models], { cwd: app, stdio: 'ignore' });
  return app;
}

// PATH with the repository's bundlers (vite, webpack, esbuild, tsc), for an example's own build script
export const toolsEnv = () => ({ ...process.env, PATH: `${path.join(root, 'node_modules/.bin')}${path.delimiter}${process.env.PATH}` });
