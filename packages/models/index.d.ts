// URLs of wasmformer's default models (files in this package), by task.
export declare const models: {
  readonly 'fill-mask': string;
  readonly 'text-generation': string;
  readonly 'feature-extraction': string;
  /** a Marian folder (English → Spanish), file name → URL: a source for pipeline('translation', models.translation) */
  readonly translation: { readonly [file: string]: URL };
  /** a chat model (ChatML) for text-generation with messages: pipeline('text-generation', models.chat) */
  readonly chat: string;
};
/** The load options a pipeline given no model uses for each (the call's own options win). */
export declare const options: { readonly translation: { readonly dtype: 'q8_0' } };
export default models;
