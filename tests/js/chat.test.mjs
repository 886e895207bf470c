// Chat in text-generation, against the built package in Node: real models' chat templates render exactly the prompt
// formats the models publish (written out by hand below); pipeline('text-generation')(messages) returns the
// conversation with the reply, which equals generate() on the rendered prompt; the template comes from
// tokenizer_config.json, chat_template.jinja or a GGUF's tokenizer.chat_template; special tokens written by the
// template are single ids and no second BOS is added; generation ends at end-of-turn ids from generation_config.json
// or the GGUF; bad messages and options are errors that name the field, and the model stays usable after them.
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';

import { Model, TextStreamer, Tokenizer, pipeline } from 'wasmformer';
import { fixture, root } from './helpers.mjs';

const GPT2 = fixture('gpt2-tiny');
const EOT = 50256;  // GPT-2's <|endoftext|>
const template = (name) => readFileSync(path.join(root, 'tests/data/chat-templates', `${name}.jinja`), 'utf8');
const QWEN25 = template('Qwen-Qwen2.5-7B-Instruct');

const tmpRoot = mkdtempSync(path.join(os.tmpdir(), 'wf-chat-'));
after(() => rmSync(tmpRoot, { recursive: true, force: true }));
// gpt2-tiny's files in a folder of their own, with `files` (name → text) added or replaced.
function gpt2Folder(files = {}) {
  const dir = mkdtempSync(path.join(tmpRoot, 'gpt2-'));
  for (const n of readdirSync(GPT2)) if (n !== 'model-files.json' && n !== 'golden.safetensors') copyFileSync(path.join(GPT2, n), path.join(dir, n));
  for (const [n, text] of Object.entries(files)) writeFileSync(path.join(dir, n), text);
  return dir;
}

// ------------------------------------------------------------------------------------------- GGUF metadata
// gpt2-tiny-q8_0.gguf with more metadata: [key, type, value] (type 'string' | 'u32' | 'bool'), inserted after the
// file's own keys; tensor infos and data move as they are (the data re-aligned to 32 bytes, the file's alignment).
function ggufWith(extra) {
  const src = readFileSync(fixture('gpt2-tiny-q8_0.gguf'));
  const dv = new DataView(src.buffer, src.byteOffset, src.byteLength);
  let p = 24;
  const u32 = () => ((p += 4), dv.getUint32(p - 4, true));
  const u64 = () => ((p += 8), Number(dv.getBigUint64(p - 8, true)));
  const SIZES = { 0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8 };
  const skipStr = () => { const n = u64(); p += n; };  // (not p += u64(): p would be read before u64 moves it)
  const skip = (type) => {
    if (type === 8) skipStr();
    else if (type === 9) { const elem = u32(), n = u64(); for (let i = 0; i < n; i++) skip(elem); }
    else p += SIZES[type];
  };
  const nTensors = Number(dv.getBigUint64(8, true)), nKv = Number(dv.getBigUint64(16, true));
  for (let i = 0; i < nKv; i++) { skipStr(); skip(u32()); }
  const kvEnd = p;
  for (let i = 0; i < nTensors; i++) { skipStr(); const dims = u32(); p += 8 * dims + 4 + 8; }
  const infosEnd = p, dataStart = Math.ceil(p / 32) * 32;
  const out = [];
  const str = (s) => { const b = Buffer.from(s, 'utf8'); const n = Buffer.alloc(8); n.writeBigUInt64LE(BigInt(b.length)); out.push(n, b); };
  for (const [key, type, value] of extra) {
    str(key);
    const t = Buffer.alloc(4);
    t.writeUInt32LE({ string: 8, u32: 4, bool: 7 }[type]);
    out.push(t);
    if (type === 'string') str(value);
    else if (type === 'u32') { const v = Buffer.alloc(4); v.writeUInt32LE(value); out.push(v); }
    else out.push(Buffer.from([value ? 1 : 0]));
  }
  const head = Buffer.from(src.subarray(0, 24));
  head.writeBigUInt64LE(BigInt(nKv + extra.length), 16);
  const meta = Buffer.concat([head, src.subarray(24, kvEnd), ...out, src.subarray(kvEnd, infosEnd)]);
  const pad = Buffer.alloc((32 - (meta.length % 32)) % 32);
  return new Uint8Array(Buffer.concat([meta, pad, src.subarray(dataStart)]));
}

