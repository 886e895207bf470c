// The package's worker_threads Worker (Node): the engine runs here, so the caller's event loop stays free.
import { parentPort } from 'node:worker_threads';

import { loadEngine, readPath } from './engine-node.js';
import { serve } from './host.js';

serve({ post: (m, t) => parentPort.postMessage(m, t), onMessage: (f) => parentPort.on('message', f) }, { loadEngine, readPath });
