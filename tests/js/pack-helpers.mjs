// The package as users get it: `npm pack` of the runtime and of the default-models workspace, installed into a
// fresh folder from the tarballs alone (offline), as an app would.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { root } from './helpers.mjs';

let packed = null;
// → { dir, runtime, models, deps }: the two tarballs, and `deps`, tarballs of the runtime's own dependencies
// (made once per test process).
// An offline install must resolve the runtime's dependencies (@huggingface/jinja) without the registry. `npm ci`
// on a fresh machine caches their tarballs but not their registry documents (packuments), so `npm install
// --offline` of the runtime alone fails there with ENOTCACHED (it passed only where some earlier `npm install` had
// cached them). They are packed from the repository's node_modules instead — the versions package-lock.json
// pins — and installed beside the runtime, where the runtime's ranges must accept them (else npm would ask the
// registry, and the install fails).
export function pack() {
  if (packed) return packed;
  const dir = mkdtempSync(path.join(tmpdir(), 'wasmformer-pack-'));
  execFileSync('npm', ['pack', '--ignore-scripts', '--pack-destination', dir], { cwd: root, stdio: 'ignore' });
  execFileSync('npm', ['pack', '--ignore-scripts', '--pack-destination', dir], { cwd: path.join(root, 'packages/models'), stdio: 'ignore' });
  const find = (re) => path.join(dir, readdirSync(dir).find((f) => re.test(f)));
  const depsDir = path.join(dir, 'deps');
  mkdirSync(depsDir);
  const seen = new Set();
  const packDeps = (manifest) => {
    for (const name of Object.keys(manifest.dependencies ?? {})) {
      if (seen.has(name)) continue;
      seen.add(name);
      const where = path.join(root, 'node_modules', name);
      execFileSync('npm', ['pack', '--ignore-scripts', '--pack-destination', depsDir], { cwd: where, stdio: 'ignore' });
      packDeps(JSON.parse(readFileSync(path.join(where, 'package.json'), 'utf8')));
    }
  };
  packDeps(JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')));
  const deps = readdirSync(depsDir).map((f) => path.join(depsDir, f));
  packed = { dir, runtime: find(/^wasmformer-\d/), models: find(/^wasmformer-models-/), deps };
  return packed;
}

// A fresh app: `from` (an example folder) copied, or an empty package; both tarballs (and the runtime's
// dependencies, see pack) installed offline. withModels = false: the runtime alone, its optional wasmformer-models
// left out.
export function freshApp(name, from = null, { withModels = true } = {}) {
  const { dir, runtime, models, deps } = pack();
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
    mkdirSync(app, { recursive: true });
    writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name, private: true, type: 'module' }));
  }
  const packages = withModels ? [runtime, models, ...deps] : [runtime, ...deps];
  execFileSync('npm', ['install', '--offline', '--no-audit', '--no-fund', withModels ? '--omit=dev' : '--omit=optional', ...packages], { cwd: app, stdio: 'ignore' });
  return app;
}

// PATH with the repository's bundlers (vite, webpack, esbuild, tsc), for an example's own build script
export const toolsEnv = () => ({ ...process.env, PATH: `${path.join(root, 'node_modules/.bin')}${path.delimiter}${process.env.PATH}` });
