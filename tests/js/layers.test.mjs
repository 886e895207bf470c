// The core's folders are layers with one-way includes (tools/checks/layers.mjs): the real tree passes, and the
// check itself catches an upward include, a cycle, a sideways include, xsimd outside kernels and Emscripten.
import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';

import { checkLayers, readSources } from '../../tools/checks/layers.mjs';
import { root } from './helpers.mjs';

test('src/ includes go one way, without cycles', () => {
  const files = readSources(path.join(root, 'src'));
  assert.ok(Object.keys(files).length > 30);
  assert.deepEqual(checkLayers(files), []);
});

test('the layer check catches what it exists for', () => {
  const ok = { 'core/a.h': '', 'kernels/k.h': '#include "core/a.h"\n#include <xsimd/xsimd.hpp>', 'tasks/t.cpp': '#include "kernels/k.h"' };
  assert.deepEqual(checkLayers(ok), []);
  const found = (files) => checkLayers({ ...ok, ...files }).join('\n');
  assert.match(found({ 'core/b.h': '#include "tasks/t.h"', 'tasks/t.h': '' }), /core\/b\.h: includes "tasks\/t\.h" — core \(layer 0\) may not include tasks/);
  assert.match(found({ 'nn/x.h': '#include "tokenizers/y.h"', 'tokenizers/y.h': '' }), /nn \(layer 3\) may not include tokenizers \(layer 3\)/);
  assert.match(found({ 'nn/x.h': '#include "nn/y.h"', 'nn/y.h': '#include "nn/z.h"', 'nn/z.h': '#include "nn/x.h"' }),
               /include cycle: nn\/x\.h → nn\/y\.h → nn\/z\.h → nn\/x\.h/);
  assert.match(found({ 'models/m.cpp': '#include <xsimd/xsimd.hpp>' }), /only kernels know xsimd/);
  assert.match(found({ 'core/e.h': '#include <emscripten/bind.h>' }), /never knows Emscripten/);
  assert.match(found({ 'tasks/u.cpp': '#include "tensor.h"' }), /not a file of src\//);
});
