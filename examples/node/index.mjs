// wasmformer in Node: the default models (installed with the package), a streamed continuation, a chat with the
// bundled chat model, a translation, and an HTTP server that keeps answering while the engine works in its own thread.
import http from 'node:http';

import { TextStreamer, pipeline } from 'wasmformer';
import { models } from 'wasmformer-models';

const unmasker = await pipeline('fill-mask');
const [best] = await unmasker('And the children of Israel went out of the land of [MASK].', { top_k: 3 });
console.log('fill-mask:', best.token_str, best.score.toFixed(2));

const generator = await pipeline('text-generation');
let streamed = '';
const streamer = new TextStreamer(generator.tokenizer, { skip_prompt: true, callback_function: (t) => (streamed += t) });
// a server that answers during the generation: the engine does not block this thread
const server = http.createServer((req, res) => res.end('still here\n'));
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const ping = fetch(`http://127.0.0.1:${server.address().port}/`).then((r) => r.text());
const [{ generated_text }] = await generator('In the beginning', { max_new_tokens: 30, streamer, signal: AbortSignal.timeout(60000) });
console.log('text-generation:', generated_text);
console.log('server during generation:', (await ping).trim());
console.log('streamed the same text:', generated_text === 'In the beginning' + streamed);
server.close();

// a chat: messages in, the conversation with the model's reply out (the chat model rewrites old English)
const chat = await pipeline('text-generation', models.chat);
const [{ generated_text: conversation }] = await chat([{ role: 'user', content: 'And God said, Let there be light: and there was light.' }]);
console.log('chat:', conversation.at(-1).content);

// English into Spanish with the bundled translation model (4 beams, as its generation_config.json says)
const translator = await pipeline('translation');
const [{ translation_text }] = await translator('And God said, Let there be light: and there was light.');
console.log('translation:', translation_text);

await unmasker.dispose();
await generator.dispose();
await chat.dispose();
await translator.dispose();
