// The worker's side of the protocol (client.js is the caller's): messages { id, op, … } in, { id, result | error |
// progress } out. op: init (engine options) | load | call | dispose | abort. Every call runs to its end or to an
// abort: a call's `flag` (a shared Int32Array) is polled between layers, so an abort reaches a running call.
import { LocalBackend } from './backend.js';

// port: { post(message, transfer), onMessage(handler) }; platform: { loadEngine, readPath? }.
export function serve(port, platform) {
  let backend = null;
  const controllers = new Map();
  port.onMessage(async (data) => {
    const { id, op } = data;
    if (op === 'abort') return controllers.get(id)?.abort();
    try {
      let result;
      if (op === 'init') {
        backend = new LocalBackend(platform, data.engineOptions);
        result = await backend.threadInfo();
      } else if (op === 'load') {
        const ctl = new AbortController();
        controllers.set(id, ctl);
        result = await backend.load(data.kind, data.source, data.opts, (progress) => port.post({ id, progress }), ctl.signal);
      } else if (op === 'call') {
        const flag = data.flag;
        result = await backend.call(data.handle, data.method, data.args, flag ? () => Atomics.load(flag, 0) !== 0 : undefined);
      } else if (op === 'dispose') {
        result = await backend.dispose(data.handle);
      }
      port.post({ id, result }, result?.attention ? [result.attention.buffer] : []);
    } catch (e) {
      // an Emscripten abort (or a trap) leaves the instance unusable: say so, and the caller starts a fresh worker
      const fatal = e instanceof WebAssembly.RuntimeError || /^Aborted\(/.test(e?.message ?? '');
      port.post({ id, error: { message: e?.message ?? String(e), name: e?.name ?? 'Error', fatal } });
    } finally {
      controllers.delete(id);
    }
  });
}
