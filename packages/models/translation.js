// The default translation model alone: `import 'wasmformer-models/translation'` registers it, and a bundler copies
// its files only (the package's main module brings every model).
//
// A Marian model in Hugging Face's layout (llama.cpp has no GGUF form of Marian): file name → URL, a source that
// pipeline() and Model.load() take as they take a folder. Each file is its own literal new URL(…), so that every
// bundler sees (and copies, under its own name) each one.
import { register } from './register.js';

export const model = {
  'config.json': new URL('./wasmformer-translate-en-es/config.json', import.meta.url),
  'generation_config.json': new URL('./wasmformer-translate-en-es/generation_config.json', import.meta.url),
  'model.safetensors': new URL('./wasmformer-translate-en-es/model.safetensors', import.meta.url),
  'source.spm': new URL('./wasmformer-translate-en-es/source.spm', import.meta.url),
  'target.spm': new URL('./wasmformer-translate-en-es/target.spm', import.meta.url),
  'vocab.json': new URL('./wasmformer-translate-en-es/vocab.json', import.meta.url),
  'tokenizer_config.json': new URL('./wasmformer-translate-en-es/tokenizer_config.json', import.meta.url),
  'special_tokens_map.json': new URL('./wasmformer-translate-en-es/special_tokens_map.json', import.meta.url),
};
// stored in F16, run at q8_0, as its model card measures it (10.6 MiB of memory instead of 41 MiB in f32)
export const options = { dtype: 'q8_0' };
register('translation', model, options);
export default model;
