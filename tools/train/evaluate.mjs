// Runs the model-card examples (tools/train/examples.json, chosen before evaluation) through the engine — the same
// JS API users call — and writes each bundled model's README.md (model card) from its training.json metrics.
//   node tools/train/evaluate.mjs
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { FillMask, TextGenerator } from '../../web/src/index.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const examples = JSON.parse(readFileSync(path.join(root, 'tools/train/examples.json'), 'utf8'));
const mb = (f) => (statSync(path.join(root, f)).size / 1e6).toFixed(1);

const LICENSES = `## Data and licenses

- The King James Bible (1611/1769 text): public domain (in the United Kingdom the text is under Crown
  letters patent; elsewhere it is in the public domain). Read from Debian's \`bible-kjv-text\` with the \`bible\`
  program of \`bible-kjv\`.
- Jane Austen's six completed novels: public domain. Read from Debian's \`r-cran-janeaustenr\` (the R package by
  Julia Silge, MIT license) with Rscript.
- The model weights: trained by the wasmformer project, released under the project's MIT license.

Documents are Bible chapters and Austen chapters; every 20th document is held out as the test split
(\`tools/train/corpus.py\`), so both sources are in both splits. The training text is about 1.8 million tokens.`;

// The train.py flags that reproduce a run: every setting in training.json that differs from the script's default.
function flags(t) {
  const f = t.schedule_steps ? [`--steps ${t.schedule_steps} --stop-at ${t.steps}`] : [`--steps ${t.steps}`];
  if (t.batch !== 16) f.push(`--batch ${t.batch}`);
  if (t.seq_len !== 128) f.push(`--seq-len ${t.seq_len}`);
  if (t.lr !== 0.001) f.push(`--lr ${t.lr}`);
  if ((t.warmup ?? 300) !== 300) f.push(`--warmup ${t.warmup}`);
  if ((t.dropout ?? 0.1) !== 0) f.push(`--dropout ${t.dropout ?? 0.1}`);
  if (t.seed !== 42) f.push(`--seed ${t.seed}`);
  if (t.unigram_bias) f.push('--unigram-bias');
  if (t.sinusoidal_init) f.push('--sinusoidal-init');
  return f.join(' ');
}

// One training run in words, from its training.json.
function run(t) {
  return `${t.steps} steps of ${t.batch} × ${t.seq_len} tokens (${(t.tokens_seen / 1e6).toFixed(1)} M tokens seen) in ${t.train_minutes} minutes on ${t.threads === 1 ? 'one CPU thread' : `${t.threads} CPU threads`} of a 2-core machine, AdamW (lr ${t.lr}, linear warm-up over ${t.warmup ?? 300} steps, cosine to 10 %), dropout ${t.dropout ?? 0.1}, seed ${t.seed}${t.unigram_bias ? ', output bias started at the log unigram frequencies of the training text' : ''}${t.sinusoidal_init ? ', position embeddings started as sinusoids' : ''}.`;
}

// A run's held-out quality in words: BERT's top-1 (also on its own window length when it trained on shorter ones),
// GPT-2's perplexity.
function heldOut(kind, t) {
  if (kind !== 'bert') return `Held-out perplexity after it: ${t.perplexity.toFixed(1)}.`;
  const own = t.eval_at_seq_len ? ` (${(100 * t.eval_at_seq_len.mlm_top1).toFixed(1)} % on windows of the ${t.seq_len} tokens it was trained on)` : '';
  return `Held-out top-1 after it: ${(100 * t.mlm_top1).toFixed(1)} % on 128-token windows${own}.`;
}

