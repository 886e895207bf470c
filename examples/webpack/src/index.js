// the default models this page uses, each registered by its own module: the bundler copies their files and no
// others (import 'wasmformer-models' would bring all of them)
import 'wasmformer-models/fill-mask';
import 'wasmformer-models/text-generation';
import 'wasmformer-models/translation';
import { pipeline } from 'wasmformer';

const out = document.querySelector('#out');
try {
  const unmasker = await pipeline('fill-mask');
  const [best] = await unmasker('And the children of Israel went out of the land of [MASK].', { top_k: 1 });
  const generator = await pipeline('text-generation');
  const [{ generated_text }] = await generator('In the beginning', { max_new_tokens: 12 });
  const translator = await pipeline('translation');
  const [{ translation_text }] = await translator('And God said, Let there be light: and there was light.');
  out.textContent = `${best.token_str} — ${generated_text} — ${translation_text}`;
  document.body.dataset.result = JSON.stringify({ fill: best.token_str, text: generated_text, translation: translation_text,
                                                  threads: (await unmasker.model.engineInfo()).threads });
} catch (e) {
  out.textContent = `error: ${e.message}`;
  document.body.dataset.error = e.message;
}
