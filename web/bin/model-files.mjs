#!/usr/bin/env node
// wasmformer-files FOLDER…: writes FOLDER/model-files.json, the list of a model folder's files and their sizes.
// Served with the folder, it lets wasmformer load the model without asking the server for files that may not be
// there (no 404s in the console, and no HTML page mistaken for a file on hosts that answer every path).
import { readdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const MANIFEST = 'model-files.json';

// { files: { name: size } } for the regular files of a folder (the manifest itself left out), sorted by name.
export function listing(dir) {
  const files = {};
  for (const name of readdirSync(dir).sort())
    if (name !== MANIFEST && !name.startsWith('.') && statSync(path.join(dir, name)).isFile()) files[name] = statSync(path.join(dir, name)).size;
  return { files };
}

export function writeListing(dir) {
  const m = listing(dir);
  writeFileSync(path.join(dir, MANIFEST), JSON.stringify(m, null, 2) + '\n');
  return m;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const dirs = process.argv.slice(2);
  if (!dirs.length) {
    console.error('usage: wasmformer-files FOLDER…  (writes FOLDER/model-files.json)');
    process.exit(2);
  }
  for (const d of dirs) console.log(`${path.join(d, MANIFEST)}: ${Object.keys(writeListing(d).files).length} files`);
}
