// The default text-generation model alone: `import 'wasmformer-models/text-generation'` registers it, and a bundler
// copies this one file only (the package's main module brings every model).
import { register } from './register.js';

export const model = new URL('./wasmformer-gpt2-mini-q8_0.gguf', import.meta.url).href;
register('text-generation', model);
export default model;