// ------------------------------------------------------------------------------------------- the templates
const CONVERSATION = [
  { role: 'system', content: 'You are a helpful assistant.' },
  { role: 'user', content: 'Hello!' },
  { role: 'assistant', content: 'Hi there.' },
  { role: 'user', content: 'How are you?' },
];
const NO_SYSTEM = CONVERSATION.slice(1);

test('real chat templates render exactly the formats their models publish', async () => {
  const m = await Model.load(GPT2);  // its tokenizer renders any template given as chat_template
  const render = (name, messages, o = {}) => m.tokenizer.apply_chat_template(messages, { tokenize: false, add_generation_prompt: true, chat_template: template(name), ...o });

  // Qwen2.5: ChatML, with its own default system message when none is given
  assert.equal(await render('Qwen-Qwen2.5-7B-Instruct', CONVERSATION),
    '<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\nHello!<|im_end|>\n<|im_start|>assistant\nHi there.<|im_end|>\n' +
    '<|im_start|>user\nHow are you?<|im_end|>\n<|im_start|>assistant\n');
  assert.equal(await render('Qwen-Qwen2.5-7B-Instruct', [{ role: 'user', content: 'Hello!' }], { add_generation_prompt: false }),
    '<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n<|im_start|>user\nHello!<|im_end|>\n');
  // … and its tools block (tools | tojson, with Python's separators)
  const tools = [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } }];
  assert.equal(await render('Qwen-Qwen2.5-7B-Instruct', [{ role: 'user', content: 'What is the weather?' }], { tools }),
    '<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.\n\n# Tools\n\nYou may call one or more functions to ' +
    'assist with the user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>\n' +
    '{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}\n</tools>\n\nFor each function call, return a ' +
    'json object with function name and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{"name": <function-name>, "arguments": ' +
    '<args-json-object>}\n</tool_call><|im_end|>\n<|im_start|>user\nWhat is the weather?<|im_end|>\n<|im_start|>assistant\n');

  // Qwen3: ChatML without a default system message; enable_thinking: false closes an empty think block
  assert.equal(await render('Qwen-Qwen3-0.6B', NO_SYSTEM),
    '<|im_start|>user\nHello!<|im_end|>\n<|im_start|>assistant\nHi there.<|im_end|>\n<|im_start|>user\nHow are you?<|im_end|>\n<|im_start|>assistant\n');
  const noThink = '<|im_start|>user\nHello!<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n';
  assert.equal(await render('Qwen-Qwen3-0.6B', [{ role: 'user', content: 'Hello!' }], { enable_thinking: false }), noThink);
  assert.equal(await render('Qwen-Qwen3-0.6B', [{ role: 'user', content: 'Hello!' }], { chat_template_kwargs: { enable_thinking: false } }), noThink);

  // Llama 3.2: BOS, header ids, a blank line after each header, the dated system block
  const llama = { bos_token: '<|begin_of_text|>', date_string: '26 Jul 2024' };
  assert.equal(await render('meta-llama-Llama-3.2-3B-Instruct', CONVERSATION, llama),
    '<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nCutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\n' +
    'You are a helpful assistant.<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nHello!<|eot_id|>' +
    '<|start_header_id|>assistant<|end_header_id|>\n\nHi there.<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nHow are you?<|eot_id|>' +
    '<|start_header_id|>assistant<|end_header_id|>\n\n');
  // without a date the template asks strftime_now for today's
  assert.match(await render('meta-llama-Llama-3.2-3B-Instruct', NO_SYSTEM, { bos_token: '<|begin_of_text|>' }), /\nToday Date: \d\d [A-Z][a-z]{2} \d{4}\n\n<\|eot_id\|>/);

  // Phi-3.5: <|role|> lines; without a generation prompt the text ends with the EOS token (the tokenizer's own here)
  assert.equal(await render('microsoft-Phi-3.5-mini-instruct', CONVERSATION),
    '<|system|>\nYou are a helpful assistant.<|end|>\n<|user|>\nHello!<|end|>\n<|assistant|>\nHi there.<|end|>\n<|user|>\nHow are you?<|end|>\n<|assistant|>\n');
  assert.equal(await render('microsoft-Phi-3.5-mini-instruct', [{ role: 'user', content: 'Hello!' }], { add_generation_prompt: false }),
    '<|user|>\nHello!<|end|>\n<|endoftext|>');

  // Gemma 2: BOS, turns of "user" and "model"; a system message is refused by the template itself
  assert.equal(await render('google-gemma-2-2b-it', NO_SYSTEM, { bos_token: '<bos>' }),
    '<bos><start_of_turn>user\nHello!<end_of_turn>\n<start_of_turn>model\nHi there.<end_of_turn>\n<start_of_turn>user\nHow are you?<end_of_turn>\n' +
    '<start_of_turn>model\n');
  await assert.rejects(render('google-gemma-2-2b-it', CONVERSATION, { bos_token: '<bos>' }), /the chat template stopped: System role not supported/);
  await assert.rejects(render('google-gemma-2-2b-it', [{ role: 'assistant', content: 'x' }], { bos_token: '<bos>' }), /roles must alternate/);

  // SmolLM3: its metadata system block (reasoning on by default; /no_think and enable_thinking turn it off)
  assert.equal(await render('HuggingFaceTB-SmolLM3-3B', CONVERSATION),
    '<|im_start|>system\n## Metadata\n\nKnowledge Cutoff Date: June 2025\nReasoning Mode: /think\n\n## Custom Instructions\n\n' +
    'You are a helpful assistant.\n\n<|im_end|>\n<|im_start|>user\nHello!<|im_end|>\n<|im_start|>assistant\nHi there.<|im_end|>\n' +
    '<|im_start|>user\nHow are you?<|im_end|>\n<|im_start|>assistant\n');
  assert.equal(await render('HuggingFaceTB-SmolLM3-3B', [{ role: 'user', content: 'Hello!' }], { enable_thinking: false }),
    '<|im_start|>system\n## Metadata\n\nKnowledge Cutoff Date: June 2025\nReasoning Mode: /no_think\n\n## Custom Instructions\n\n' +
    'You are a helpful AI assistant named SmolLM, trained by Hugging Face.\n\n<|im_end|>\n<|im_start|>user\nHello!<|im_end|>\n' +
    '<|im_start|>assistant\n<think>\n\n</think>\n');

  // Mistral Nemo: [INST] … [/INST], EOS after each reply, the system message before the last user message
  assert.equal(await render('mistralai-Mistral-Nemo-Instruct-2407', CONVERSATION, { bos_token: '<s>', eos_token: '</s>' }),
    '<s>[INST]Hello![/INST]Hi there.</s>[INST]You are a helpful assistant.\n\nHow are you?[/INST]');

  // tokenize (the default): the ids of the text, with no template of the tokenizer's own
  const text = await render('Qwen-Qwen2.5-7B-Instruct', CONVERSATION);
  const ids = await m.tokenizer.apply_chat_template(CONVERSATION, { add_generation_prompt: true, chat_template: QWEN25 });
  assert.deepEqual(ids, await m.tokenizer.encode(text, { add_special_tokens: false }));
  await m.dispose();
});

