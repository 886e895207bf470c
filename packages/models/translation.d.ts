/** The default translation model (Marian, English → Spanish): file name → URL; importing this module registers it for pipeline('translation'). */
export declare const model: { readonly [file: string]: URL };
/** The load options pipeline('translation') given no model uses (the call's own options win). */
export declare const options: { readonly dtype: 'q8_0' };
export default model;
