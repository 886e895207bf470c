// URLs of wasmformer's default models (GGUF files in this package), by task.
export declare const models: { readonly 'fill-mask': string; readonly 'text-generation': string; readonly 'feature-extraction': string;
  /** a chat model (ChatML) for text-generation with messages: pipeline('text-generation', models.chat) */ readonly chat: string };
export default models;
