// The chat model alone (ChatML; no task's default): pipeline('text-generation', (await import('wasmformer-models/chat')).model).
export const model = new URL('./wasmformer-chat-mini-q8_0.gguf', import.meta.url).href;
export default model;