// ----------------------------------------------------------------------------------- the text-generation pipeline
test('pipeline(messages) returns the conversation with the reply, which equals generate() on the rendered prompt', async () => {
  const dir = gpt2Folder({ 'tokenizer_config.json': JSON.stringify({ model_max_length: 64, chat_template: QWEN25 }) });
  const generator = await pipeline('text-generation', dir);
  assert.deepEqual(generator.model.info.chat_templates, ['default']);
  const messages = [{ role: 'user', content: 'Who was Moses?' }];
  const opts = { max_new_tokens: 8 };
  const out = await generator(messages, opts);
  assert.equal(out.length, 1);
  const conversation = out[0].generated_text;
  assert.deepEqual(conversation.slice(0, 1), messages);
  assert.equal(conversation.length, 2);
  assert.equal(conversation[1].role, 'assistant');
  // the same prompt, rendered and generated from by hand
  const prompt = '<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n<|im_start|>user\nWho was Moses?<|im_end|>\n<|im_start|>assistant\n';
  const plain = await generator.model.complete(prompt, { ...opts, add_special_tokens: false });
  assert.ok(plain.text.length > 0);
  assert.equal(conversation[1].content, plain.text);
  // Model.chat streams the same reply and tells the prompt
  const stream = generator.model.chat(messages, opts);
  let streamed = '';
  for await (const piece of stream) streamed += piece;
  assert.equal(streamed, plain.text);
  assert.equal(stream.result.prompt, prompt);
  assert.deepEqual(stream.result.messages, conversation);
  assert.deepEqual(stream.result.tokens.map((t) => t.id), plain.tokens.map((t) => t.id));
  // return_full_text: false gives the reply alone; a list of chats, one result each
  assert.deepEqual(await generator(messages, { ...opts, return_full_text: false }), [{ generated_text: plain.text }]);
  const batch = await generator([messages, [{ role: 'user', content: 'And Aaron?' }]], opts);
  assert.equal(batch.length, 2);
  assert.deepEqual(batch[0], out);
  assert.equal(batch[1][0].generated_text[1].role, 'assistant');
  // transformers.js passes apply_chat_template's options in tokenizer_encode_kwargs
  const own = await generator(messages, { ...opts, tokenizer_encode_kwargs: { chat_template: '{{ messages[0].content }}' } });
  assert.equal(own[0].generated_text[1].content, (await generator.model.complete('Who was Moses?', { ...opts, add_special_tokens: false })).text);
  // a TextStreamer sees the rendered prompt, then the reply
  let seen = '';
  await generator(messages, { ...opts, streamer: new TextStreamer(generator.tokenizer, { callback_function: (t) => (seen += t) }) });
  assert.equal(seen, prompt + plain.text);
  // plain prompts go on as before
  const [{ generated_text }] = await generator('The dog', { max_new_tokens: 4 });
  assert.ok(generated_text.startsWith('The dog'));
  await generator.dispose();
});

