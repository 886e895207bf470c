#!/usr/bin/env node
// wasmformer-files FOLDER…: writes FOLDER/model-files.json, the list of a model folder's files and their sizes
// (`npx wasmformer-files public/models/my-model` where the package is installed).
// Served with the folder, it lets wasmformer load the model without asking the server for files that may not be
// there (no 404s in the console, and no HTML page mistaken for a file on hosts that answer every path).
import { readdirSync, realpathSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const MANIFEST = 'model-files.json';

// { files: { name: size } } for the regular files of a folder (the manifest itself and hidden files left out) and of its
// subfolders one level down, as "1_Pooling/config.json" (sentence-transformers folders), sorted by name.
export function listing(dir) {
  const found = [];
  for (const name of readdirSync(dir)) {
    if (name === MANIFEST || name.startsWith('.')) continue;
    const st = statSync(path.join(dir, name));
    if (st.isFile()) found.push([name, st.size]);
    else if (st.isDirectory())
      for (const sub of readdirSync(path.join(dir, name))) {
        const f = !sub.startsWith('.') && statSync(path.join(dir, name, sub));
        if (f && f.isFile()) found.push([`${name}/${sub}`, f.size]);
      }
  }
  found.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return { files: Object.fromEntries(found) };
}

export function writeListing(dir) {
  const m = listing(dir);
  writeFileSync(path.join(dir, MANIFEST), JSON.stringify(m, null, 2) + '\n');
  return m;
}

// run as a command: directly, or through the package's bin link (node_modules/.bin/wasmformer-files, a symlink)
if (process.argv[1] && realpathSync(path.resolve(process.argv[1])) === realpathSync(fileURLToPath(import.meta.url))) {
  const dirs = process.argv.slice(2);
  if (!dirs.length) {
    console.error('usage: wasmformer-files FOLDER…  (writes FOLDER/model-files.json)');
    process.exit(2);
  }
  for (const d of dirs) console.log(`${path.join(d, MANIFEST)}: ${Object.keys(writeListing(d).files).length} files`);
}
