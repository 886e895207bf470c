// The Web Worker host: runs a LocalBackend and answers the page's requests (see WorkerBackend).
import { LocalBackend } from './backend.js';

let backend = null;
const controllers = new Map();

self.onmessage = async ({ data }) => {
  const { id, op } = data;
  if (op === 'abort') return controllers.get(id)?.abort();
  try {
    let result;
    if (op === 'init') {
      backend = new LocalBackend(data.engineOptions);
      result = await backend.threadInfo();
    } else if (op === 'load') {
      const ctl = new AbortController();
      controllers.set(id, ctl);
      result = await backend.load(data.kind, data.source, data.opts, (progress) => self.postMessage({ id, progress }), ctl.signal);
    } else if (op === 'call') {
      const flag = data.flag;
      result = await backend.call(data.handle, data.method, data.args, flag ? () => Atomics.load(flag, 0) !== 0 : undefined);
    } else if (op === 'dispose') {
      result = await backend.dispose(data.handle);
    }
    const transfer = result?.attention ? [result.attention.buffer] : [];
    self.postMessage({ id, result }, transfer);
  } catch (e) {
    self.postMessage({ id, error: { message: e?.message ?? String(e), name: e?.name ?? 'Error' } });
  } finally {
    controllers.delete(id);
  }
};
