// Exposes the package's ES module to the browser tests (the strict CSP allows no inline script).
import * as wasmformer from '../../../web/src/index.js';

window.wasmformer = wasmformer;
document.body.dataset.ready = 'true';
