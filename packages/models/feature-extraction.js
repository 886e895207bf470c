// The default feature-extraction model alone: `import 'wasmformer-models/feature-extraction'` registers it, and a
// bundler copies this one file only (the package's main module brings every model).
import { register } from './register.js';

export const model = new URL('./wasmformer-embed-mini-q8_0.gguf', import.meta.url).href;
register('feature-extraction', model);
export default model;
