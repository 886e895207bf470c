// The default fill-mask model alone: `import 'wasmformer-models/fill-mask'` registers it, and a bundler copies this
// one file only (the package's main module brings every model).
import { register } from './register.js';

export const model = new URL('./wasmformer-bert-mini-q8_0.gguf', import.meta.url).href;
register('fill-mask', model);
export default model;