test('a conversation\'s next turn runs only its new tokens (the KV cache reused), with the reply a fresh model gives', async () => {
  const short = "{% for m in messages %}{{ m.role + ': ' + m.content + '\\n' }}{% endfor %}{% if add_generation_prompt %}{{ 'assistant:' }}{% endif %}";
  const dir = gpt2Folder({ 'tokenizer_config.json': JSON.stringify({ model_max_length: 64, chat_template: short }) });
  const m = await Model.load(dir);
  const fresh = await Model.load(dir);
  const opts = { max_new_tokens: 6 };
  const first = m.chat([{ role: 'user', content: 'Who was Moses?' }], opts);
  for await (const _ of first);
  assert.equal(first.result.cached_tokens, 0);
  const turn2 = [...first.result.messages, { role: 'user', content: 'And Aaron?' }];
  const second = m.chat(turn2, opts);
  for await (const _ of second);
  // everything the first turn's prompt and reply put in the cache, up to where the new turn's text differs
  assert.ok(second.result.cached_tokens >= first.result.prompt_tokens, `${second.result.cached_tokens} cached of ${second.result.prompt_tokens}`);
  const ref = fresh.chat(turn2, { ...opts, reuse_cache: false });
  for await (const _ of ref);
  assert.equal(ref.result.cached_tokens, 0);
  assert.equal(second.result.text, ref.result.text);
  assert.deepEqual(second.result.tokens.map((t) => t.id), ref.result.tokens.map((t) => t.id));
  // plain generate() does not reuse unless asked
  const g = await m.complete('Who was Moses?', { max_new_tokens: 2 });
  assert.equal(g.cached_tokens, 0);
  await m.dispose();
  await fresh.dispose();
});

