// URLs of wasmformer's default models (GGUF files in this package), by task.
export declare const models: { readonly 'fill-mask': string; readonly 'text-generation': string; readonly 'feature-extraction': string };
export default models;
