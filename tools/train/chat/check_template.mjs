// Renders the chat model's template (tools/train/chat/chat_format.py's TEMPLATE, which export.py writes into
// models/wasmformer-chat-mini/tokenizer_config.json) with @huggingface/jinja, the library the engine's chat call
// uses, and compares the text with chat_format.render, which made the training data.
//   node tools/train/chat/check_template.mjs [models/wasmformer-chat-mini/tokenizer_config.json]
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Template } from '@huggingface/jinja';

const here = dirname(fileURLToPath(import.meta.url));
const py = `
import json, sys
sys.path.insert(0, ${JSON.stringify(here)})
from chat_format import TEMPLATE, render
S = {"role": "system", "content": "Answer in French."}
U = {"role": "user", "content": "And God said, Let there be light: and there was light."}
A = {"role": "assistant", "content": "God said, \\"Let there be light,\\" and there was light."}
U2 = {"role": "user", "content": "Thou shalt not steal."}
cases = []
for msgs in ([U], [S, U], [U, A, U2], [S, U, A, U2], [U, A]):
    for gen in (True, False):
        cases.append({"messages": msgs, "add_generation_prompt": gen, "expected": render(msgs, gen)})
print(json.dumps({"template": TEMPLATE, "cases": cases}))
`;
const { template, cases } = JSON.parse(execFileSync('/usr/bin/python3', ['-c', py], { encoding: 'utf8' }));
let shipped = template;
const cfgPath = process.argv[2];
if (cfgPath) {
  shipped = JSON.parse(readFileSync(cfgPath, 'utf8')).chat_template;
  if (shipped !== template) throw new Error(`${cfgPath}: chat_template differs from chat_format.TEMPLATE`);
}
const t = new Template(shipped);
let failed = 0;
for (const c of cases) {
  const got = t.render({ messages: c.messages, add_generation_prompt: c.add_generation_prompt, bos_token: '<s>', eos_token: '<|im_end|>' });
  if (got !== c.expected) {
    failed++;
    console.log('MISMATCH', JSON.stringify(c.messages), c.add_generation_prompt, '\n got:', JSON.stringify(got), '\nwant:', JSON.stringify(c.expected));
  }
}
// with tools, the template still renders (the model was not trained on tool calls)
const withTools = t.render({ messages: cases[0].messages, tools: [{ type: 'function', function: { name: 'f', parameters: {} } }], add_generation_prompt: true });
if (!withTools.includes('<tools>')) { failed++; console.log('tools section missing'); }
console.log(`${cases.length + 1 - failed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