test('continue_final_message: a last assistant message is continued, not answered', async () => {
  // ChatML (short: gpt2-tiny has 64 positions), in transformers' own file for a template
  const chatml = '{% for m in messages %}{{ "<|im_start|>" + m.role + "\\n" + m.content + "<|im_end|>\\n" }}{% endfor %}' +
                 '{% if add_generation_prompt %}{{ "<|im_start|>assistant\\n" }}{% endif %}';
  const dir = gpt2Folder({ 'chat_template.jinja': chatml });
  const generator = await pipeline('text-generation', dir);
  const messages = [{ role: 'user', content: 'Who was Moses?' }, { role: 'assistant', content: 'Moses was' }];
  const prompt = '<|im_start|>user\nWho was Moses?<|im_end|>\n<|im_start|>assistant\nMoses was';
  const s = generator.model.chat(messages, { max_new_tokens: 6 });
  for await (const _ of s);
  assert.equal(s.result.prompt, prompt);
  assert.deepEqual(s.result.messages, [messages[0], { role: 'assistant', content: 'Moses was' + s.result.text }]);
  const [{ generated_text }] = await generator(messages, { max_new_tokens: 6 });
  assert.deepEqual(generated_text, s.result.messages);
  // asked for, a new turn is started instead
  const t = generator.model.chat(messages, { max_new_tokens: 2, add_generation_prompt: true });
  for await (const _ of t);
  assert.ok(t.result.prompt.endsWith('Moses was<|im_end|>\n<|im_start|>assistant\n'));
  await assert.rejects(generator(messages, { add_generation_prompt: true, continue_final_message: true }), /cannot both be true/);
  await generator.dispose();
});

// ------------------------------------------------------------------------------------------- GGUF, stop ids, BOS
test('a GGUF chat template; its special tokens are single ids, no second BOS; an eot id from the GGUF ends the reply', async () => {
  const tpl = '{{ bos_token }}{% for m in messages %}{{ m.role + ": " + m.content + "\\n" }}{% endfor %}{% if add_generation_prompt %}assistant:{% endif %}';
  const messages = [{ role: 'user', content: 'In the beginning' }];
  // the tokenizer adds BOS itself (tokenizer.ggml.add_bos_token): the template's BOS must stay the only one
  const base = [['tokenizer.chat_template', 'string', tpl], ['tokenizer.ggml.add_bos_token', 'bool', true]];
  const m = await Model.load(ggufWith(base));
  assert.deepEqual(m.info.chat_templates, ['default']);
  const prompt = '<|endoftext|>user: In the beginning\nassistant:';
  assert.equal(await m.tokenizer.apply_chat_template(messages, { tokenize: false, add_generation_prompt: true }), prompt);
  const ids = await m.tokenizer.apply_chat_template(messages, { add_generation_prompt: true });
  assert.equal(ids[0], EOT);
  assert.equal(ids.filter((i) => i === EOT).length, 1);
  assert.deepEqual(ids.slice(1), await m.tokenizer.encode('user: In the beginning\nassistant:', { add_special_tokens: false }));
  assert.deepEqual(await m.tokenizer.encode('x'), [EOT, ...(await m.tokenizer.encode('x', { add_special_tokens: false }))]);  // its own BOS
  const s = m.chat(messages, { max_new_tokens: 6 });
  for await (const _ of s);
  assert.equal(s.result.prompt_tokens, ids.length);  // one BOS
  const plain = await m.complete(prompt, { max_new_tokens: 6, add_special_tokens: false });
  assert.equal(s.result.text, plain.text);
  const first = plain.tokens[0].id;
  assert.notEqual(first, EOT);
  await m.dispose();

  // the first token the reply would have, made the GGUF's end-of-turn id: the reply ends there, empty
  const eot = await Model.load(ggufWith([...base, ['tokenizer.ggml.eot_token_id', 'u32', first]]));
  assert.ok(eot.info.end_ids.includes(first));
  const r = eot.chat(messages, { max_new_tokens: 6 });
  for await (const _ of r);
  assert.equal(r.result.finish_reason, 'eos');
  assert.equal(r.result.text, '');
  assert.deepEqual(r.result.tokens.map((t) => t.id), [first]);
  assert.deepEqual(r.result.messages.at(-1), { role: 'assistant', content: '' });
  // stop_token_ids does the same for a model that does not say so
  const again = await Model.load(ggufWith(base));
  const q = again.chat(messages, { max_new_tokens: 6, stop_token_ids: [first] });
  for await (const _ of q);
  assert.equal(q.result.finish_reason, 'stop');
  assert.equal(q.result.text, '');
  await eot.dispose();
  await again.dispose();
});

