// wasmformer's default models, by task: the URLs of the files in this package. Bundlers (Vite, webpack) copy files
// referenced as new URL('./…', import.meta.url) into the build; Node reads them from node_modules.
//
// Importing this module also registers them as the models pipeline() uses when it is given none:
//   import 'wasmformer-models';   const unmasker = await pipeline('fill-mask');
// (Node finds this package by itself when it is installed; browsers need the import, so that sites that bring
// their own models do not ship these files.)
export const models = {
  'fill-mask': new URL('./wasmformer-bert-mini-q8_0.gguf', import.meta.url).href,
  'text-generation': new URL('./wasmformer-gpt2-mini-q8_0.gguf', import.meta.url).href,
  'feature-extraction': new URL('./wasmformer-embed-mini-q8_0.gguf', import.meta.url).href,
  // a Marian model in Hugging Face's layout (llama.cpp has no GGUF form of Marian): file name → URL, a source that
  // pipeline() and Model.load() take as they take a folder. Each file is its own literal new URL(…), so that every
  // bundler sees (and copies, under its own name) each one.
  translation: {
    'config.json': new URL('./wasmformer-translate-en-es/config.json', import.meta.url),
    'generation_config.json': new URL('./wasmformer-translate-en-es/generation_config.json', import.meta.url),
    'model.safetensors': new URL('./wasmformer-translate-en-es/model.safetensors', import.meta.url),
    'source.spm': new URL('./wasmformer-translate-en-es/source.spm', import.meta.url),
    'target.spm': new URL('./wasmformer-translate-en-es/target.spm', import.meta.url),
    'vocab.json': new URL('./wasmformer-translate-en-es/vocab.json', import.meta.url),
    'tokenizer_config.json': new URL('./wasmformer-translate-en-es/tokenizer_config.json', import.meta.url),
    'special_tokens_map.json': new URL('./wasmformer-translate-en-es/special_tokens_map.json', import.meta.url),
  },
  // not a task: a chat model for text-generation with messages (pipeline('text-generation', models.chat))
  chat: new URL('./wasmformer-chat-mini-q8_0.gguf', import.meta.url).href,
};

// The options a pipeline given no model loads these with (the call's own options win): the translation model is
// stored in F16 and runs at q8_0, as its model card measures it (10.6 MiB of memory instead of 41 MiB in f32).
export const options = { translation: { dtype: 'q8_0' } };

const registry = (globalThis[Symbol.for('wasmformer.defaultModels')] ??= {});
for (const [task, source] of Object.entries(models)) if (task !== 'chat') registry[task] ??= { source, options: options[task] };

export default models;
