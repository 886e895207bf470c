// Runs the model-card examples (tools/train/examples.json, chosen before evaluation) through the engine — the same
// JS API users call — and writes each bundled model's README.md (model card) from its training.json metrics.
//   node tools/train/evaluate.mjs
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { FillMask, TextGenerator } from 'wasmformer';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const examples = JSON.parse(readFileSync(path.join(root, 'tools/train/examples.json'), 'utf8'));
const mb = (f) => (statSync(path.join(root, f)).size / 1e6).toFixed(1);

// The data section of a model card: the World English Bible and the split's details only for models trained with it.
function licenses(t) {
  const web = corpusOf(t) !== 'kjv+austen';
  return `## Data and licenses

- The King James Bible (1611/1769 text): public domain (in the United Kingdom the text is under Crown
  letters patent; elsewhere it is in the public domain). Read from Debian's \`bible-kjv-text\` with the \`bible\`
  program of \`bible-kjv\`.
- Jane Austen's six completed novels: public domain. Read from Debian's \`r-cran-janeaustenr\` (the R package by
  Julia Silge, MIT license) with Rscript.
${web ? `- The World English Bible with Deuterocanon (2020 stable text): public domain ("World English Bible" is a trademark
  of eBible.org; the model is not a copy of it, only trained on it). Read from Debian's \`sword-text-web\` (SWORD module
  engWEB2015eb) with \`mod2imp\` of \`libsword-utils\`; footnotes, headings and markup removed.
` : ''}- The model weights: trained by the wasmformer project, released under the project's MIT license.