test('generation_config.json eos_token_id (a list) ends a reply at an end-of-turn id, not part of the content', async () => {
  const tpl = '{% for m in messages %}{{ m.content }}{% endfor %}';
  const messages = [{ role: 'user', content: 'The dog was found in a field' }];
  const opts = { max_new_tokens: 8 };
  const plainDir = gpt2Folder({ 'tokenizer_config.json': JSON.stringify({ chat_template: tpl }) });
  const m = await Model.load(plainDir);
  const s = m.chat(messages, opts);
  for await (const _ of s);
  assert.equal(s.result.tokens.length, 8);
  const third = s.result.tokens[2];
  await m.dispose();
  const dir = gpt2Folder({ 'tokenizer_config.json': JSON.stringify({ chat_template: tpl }), 'generation_config.json': JSON.stringify({ eos_token_id: [EOT, third.id] }) });
  const generator = await pipeline('text-generation', dir);
  assert.deepEqual(generator.model.info.end_ids, [third.id, EOT].sort((a, b) => a - b));
  const [{ generated_text }] = await generator(messages, opts);
  const want = s.result.tokens.slice(0, 2).map((t) => t.text).join('');
  assert.deepEqual(generated_text, [...messages, { role: 'assistant', content: want }]);
  const r = generator.model.chat(messages, opts);
  for await (const _ of r);
  assert.equal(r.result.finish_reason, 'eos');
  assert.equal(r.result.tokens.length, 3);
  await generator.dispose();
  await assert.rejects(pipeline('text-generation', gpt2Folder({ 'generation_config.json': '{"eos_token_id": "</s>"}' })),
                       /generation_config.json: eos_token_id must be a token id or a list of token ids/);
});

// ------------------------------------------------------------------------------------------------------ errors
test('bad messages, options and templates are errors that name the field; the engine stays usable', async () => {
  const dir = gpt2Folder({ 'tokenizer_config.json': JSON.stringify({ chat_template: QWEN25 }) });
  const generator = await pipeline('text-generation', dir);
  const messages = [{ role: 'user', content: 'Who was Moses?' }];
  const opts = { max_new_tokens: 5 };
  const [{ generated_text: before }] = await generator(messages, opts);
  const fails = async (input, o, re) => {
    await assert.rejects(generator(input, { ...opts, ...o }), re);
    // … and the model goes on as before
    assert.deepEqual((await generator(messages, opts))[0].generated_text, before);
  };
  await fails([{ role: 3, content: 'x' }], {}, /messages\[0\]\.role must be a string such as 'user', got 3 \(an integer\)/);
  await fails([{ role: 'user' }], {}, /messages\[0\] has no content/);
  await fails([{ role: 'user', content: 'a' }, { role: 'user', content: 5 }], {}, /messages\[1\]\.content must be a string or a list of parts/);
  await fails([{ role: 'user', content: 'a' }, null], {}, /give a string, a list of strings, a chat/);
  await fails(['a', { role: 'user', content: 'b' }], {}, /give a string, a list of strings, a chat/);
  await fails(messages, { chat_template: 42 }, /chat: option chat_template must be a string/);
  await fails(messages, { chat_template: 'rag' }, /chat_template "rag" is neither a template .*\(it has: default\)/);
  await fails(messages, { chat_template: '{% for m in messages %}' }, /the chat template is not a valid template/);
  await fails(messages, { tools: 'get_weather' }, /option tools must be a list/);
  await fails(messages, { add_generation_promt: false }, /unknown option "add_generation_promt" \(did you mean "add_generation_prompt"\?\)/);
  await fails(messages, { max_new_tokns: 3 }, /unknown option "max_new_tokns" \(did you mean "max_new_tokens"\?\)/);
  await fails(messages, { stop_token_ids: [99999] }, /stop_token_ids: 99999 is not a token id/);
  await fails(messages, { eos_token_id: 5 }, /use stop_token_ids/);
  await assert.rejects(async () => generator.model.chat('Hi'), /chat: messages must be a non-empty list/);
  await assert.rejects(async () => { for await (const _ of generator.model.generate(messages)); }, /generate\(\) takes a string/);
  await generator.dispose();

  // a model without a template says so, and takes one given as an option
  const plain = await pipeline('text-generation', GPT2);
  await assert.rejects(plain(messages, opts), /chat messages need a chat template, and this model has none .* give one with the chat_template option/);
  const [{ generated_text }] = await plain(messages, { ...opts, chat_template: '{{ messages[0].content }}' });
  assert.equal(generated_text[1].content, (await plain.model.complete('Who was Moses?', { ...opts, add_special_tokens: false })).text);
  await plain.dispose();
  // a template that is not text, in the files, fails the load with the file and field named
  await assert.rejects(pipeline('text-generation', gpt2Folder({ 'tokenizer_config.json': '{"chat_template": 42}' })),
                       /tokenizer_config.json: chat_template must be a string or a list of \{name, template\}/);
  // named templates: "default" unless one is named
  const named = gpt2Folder({ 'tokenizer_config.json': JSON.stringify({ chat_template: [{ name: 'default', template: 'D{{ messages[0].content }}' },
                                                                                         { name: 'short', template: 'S{{ messages[0].content }}' }] }) });
  const tok = await Tokenizer.load(named);
  assert.equal(await tok.apply_chat_template(messages, { tokenize: false }), 'DWho was Moses?');
  assert.equal(await tok.apply_chat_template(messages, { tokenize: false, chat_template: 'short' }), 'SWho was Moses?');
  await assert.rejects(tok.apply_chat_template(messages, { chat_template: 'long' }), /it has: default, short/);
  await tok.dispose();
});

