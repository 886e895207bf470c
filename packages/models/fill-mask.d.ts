/** The URL of the default fill-mask model's GGUF file; importing this module registers it for pipeline('fill-mask'). */
export declare const model: string;
export default model;
