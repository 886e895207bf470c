// The registry pipeline() reads in browsers when it is given no model: task → { source, options }. Each of this
// package's modules registers its own model when imported (the first registration of a task wins).
export function register(task, source, options) {
  const registry = (globalThis[Symbol.for('wasmformer.defaultModels')] ??= {});
  registry[task] ??= { source, options };
}
