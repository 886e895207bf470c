// wasmformer's default models, by task: the URLs of the files in this package. Bundlers (Vite, webpack) copy files
// referenced as new URL('./…', import.meta.url) into the build; Node reads them from node_modules.
//
// Importing this module also registers them as the models pipeline() uses when it is given none:
//   import 'wasmformer-models';   const unmasker = await pipeline('fill-mask');
// (Node finds this package by itself when it is installed; browsers need the import, so that sites that bring
// their own models do not ship these files.) A page that needs some of them imports those alone, and its bundler
// copies only their files: import 'wasmformer-models/fill-mask' (text-generation, feature-extraction, translation).
import chat from './chat.js';
import featureExtraction from './feature-extraction.js';
import fillMask from './fill-mask.js';
import textGeneration from './text-generation.js';
import translation, { options as translationOptions } from './translation.js';

export const models = {
  'fill-mask': fillMask,
  'text-generation': textGeneration,
  'feature-extraction': featureExtraction,
  translation,  // file name → URL object: a Marian folder
  // not a task: a chat model for text-generation with messages (pipeline('text-generation', models.chat))
  chat,
};

// The options a pipeline given no model loads these with (the call's own options win).
export const options = { translation: translationOptions };

export default models;
