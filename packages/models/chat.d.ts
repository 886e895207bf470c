/** The URL of the chat model's GGUF file (ChatML; no task's default). */
export declare const model: string;
export default model;