test('chat runs the same in the caller\'s thread ({ worker: false }) as in the worker', async () => {
  const dir = gpt2Folder({ 'tokenizer_config.json': JSON.stringify({ chat_template: QWEN25 }) });
  const messages = [{ role: 'user', content: 'Who was Moses?' }];
  const a = await pipeline('text-generation', dir);
  const b = await pipeline('text-generation', dir, { worker: false });
  assert.equal(a.model._client.kind, 'worker');
  assert.equal(b.model._client.kind, 'local');
  assert.deepEqual(await b(messages, { max_new_tokens: 6 }), await a(messages, { max_new_tokens: 6 }));
  await a.dispose();
  await b.dispose();
});

// ------------------------------------------------------------------------------------- the bundled chat model
// wasmformer-chat-mini (a KJV → modern English rewriter, models/wasmformer-chat-mini): its template renders the
// prompt it was trained and evaluated on, and the pipeline's reply to a held-out verse is PyTorch's greedy answer
// (tests/data/chat-mini/greedy.json, written by tools/train/chat/make_fixture.py) from the folder's f32 weights;
// the q8_0 GGUF in wasmformer-models gives a reply that ends at <|im_end|>, with the same template.
test('the bundled chat model: its template renders the trained prompt, replies equal PyTorch greedy', async () => {
  const { verses } = JSON.parse(readFileSync(path.join(root, 'tests/data/chat-mini/greedy.json'), 'utf8'));
  const chat = await pipeline('text-generation', path.join(root, 'models/wasmformer-chat-mini'));
  const q8 = await pipeline('text-generation', path.join(root, 'packages/models/wasmformer-chat-mini-q8_0.gguf'));
  try {
    for (const v of verses.slice(0, 4)) {
      const messages = [{ role: 'user', content: v.kjv }];
      assert.equal(await chat.tokenizer.apply_chat_template(messages, { tokenize: false, add_generation_prompt: true }), v.prompt, v.key);
      assert.equal(await q8.tokenizer.apply_chat_template(messages, { tokenize: false, add_generation_prompt: true }), v.prompt, v.key);
      const [out] = await chat(messages, { max_new_tokens: 160 });
      assert.deepEqual(out.generated_text, [...messages, { role: 'assistant', content: v.torch }], v.key);
      const [o8] = await q8(messages, { max_new_tokens: 160 });
      const reply = o8.generated_text.at(-1);
      assert.equal(reply.role, 'assistant');
      assert.ok(reply.content.length > v.torch.length / 2 && reply.content.length < v.torch.length * 2, `${v.key}: ${reply.content}`);
    }
  } finally {
    await chat.dispose();
    await q8.dispose();
  }
});
