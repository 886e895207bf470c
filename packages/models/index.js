// wasmformer's default models, by task: the URLs of GGUF files in this package. Bundlers (Vite, webpack) copy
// files referenced as new URL('./…', import.meta.url) into the build; Node reads them from node_modules.
//
// Importing this module also registers them as the models pipeline() uses when it is given none:
//   import 'wasmformer-models';   const unmasker = await pipeline('fill-mask');
// (Node finds this package by itself when it is installed; browsers need the import, so that sites that bring
// their own models do not ship these files.)
export const models = {
  'fill-mask': new URL('./wasmformer-bert-mini-q8_0.gguf', import.meta.url).href,
  'text-generation': new URL('./wasmformer-gpt2-mini-q8_0.gguf', import.meta.url).href,
  'feature-extraction': new URL('./wasmformer-embed-mini-q8_0.gguf', import.meta.url).href,
  // not a task: a chat model for text-generation with messages (pipeline('text-generation', models.chat))
  chat: new URL('./wasmformer-chat-mini-q8_0.gguf', import.meta.url).href,
};

const registry = (globalThis[Symbol.for('wasmformer.defaultModels')] ??= {});
for (const [task, url] of Object.entries(models)) if (task !== 'chat') registry[task] ??= url;

export default models;
