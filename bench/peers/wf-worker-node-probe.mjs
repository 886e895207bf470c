// wasmformer's worker_threads Worker with the bench's memory probe installed first (run.mjs starts this in place of
// web/src/worker-node.js, which it then runs unchanged); the probe answers on workerData.wfBenchPort. The
// worker_threads Workers this worker starts (the engine's pthreads) are counted.
import './memprobe-install.mjs';
import { syncBuiltinESMExports } from 'node:module';
import wt from 'node:worker_threads';
import '../../web/src/worker-node.js';

const Real = wt.Worker;
wt.Worker = class extends Real { constructor(...a) { super(...a); globalThis.__wfBenchCountWorker(); } };
syncBuiltinESMExports();
const port = wt.workerData?.wfBenchPort;
if (port) {
  port.on('message', () => port.postMessage(globalThis.__wfBenchMemory()));
  port.unref();
}