${web ? `Documents are Bible chapters and Austen chapters (\`tools/train/corpus.py\`). Every 20th document of the King James
Bible and Austen is held out as the test split (the original split, unchanged); a World English Bible chapter is held
out exactly when the King James chapter of the same book and number is, so that no held-out verse is trained on in the
other translation (of the deuterocanon, which the KJV lacks, every 20th chapter; Greek Esther and 1 Esdras, which retell
canonical chapters, are left out). The training text is about 2.9 million tokens (1.8 million of them KJV and Austen);
"the original test split" above is the KJV + Austen part of the test split, on which the earlier models were measured.`
    : `Documents are Bible chapters and Austen chapters; every 20th document is held out as the test split
(\`tools/train/corpus.py\`), so both sources are in both splits. The training text is about 1.8 million tokens.`}`;
}

// The runs that made a model, oldest first: each training.json's `continued_from` is the run its --init came from.
function phases(t) {
  const out = [];
  for (let r = t; r; r = r.continued_from) out.unshift(r);
  return out;
}

// The corpus a run trained on (older training.json files predate the field: those without the World English Bible
// have no `old_split` metrics either).
const corpusOf = (t) => t.corpus ?? (t.old_split ? 'kjv+austen+web' : 'kjv+austen');
const corpusDir = (t) => (corpusOf(t) === 'kjv+austen' ? 'build/corpus-kjv-austen' : 'build/corpus');

// The train.py flags that reproduce a run: every setting in training.json that differs from the script's default
// (and, for the model's size, from the run it continues: a run with more layers stacks the checkpoint's layers).
function flags(kind, t) {
  // a run that kept an earlier checkpoint (--keep-best): its schedule ran to the last step, the folder holds the kept one
  const last = t.schedule_steps ?? t.kept_best_of?.steps;
  const f = last ? [`--steps ${last} --stop-at ${t.steps}`] : [`--steps ${t.steps}`];
  if (t.device) f.push('--device cuda');
  if (t.kept_best_of) f.push(`--keep-best --export-every ${t.export_every}`);
  if (t.decay_start) f.push(`--decay-start ${t.decay_start}`);
  const c = t.config;
  if (c) {
    const [L, E, H, F] = kind === 'bert'
      ? [c.num_hidden_layers, c.hidden_size, c.num_attention_heads, c.intermediate_size]
      : [c.n_layer, c.n_embd, c.n_head, c.n_inner ?? 4 * c.n_embd];
    const d = kind === 'bert' ? [4, 192, 4, 768] : [4, 256, 4, 1024];
    if (L !== d[0]) f.push(`--layers ${L}`);
    if (E !== d[1]) f.push(`--hidden ${E}`);
    if (H !== d[2]) f.push(`--heads ${H}`);
    if (F !== 4 * E) f.push(`--ff ${F}`);
  }
  if (t.whole_word) f.push('--whole-word');
  // the tokenizer that the first run trained on the original corpus (build/corpus-kjv-austen/gpt2/), kept
  if (t.tokenizer) f.push('--tokenizer build/corpus-kjv-austen/gpt2');
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

// A run's size, from its training.json (older ones predate the field: the defaults).
function size(kind, t) {
  const c = t.config;
  if (kind === 'bert') return c ? `${c.num_hidden_layers} layers × ${c.hidden_size}` : '4 layers × 192';
  return c ? `${c.n_layer} layers × ${c.n_embd}` : '4 layers × 256';
}

// One training run in words, from its training.json.
function run(kind, t, prev) {
  const time = t.device
    ? `${t.train_minutes} minutes on one ${t.device} (bf16 autocast)`
    : t.cpu_minutes
    ? `${t.cpu_minutes} CPU-minutes (one thread at nice 19, on a 2-core machine shared with builds)`
    : `${t.train_minutes} minutes on ${t.threads === 1 ? 'one CPU thread' : `${t.threads} CPU threads`} of a 2-core machine`;
  const sched = t.decay_start
    ? `held until step ${t.decay_start}, then cosine to 10 % over the last ${t.steps - t.decay_start} steps`
    : 'cosine to 10 %';
  const grown = prev && size(kind, t) !== size(kind, prev) ? `, grown from ${size(kind, prev)} to ${size(kind, t)} by stacking copies of its layers (layer i starts as layer i mod ${size(kind, prev).split(' ')[0]})` : '';
  return `${t.steps} steps of ${t.batch} × ${t.seq_len} tokens (${(t.tokens_seen / 1e6).toFixed(1)} M tokens seen) of the ${corpusOf(t) === 'kjv+austen' ? 'KJV + Austen' : 'KJV + Austen + World English Bible'} corpus in ${time}${grown}, AdamW (lr ${t.lr}, linear warm-up over ${t.warmup ?? 300} steps, ${sched}), dropout ${t.dropout ?? 0.1}, seed ${t.seed}${t.unigram_bias ? ', output bias started at the log unigram frequencies of the training text' : ''}${t.sinusoidal_init ? ', position embeddings started as sinusoids' : ''}${t.whole_word ? ', whole-word masking' : ''}${t.kept_best_of ? `; the schedule ran to step ${t.kept_best_of.steps}, and the checkpoint kept is step ${t.steps}, the best held-out top-1 of the checkpoints taken every ${t.export_every * 60} seconds (\`--keep-best --export-every ${t.export_every}\`)` : ''}.`;
}

// A run's held-out quality in words: BERT's top-1 (also on its own window length when it trained on shorter ones),
// GPT-2's perplexity.
function heldOut(kind, t) {
  const old = corpusOf(t) === 'kjv+austen' ? ' (the original test split)' : '';
  if (kind !== 'bert') return `Held-out perplexity after it: ${t.perplexity.toFixed(1)}${old}.`;
  const own = t.eval_at_seq_len ? ` (${(100 * t.eval_at_seq_len.mlm_top1).toFixed(1)} % on windows of the ${t.seq_len} tokens it was trained on)` : '';
  return `Held-out top-1 after it: ${(100 * t.mlm_top1).toFixed(1)} % on 128-token windows${own}${old}.`;
}

function header(kind, cfg, t) {
  const runs = phases(t);
  const arch = kind === 'bert'
    ? `BERT-style masked-language model (Hugging Face \`BertForMaskedLM\`): ${cfg.num_hidden_layers} post-LN encoder layers, hidden size ${cfg.hidden_size}, ${cfg.num_attention_heads} heads, feed-forward ${cfg.intermediate_size}, ${cfg.max_position_embeddings} positions, GELU (erf); MLM head tied to the word embeddings.`
    : `GPT-2-style causal language model (Hugging Face \`GPT2LMHeadModel\`): ${cfg.n_layer} pre-LN decoder layers, hidden size ${cfg.n_embd}, ${cfg.n_head} heads, feed-forward ${cfg.n_inner ?? 4 * cfg.n_embd}, ${cfg.n_positions} positions, GELU (tanh); LM head tied to the token embeddings.`;
  const tok = kind === 'bert'
    ? "Tokenizer: the genuine bert-base-uncased WordPiece vocabulary (30,522 tokens, `vocab.txt`), so the same files and code path serve Google's bert-base-uncased."
    : "Tokenizer: byte-level BPE in GPT-2's file format (`vocab.json` + `merges.txt`), 8,192 tokens trained with GPT-2's algorithm (`tools/reference/tokenizers.py`) on the training split of the original KJV + Austen corpus, and kept when the World English Bible was added. A vocabulary of 8k instead of GPT-2's 50k makes the output layer 6× cheaper, so the same CPU hours train on about 4× more tokens; the files and the code path are exactly GPT-2's.";
  const out = (i) => (i === runs.length - 1 ? `models/wasmformer-${kind}-mini` : `build/${kind}-phase${i + 1}`);
  const cmds = runs.map((r, i) => `/usr/bin/python3 tools/train/train.py --model ${kind} --corpus ${corpusDir(r)} --out ${out(i)} ${i ? `--init ${out(i - 1)} ` : ''}${flags(kind, r)}`);
  const corpora = [...new Set(runs.map(corpusDir))].map((d) => `/usr/bin/python3 tools/train/corpus.py --out ${d}${d.endsWith('kjv-austen') ? ' --no-web' : ''}`);
  const words = ['First', 'Then', 'Then', 'Then', 'Then', 'Then'];
  const story = runs.map((r, i) => `${words[i]}, ${i ? 'from those weights (`--init`, a fresh optimizer)' : 'from scratch'}: ${run(kind, r, runs[i - 1])}${r.stopped ? ` ${r.stopped}` : ''}${i < runs.length - 1 ? ` ${heldOut(kind, r)}` : ''}`).join('\n\n');
  return `${arch}\n\n${tok}\n\n**These are small models trained by the wasmformer project on public-domain books. They are not Google's BERT
or OpenAI's GPT-2**, and know little beyond ${corpusOf(t) === 'kjv+austen' ? 'the King James Bible' : 'the Bible (King James and World English)'} and Jane Austen's novels. They
exist so that the demo, the command line and offline sites work with no network.

## Training

\`\`\`sh
apt-get install python3-torch libopenblas0-pthread python3-regex python3-numpy bible-kjv r-cran-janeaustenr libsword-utils sword-text-web
${corpora.join('\n')}
${cmds.join('\n')}
/usr/bin/python3 tools/reference/gguf_export.py models/wasmformer-${kind}-mini packages/models/wasmformer-${kind}-mini-q8_0.gguf
node tools/train/evaluate.mjs
\`\`\`

${runs.length > 1 ? `${runs.length} phases.\n\n` : ''}${story}

Runs given in minutes stopped at a wall-clock budget (\`--minutes\`, the cosine laid over minutes); \`--steps\` lays the same
schedule over steps, which reproduces them on any machine up to the small drift of the originals' throughput. A run with
\`--decay-start\` was run at its constant rate with a saved training state (\`--state\`) and its decay branched off from
that state; the one command above gives the same steps.${runs.some((r) => r.device) ? ` Runs on a GPU (\`--device cuda\`) draw their batches
on the GPU and compute in bf16, so they reproduce in distribution, not bit for bit: the same flags give a model of the
same quality, not the same weights. \`tools/train/bert/gpu.sh\` is the script that ran them on the GPU the project's
device tool lends some sessions (one H100, 15 minutes), where the first two phases shared the GPU with three other
shapes (\`tools/train/bert/README.md\`).` : ''}${kind === 'bert' ? ` Masking: 15 % of tokens (${t.whole_word ? 'whole words: all the pieces of a chosen word' : 'single pieces'}), 80 % [MASK] / 10 % random / 10 % unchanged; the MLM head runs at the masked positions only, with its training softmax over the vocabulary ids that occur in the training text (${t.softmax_ids.toLocaleString('en-US')} of 30,522; the others keep an output bias of −10⁴ and are never predicted).` : ''}

Files: \`model.safetensors\` (F16, ${mb(`models/wasmformer-${kind}-mini/model.safetensors`)} MB), \`packages/models/wasmformer-${kind}-mini-q8_0.gguf\` (Q8_0, ${mb(`packages/models/wasmformer-${kind}-mini-q8_0.gguf`)} MB).`;
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
  const pct = (x) => `${(100 * x).toFixed(1)} %`;
  const o = t.old_split;
  const ww = t.whole_word_eval;
  const quality = `On the test split (200 windows of 128 tokens, ${t.masked_tokens} masked tokens, 15 % masking with a fixed seed): **top-1 accuracy ${pct(t.mlm_top1)}**, **top-5 accuracy ${pct(t.mlm_top5)}**.${o ? ` On the original test split (KJV + Austen only, the measure of the earlier models): top-1 ${pct(o.mlm_top1)}, top-5 ${pct(o.mlm_top5)}.` : ''}${ww ? ` With whole words masked instead of single pieces (test split): top-1 ${pct(ww.mlm_top1)}, top-5 ${pct(ww.mlm_top5)}.` : ''}`;
  const card = `# wasmformer-bert-mini\n\n${header('bert', cfg, t)}\n\n## Held-out quality\n\n${quality}\n\n## Examples\n\nThe ten inputs were chosen before the model was evaluated (\`tools/train/examples.json\`); outputs from the engine (\`node tools/train/evaluate.mjs\`):\n\n${rows}\n${licenses(t)}\n`;
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
  const o = t.old_split;
  const card = `# wasmformer-gpt2-mini\n\n${header('gpt2', cfg, t)}\n\n## Held-out quality\n\nPerplexity on the test split: **${t.perplexity.toFixed(1)}** (${t.eval_tokens} tokens, windows of 256, per token of this 8k vocabulary).${o ? ` On the original test split (KJV + Austen only, the measure of the earlier models): **${o.perplexity.toFixed(1)}** (${o.eval_tokens} tokens).` : ''}\n\n## Examples\n\nThe ten prompts were chosen before the model was evaluated (\`tools/train/examples.json\`); continuations from the engine with\ntemperature 0.8, top-k 40, top-p 0.95, repetition penalty 1.1, seed 1, 40 new tokens (\`node tools/train/evaluate.mjs\`):\n\n${rows}\n${licenses(t)}\n`;
  writeFileSync(path.join(dir, 'README.md'), card);
  return card;
}

// node tools/train/evaluate.mjs [bert|gpt2]: both cards, or one
const only = process.argv[2];
if (!only || only === 'bert') console.log(await bertCard());
if (!only || only === 'gpt2') console.log(await gptCard());
