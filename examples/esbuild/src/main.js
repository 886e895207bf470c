import 'wasmformer-models';  // registers the default models (and makes the bundler copy their files)
import { pipeline } from 'wasmformer';

// esbuild copies no files that code refers to by URL: copy-files.mjs puts the engine's .wasm beside this bundle,
// and this says where it is (the default models sit beside it too)
const engine = { wasmUrl: new URL('./wasmformer.wasm', import.meta.url).href };

const out = document.querySelector('#out');
try {
  const unmasker = await pipeline('fill-mask', engine);
  const [best] = await unmasker('And the children of Israel went out of the land of [MASK].', { top_k: 1 });
  const generator = await pipeline('text-generation', engine);
  const [{ generated_text }] = await generator('In the beginning', { max_new_tokens: 12 });
  const translator = await pipeline('translation', engine);
  const [{ translation_text }] = await translator('And God said, Let there be light: and there was light.');
  out.textContent = `${best.token_str} — ${generated_text} — ${translation_text}`;
  document.body.dataset.result = JSON.stringify({ fill: best.token_str, text: generated_text, translation: translation_text,
                                                  threads: (await unmasker.model.engineInfo()).threads });
} catch (e) {
  out.textContent = `error: ${e.message}`;
  document.body.dataset.error = e.message;
}
