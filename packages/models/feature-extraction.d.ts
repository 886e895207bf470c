/** The URL of the default feature-extraction model's GGUF file; importing this module registers it for pipeline('feature-extraction'). */
export declare const model: string;
export default model;
