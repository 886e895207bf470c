// wasmformer's Web Worker with the bench's memory probe installed first (page.html starts this in place of
// web/src/worker.js, which it then runs unchanged).
import './memprobe-install.mjs';
import '../../web/src/worker.js';