function header(kind, cfg, t) {
  const c = t.continued_from;
  const arch = kind === 'bert'
    ? `BERT-style masked-language model (Hugging Face \`BertForMaskedLM\`): ${cfg.num_hidden_layers} post-LN encoder layers, hidden size ${cfg.hidden_size}, ${cfg.num_attention_heads} heads, feed-forward ${cfg.intermediate_size}, ${cfg.max_position_embeddings} positions, GELU (erf); MLM head tied to the word embeddings.`
    : `GPT-2-style causal language model (Hugging Face \`GPT2LMHeadModel\`): ${cfg.n_layer} pre-LN decoder layers, hidden size ${cfg.n_embd}, ${cfg.n_head} heads, feed-forward ${4 * cfg.n_embd}, ${cfg.n_positions} positions, GELU (tanh); LM head tied to the token embeddings.`;
  const tok = kind === 'bert'
    ? "Tokenizer: the genuine bert-base-uncased WordPiece vocabulary (30,522 tokens, `vocab.txt`), so the same files and code path serve Google's bert-base-uncased."
    : "Tokenizer: byte-level BPE in GPT-2's file format (`vocab.json` + `merges.txt`), 8,192 tokens trained on the training split with GPT-2's algorithm (`tools/reference/tokenizers.py`). A vocabulary of 8k instead of GPT-2's 50k makes the output layer 6× cheaper, so the same two CPU hours train on about 4× more tokens; the files and the code path are exactly GPT-2's.";
  return `${arch}\n\n${tok}\n\n**These are small models trained by the wasmformer project on public-domain books. They are not Google's BERT
or OpenAI's GPT-2**, and know little beyond the King James Bible and Jane Austen's novels. They exist so that the
demo, the command line and offline sites work with no network.

## Training

\`\`\`sh
apt-get install python3-torch libopenblas0-pthread bible-kjv r-cran-janeaustenr python3-regex
/usr/bin/python3 tools/train/corpus.py --out build/corpus
${c ? `/usr/bin/python3 tools/train/train.py --model ${kind} --corpus build/corpus --out build/${kind}-phase1 ${flags(c)}\n` : ''}/usr/bin/python3 tools/train/train.py --model ${kind} --corpus build/corpus --out models/wasmformer-${kind}-mini ${c ? `--init build/${kind}-phase1 ` : ''}${flags(t)}
/usr/bin/python3 tools/reference/gguf_export.py models/wasmformer-${kind}-mini models/gguf/wasmformer-${kind}-mini-q8_0.gguf
node tools/train/evaluate.mjs
\`\`\`

${c ? `Two phases. First, from scratch: ${run(c)}${c.stopped ? ` ${c.stopped}` : ''} ${heldOut(kind, c)}\n\nThen, from those weights (\`--init\`, a fresh optimizer): ${run(t)}` : `This run: ${run(t)}`}
The runs stopped at a wall-clock budget (\`--minutes\`, the cosine laid over minutes); \`--steps\` lays the same schedule
over steps, which reproduces them on any machine up to the small drift of the originals' throughput.${kind === 'bert' ? ` Masking: 15 % of tokens, 80 % [MASK] / 10 % random / 10 % unchanged; the MLM head runs at the masked positions only, with its training softmax over the vocabulary ids that occur in the training text (${t.softmax_ids.toLocaleString('en-US')} of 30,522; the others keep an output bias of −10⁴ and are never predicted).` : ''}

Files: \`model.safetensors\` (F16, ${mb(`models/wasmformer-${kind}-mini/model.safetensors`)} MB), \`models/gguf/wasmformer-${kind}-mini-q8_0.gguf\` (Q8_0, ${mb(`models/gguf/wasmformer-${kind}-mini-q8_0.gguf`)} MB).`;
}

async function bertCard() {
  const dir = path.join(root, 'models/wasmformer-bert-mini');
  const cfg = JSON.parse(readFileSync(path.join(dir, 'config.json'), 'utf8'));
  const t = JSON.parse(readFileSync(path.join(dir, 'training.json'), 'utf8'));
  const fm = await FillMask.load(dir);
  let rows = '| input | top 5 (probability) |\n|---|---|\n';
  for (const text of examples.fill_mask) {
    const { results } = await fm.fill(text, { top_k: 5 });
    rows += `| ${text.replace(/\|/g, '\\|')} | ${results[0].map((c) => `${c.token_str} (${c.score.toFixed(2)})`).join(', ')} |\n`;
  }
  await fm.dispose();
  const card = `# wasmformer-bert-mini\n\n${header('bert', cfg, t)}\n\n## Held-out quality\n\nOn the test split (${t.masked_tokens} masked tokens, 15 % masking with a fixed seed): **top-1 accuracy ${(100 * t.mlm_top1).toFixed(1)} %**, **top-5 accuracy ${(100 * t.mlm_top5).toFixed(1)} %**.\n\n## Examples\n\nThe ten inputs were chosen before the model was evaluated (\`tools/train/examples.json\`); outputs from the engine (\`node tools/train/evaluate.mjs\`):\n\n${rows}\n${LICENSES}\n`;
  writeFileSync(path.join(dir, 'README.md'), card);
  return card;
}

async function gptCard() {
  const dir = path.join(root, 'models/wasmformer-gpt2-mini');
  const cfg = JSON.parse(readFileSync(path.join(dir, 'config.json'), 'utf8'));
  const t = JSON.parse(readFileSync(path.join(dir, 'training.json'), 'utf8'));
  const gen = await TextGenerator.load(dir);
  let rows = '';
  for (const prompt of examples.continuation) {
    const r = await gen.complete(prompt, { max_new_tokens: 40, do_sample: true, temperature: 0.8, top_k: 40, top_p: 0.95, repetition_penalty: 1.1, seed: 1 });
    rows += `- **${prompt}**${r.text.replace(/\n+/g, ' ')}\n`;
  }
  await gen.dispose();
  const card = `# wasmformer-gpt2-mini\n\n${header('gpt2', cfg, t)}\n\n## Held-out quality\n\nPerplexity on the test split: **${t.perplexity.toFixed(1)}** (${t.eval_tokens} tokens, windows of 256, per token of this 8k vocabulary).\n\n## Examples\n\nThe ten prompts were chosen before the model was evaluated (\`tools/train/examples.json\`); continuations from the engine with\ntemperature 0.8, top-k 40, top-p 0.95, repetition penalty 1.1, seed 1, 40 new tokens (\`node tools/train/evaluate.mjs\`):\n\n${rows}\n${LICENSES}\n`;
  writeFileSync(path.join(dir, 'README.md'), card);
  return card;
}

console.log(await bertCard());
console.log(await gptCard());
