/** The URL of the default text-generation model's GGUF file; importing this module registers it for pipeline('text-generation'). */
export declare const model: string;
export default model;
