// The demo page: fill-mask, streamed continuation, chat, translation with its alignment, encoder tasks, attention
// heatmap, model picker. All inference runs in the package's Web Worker, so the page stays responsive.
import { Model } from '../src/index.js';

const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);
// The bundled models: model folders next to the repository's demo, or (offline site) GGUF files embedded in
// script files that set globalThis.WF_MODELS, since a page opened from file:// can fetch nothing.
const embedded = (name) => {
  const m = globalThis.WF_MODELS?.[name];
  if (!m) return null;
  const file = ({ file, base64 }) => {
    const bin = atob(base64);
    const bytes = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    return new File([bytes], file);
  };
  return (m.files ?? [m]).map(file);  // one GGUF file, or a Hugging Face folder's files
};
const BUNDLED = {
  bert: params.get('bert') ?? embedded('bert') ?? new URL('../../models/wasmformer-bert-mini/', import.meta.url).href,
  gpt2: params.get('gpt2') ?? embedded('gpt2') ?? new URL('../../models/wasmformer-gpt2-mini/', import.meta.url).href,
  embed: params.get('embed') ?? embedded('embed') ?? new URL('../../models/wasmformer-embed-mini/', import.meta.url).href,
  chat: params.get('chat') ?? embedded('chat') ?? new URL('../../models/wasmformer-chat-mini/', import.meta.url).href,
  translate: params.get('translate') ?? embedded('translate') ?? new URL('../../models/wasmformer-translate-en-es/', import.meta.url).href,
};
// The bundled translation model is stored in F16 (half the download); the demo runs it as q8_0, 4× less memory than
// f32 and faster, with the same translations of the examples. A model given by URL or dropped keeps dtype auto.
const BUNDLED_TRANSLATE_OPTIONS = params.get('translate') ? {} : { dtype: 'q8_0' };

const state = { fm: null, gen: null, chat: null, messages: [], enc: null, tr: null, alignment: null, attention: null, tokens: [], running: null };
// The encoder tasks the "Understand the text" box runs, and what its two text boxes mean for each.
const ENCODER_TASKS = {
  'feature-extraction': ['Similarity: query', 'Sentences to rank, one per line'],
  'text-classification': ['Text to classify', 'Second text of a pair (optional)'],
  'token-classification': ['Text to tag (named entities)', null],
  'question-answering': ['Question', 'Context'],
  'zero-shot-classification': ['Text', 'Candidate labels, one per line'],
};

function setStatus(id, text) { $(id).textContent = text; }

// Each task's tab says which model answers there: its name, shape, dtype, size and the engine's threads.
async function describeModel(tab, label, m) {
  const { info } = m;
  const mib = (info.weight_bytes / 2 ** 20).toFixed(1);
  let threads = '';
  try { threads = `; ${(await m.engineInfo()).threading}`; } catch { /* the line goes without it */ }
  $(`${tab}-model`).textContent = `Model: ${label.replace(/^the /, '')} — ${info.architecture}, ${info.n_layer} layers × ${info.n_embd}, dtype ${info.dtype}, ${mib} MiB of weights${threads}.`;
}

function progress(e) {
  if (e.status === 'progress_total' && e.total) $('progress').value = e.progress;
  if (e.status === 'initiate') $('progress').value = 0;
}

// Loads any model the engine runs and puts it where its task is: a masked LM in the fill-mask box, a causal LM with
// a chat template in the chat box, another causal LM in the continuation box. The engine says what a model can do
// (info.tasks, info.chat_templates).
async function loadModel(source, label, options = {}) {
  setStatus('model-status', `Loading ${label}…`);
  let tab = null;  // the task tab the model went to
  try {
    const t0 = performance.now();
    const m = await Model.load(source, { progress_callback: progress, ...options });
    const { info } = m;
    if (info.tasks.includes('fill-mask')) {
      await state.fm?.dispose();
      state.fm = m;
      state.fillAttention = null;  // the last input's attention was the previous model's
      tab = 'fill';
    } else if (info.tasks.includes('text-generation') && info.chat_templates.length) {
      await state.chat?.dispose();
      state.chat = m;
      tab = 'chat';
      newChat();
    } else if (info.tasks.includes('text-generation')) {
      await state.gen?.dispose();
      state.gen = m;
      tab = 'gen';
    } else if (info.tasks.includes('translation')) {
      await state.tr?.dispose();
      state.tr = m;
      tab = 'tr';
      $('tr-hint').textContent = `${label[0].toUpperCase() + label.slice(1)}: ${info.architecture}, ${info.n_layer} encoder layers × ${info.n_embd} wide${label.includes('bundled') ? ', trained by this project on public-domain Bibles (King James and World English → Reina-Valera 1909): it translates English into Spanish in their register' : ''}. The matrix shows which source tokens each translated token attended to (cross-attention).`;
    } else if (info.tasks.some((t) => t in ENCODER_TASKS)) {
      await state.enc?.dispose();
      state.enc = m;
      tab = 'enc';
      const tasks = info.tasks.filter((t) => t in ENCODER_TASKS);
      $('enc-task').replaceChildren(...tasks.map((t) => new Option(t, t)));
      $('enc-task').value = tasks.find((t) => t !== 'feature-extraction') ?? tasks[0];
      encoderTaskChanged();
    } else {
      await m.dispose();
      throw new Error(`this demo shows fill-mask, text-generation, translation and encoder tasks; the model supports ${info.tasks.join(', ') || 'no task'}`);
    }
    $('progress').value = 100;
    if (tab) describeModel(tab, label, m);
    let cached = '';
    if (typeof caches !== 'undefined' && typeof source === 'string') {
      try { cached = ` ${(await (await caches.open('wasmformer-v1')).keys()).length} files in the browser cache for offline use.`; } catch {}
    }
    setStatus('model-status', `Loaded ${label}: ${info.architecture} (${info.tasks.join(', ')}), ${info.n_layer} layers × ${info.n_embd} wide, ${info.n_vocab} tokens, in ${Math.round(performance.now() - t0)} ms.${cached}`);
  } catch (e) {
    setStatus('model-status', `Could not load ${label}: ${e.message}`);
  }
  return tab;
}


// ------------------------------------------------------------------------------------------------- fill-mask
async function runFill() {
  if (!state.fm) return setStatus('model-status', 'No BERT model loaded.');
  const text = $('fill-text').value;
  const out = $('fill-results');
  try {
    const t0 = performance.now();
    // the attention of the layer the explorer will show comes with the answer (one pass, not two)
    const layer = $('att-source').value === 'fill' ? Number($('att-layer').value) : state.fm.info.n_layer - 1;
    const { results, attention } = await state.fm.fill(text, { top_k: Number($('fill-topk').value) || 5, attention_layer: layer });
    state.fillAttention = attention;
    setStatus('fill-speed', `${Math.round(performance.now() - t0)} ms`);
    state.lastFill = text;
    out.replaceChildren(...results.map((list, m) => {
      const group = document.createElement('div');
      group.className = 'mask-group';
      const h = document.createElement('h3');
      h.textContent = results.length > 1 ? `Mask ${m + 1}` : 'Best words';
      group.append(h);
      for (const c of list) {
        const b = document.createElement('button');
        b.type = 'button';
        b.className = 'cand';
        b.setAttribute('aria-label', `${c.token_str}, ${(100 * c.score).toFixed(1)} percent; put it in the text`);
        const word = document.createElement('span');
        word.textContent = c.token_str;
        const bar = document.createElement('span');
        bar.className = 'bar';
        bar.style.width = `${Math.max(1, 100 * c.score)}%`;
        const pct = document.createElement('span');
        pct.textContent = `${(100 * c.score).toFixed(1)}%`;
        b.append(word, bar, pct);
        b.addEventListener('click', () => insertWord(m, c.token_str));
        group.append(b);
      }
      return group;
    }));
    await refreshAttention('fill');
  } catch (e) {
    out.textContent = e.message;
  }
}

function insertWord(maskIndex, word) {
  const t = $('fill-text');
  let n = -1;
  t.value = t.value.replace(/\[MASK\]/g, (m) => (++n === maskIndex ? word.replace(/^##/, '') : m));
  t.focus();
}

// --------------------------------------------------------------------------------------------- attention
// The attention explorer. Each source gives the matrices of its task's last input: fill-mask and continuation ask
// the model again for the chosen layer (attention_layer), translation keeps every layer of its last result.
//   { label, layers, heads, rows: [token], cols: [token], causal?, load(layer) → (head, i, j) → weight }
const att = { sources: new Map(), at: null, key: null };
const tokenLabels = async (model, text) =>
  Promise.all((await model.tokenizer.encode(text)).map((id) => model.tokenizer.decode([id])));

function attentionSources() {
  const out = new Map();
  if (state.fm && state.lastFill != null) out.set('fill', {
    label: 'Fill the mask: encoder self-attention', layers: state.fm.info.n_layer, heads: state.fm.info.n_head,
    async load(layer) {
      const a = state.fillAttention?.layer === layer ? state.fillAttention
        : (await state.fm.fill(state.lastFill, { top_k: 1, attention_layer: layer })).attention;
      state.fillAttention = a;
      const T = Math.round(Math.sqrt(a.data.length / a.heads));
      const rows = await tokenLabels(state.fm, state.lastFill);
      return { rows, cols: rows, at: (h, i, j) => a.data[(h * T + i) * T + j] };
    },
  });
  if (state.gen && state.lastPrompt) out.set('gen', {
    label: 'Continue: decoder self-attention over the prompt', layers: state.gen.info.n_layer, heads: state.gen.info.n_head,
    async load(layer) {
      const s = state.gen.generate(state.lastPrompt, { max_new_tokens: 1, attention_layer: layer });
      for await (const _ of s);  // eslint-disable-line no-unused-vars
      const a = s.result.attention;
      const T = Math.round(Math.sqrt(a.data.length / a.heads));
      const rows = await tokenLabels(state.gen, state.lastPrompt);
      return { rows, cols: rows, at: (h, i, j) => a.data[(h * T + i) * T + j] };
    },
  });
  if (state.alignment) {
    const a = state.alignment;
    out.set('tr', {
      label: 'Translate: cross-attention, translation → source', layers: a.layers, heads: a.heads,
      async load(layer) {
        return { rows: a.target_tokens, cols: a.source_tokens, at: (h, i, j) => a.weights[i][layer][h][j] };
      },
    });
  }
  return out;
}

// Called when a task has a new input (its name) or a model changed: the source list, then the view.
async function refreshAttention(changed) {
  att.sources = attentionSources();
  const sel = $('att-source');
  const keep = sel.value;
  sel.replaceChildren(...[...att.sources].map(([k, v]) => new Option(v.label, k)));
  sel.value = att.sources.has(keep) ? keep : att.sources.has(changed) ? changed : sel.options[0]?.value ?? '';
  if (sel.value === changed || sel.value !== keep) await attentionSourceChanged();
}

async function attentionSourceChanged() {
  const src = att.sources.get($('att-source').value);
  if (!src) return;
  const layer = $('att-layer'), head = $('att-head');
  const keepLayer = layer.value, keepHead = head.value;
  layer.replaceChildren(...Array.from({ length: src.layers }, (_, i) => new Option(String(i + 1), String(i))));
  head.replaceChildren(new Option('average', 'avg'), ...Array.from({ length: src.heads }, (_, i) => new Option(String(i + 1), String(i))));
  layer.value = Number(keepLayer) < src.layers ? keepLayer : String(src.layers - 1);
  head.value = keepHead === 'avg' || Number(keepHead) < src.heads ? keepHead || '0' : '0';
  await loadAttention();
}

async function loadAttention() {
  const key = $('att-source').value, src = att.sources.get(key);
  if (!src) return;
  const layer = Number($('att-layer').value);
  try {
    att.at = { ...(await src.load(layer)), key, layer, heads: src.heads, label: src.label };
    drawAttention();
  } catch (e) {
    setStatus('att-status', e.message);
  }
}

// The chosen head's (or the heads' average) weights as rows × cols.
function attentionMatrix() {
  const a = att.at, pick = $('att-head').value;
  const heads = pick === 'avg' ? Array.from({ length: a.heads }, (_, h) => h) : [Number(pick)];
  return a.rows.map((_, i) => a.cols.map((_, j) => heads.reduce((sum, h) => sum + a.at(h, i, j), 0) / heads.length));
}

const shortLabel = (t) => (t.trim() || '␣').slice(0, 14);

function drawAttention() {
  const a = att.at;
  const canvas = $('att-canvas');
  const ctx = canvas.getContext('2d');
  if (!a) return ctx.clearRect(0, 0, canvas.width, canvas.height);
  const m = attentionMatrix(), R = a.rows.length, C = a.cols.length;
  const zoom = Number($('att-zoom').value);
  const lines = document.querySelector('input[name=att-view]:checked').value === 'lines';
  const head = $('att-head').value === 'avg' ? 'heads averaged' : `head ${Number($('att-head').value) + 1}`;
  canvas.classList.toggle('fit', zoom === 0);
  ctx.font = '11px system-ui';
  if (lines) {
    // BertViz's head view: tokens in two columns, a line from each attending token (left) to each token it attends
    // to (right), as opaque as the weight; the focused row's lines alone when one is focused
    const step = Math.max(14, zoom || 18), margin = 110, gap = 220;
    canvas.width = 2 * margin + gap;
    canvas.height = 10 + Math.max(R, C) * step;
    ctx.clearRect(0, 0, canvas.width, canvas.height);
    const y = (k) => 10 + k * step + step / 2;
    for (let i = 0; i < R; ++i) {
      if (att.focus != null && att.focus !== i) continue;
      for (let j = 0; j < C; ++j) {
        if (m[i][j] < 0.01) continue;
        ctx.strokeStyle = `rgba(40, 90, 220, ${Math.min(1, m[i][j] * (att.focus != null ? 1.5 : 1))})`;
        ctx.lineWidth = att.focus != null ? 2 : 1.2;
        ctx.beginPath();
        ctx.moveTo(margin, y(i));
        ctx.lineTo(margin + gap, y(j));
        ctx.stroke();
      }
    }
    ctx.fillStyle = '#222';
    ctx.textBaseline = 'middle';
    a.rows.forEach((t, i) => { ctx.textAlign = 'right'; ctx.font = `${att.focus === i ? 'bold ' : ''}11px system-ui`; ctx.fillText(shortLabel(t), margin - 6, y(i)); });
    ctx.font = '11px system-ui';
    a.cols.forEach((t, j) => { ctx.textAlign = 'left'; ctx.fillText(shortLabel(t), margin + gap + 6, y(j)); });
    att.geometry = { lines: true, margin, step, rows: R };
  } else {
    // the matrix and its slanted column labels; labels thin out when the cells are too small to hold them
    const cell = zoom || Math.max(6, Math.min(28, Math.floor(560 / Math.max(R, C))));
    const margin = 100, every = Math.ceil(10 / cell);
    canvas.width = margin + C * cell + 80;
    canvas.height = margin + R * cell + 4;
    ctx.clearRect(0, 0, canvas.width, canvas.height);
    ctx.fillStyle = '#222';
    ctx.textBaseline = 'alphabetic';
    a.rows.forEach((t, i) => { if (i % every === 0) { ctx.textAlign = 'right'; ctx.fillText(shortLabel(t), margin - 4, margin + i * cell + cell * 0.7); } });
    a.cols.forEach((t, j) => {
      if (j % every) return;
      ctx.save();
      ctx.translate(margin + j * cell + cell * 0.7, margin - 4);
      ctx.rotate(-Math.PI / 3);
      ctx.textAlign = 'left';
      ctx.fillText(shortLabel(t), 0, 0);
      ctx.restore();
    });
    for (let i = 0; i < R; ++i)
      for (let j = 0; j < C; ++j) {
        const v = Math.round(255 * (1 - Math.sqrt(m[i][j])));
        ctx.fillStyle = `rgb(${v},${v},255)`;
        ctx.fillRect(margin + j * cell, margin + i * cell, cell - 1, cell - 1);
      }
    att.geometry = { lines: false };
  }
  canvas.setAttribute('aria-label', `${a.label}, layer ${a.layer + 1}, ${head}, ${R} × ${C} tokens, as ${lines ? 'lines' : 'a heatmap'}`);
  setStatus('att-status', `${a.label}: layer ${a.layer + 1}, ${head}; ${R} × ${C} tokens.`);
}

function download(name, blob) {
  const a = document.createElement('a');
  a.href = URL.createObjectURL(blob);
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 10000);
}

// ------------------------------------------------------------------------------------------------ generation
async function runGenerate() {
  if (!state.gen) return setStatus('model-status', 'No GPT-2 model loaded.');
  const ctl = new AbortController();
  state.running = ctl;
  $('gen-run').disabled = true;
  $('gen-stop').disabled = false;
  const out = $('gen-output');
  const prompt = $('gen-prompt').value;
  const p = document.createElement('span');
  p.className = 'prompt';
  p.textContent = prompt;
  const cont = document.createElement('span');
  cont.id = 'gen-continuation';
  out.replaceChildren(p, cont);
  setStatus('gen-speed', 'generating…');
  try {
    const s = state.gen.generate(prompt, {
      max_new_tokens: Number($('gen-max').value), do_sample: $('gen-sample').checked, temperature: Number($('gen-temp').value),
      top_k: Number($('gen-topk').value), top_p: Number($('gen-topp').value), repetition_penalty: Number($('gen-rep').value),
      seed: Number($('gen-seed').value), signal: ctl.signal,
    });
    for await (const piece of s) cont.textContent += piece;
    const r = s.result;
    setStatus('gen-speed', `${r.tokens.length} tokens, ${r.timings.tokens_per_second.toFixed(1)} tokens/s (${r.finish_reason})`);
    out.dataset.finish = r.finish_reason;
    state.lastPrompt = prompt;
    await refreshAttention('gen');
  } catch (e) {
    if (e.name === 'AbortError' && e.result) {  // Stop: the AbortError carries what was generated
      setStatus('gen-speed', `${e.result.tokens.length} tokens (aborted)`);
      out.dataset.finish = 'aborted';
    } else setStatus('gen-speed', e.message);
  } finally {
    $('gen-run').disabled = false;
    $('gen-stop').disabled = true;
    state.running = null;
  }
}

// ------------------------------------------------------------------------------------------------------ chat
// The conversation so far is state.messages; each reply is streamed into the log and appended to it.
function chatEntry(role, text) {
  const li = document.createElement('li');
  li.className = role;
  li.textContent = text;
  li.setAttribute('aria-label', `${role === 'user' ? 'You' : 'Model'}: ${text}`);
  $('chat-log').append(li);
  return li;
}

function newChat() {
  state.messages = [];
  $('chat-log').replaceChildren();
  setStatus('chat-speed', '');
}

async function runChat() {
  if (!state.chat) return setStatus('model-status', 'No chat model loaded.');
  const text = $('chat-input').value.trim();
  if (!text || state.running) return;
  const ctl = new AbortController();
  state.running = ctl;
  $('chat-send').disabled = true;
  $('chat-stop').disabled = false;
  const messages = [...state.messages, { role: 'user', content: text }];
  chatEntry('user', text);
  const reply = chatEntry('assistant', '');
  reply.setAttribute('aria-busy', 'true');
  setStatus('chat-speed', 'answering…');
  let answer = '';
  try {
    const s = state.chat.chat(messages, { max_new_tokens: 200, signal: ctl.signal });
    for await (const piece of s) reply.textContent = answer += piece;
    const r = s.result;
    setStatus('chat-speed', `${r.tokens.length} tokens, ${r.timings.tokens_per_second.toFixed(1)} tokens/s (${r.finish_reason})`);
    reply.dataset.finish = r.finish_reason;
  } catch (e) {
    if (e.name === 'AbortError') {
      setStatus('chat-speed', 'stopped');
      reply.dataset.finish = 'aborted';
    } else {
      reply.textContent = e.message;
      reply.classList.add('error');
      answer = '';
    }
  } finally {
    reply.removeAttribute('aria-busy');
    reply.setAttribute('aria-label', `Model: ${reply.textContent}`);
    if (answer) state.messages = [...messages, { role: 'assistant', content: answer }];
    $('chat-input').value = '';
    $('chat-send').disabled = false;
    $('chat-stop').disabled = true;
    state.running = null;
  }
}

// ------------------------------------------------------------------------------------------------ translation
async function runTranslate() {
  if (!state.tr) return setStatus('tr-speed', 'No translation model loaded.');
  const t0 = performance.now();
  try {
    const [[best]] = await state.tr.translate($('tr-text').value, { num_beams: Number($('tr-beams').value), output_attentions: true, max_new_tokens: 128 });
    $('tr-output').textContent = best.translation_text;
    $('tr-output').dataset.finish = best.finish_reason;
    state.alignment = best.cross_attentions;
    $('tr-canvas').hidden = false;
    const { layers, heads } = best.cross_attentions;
    const keep = $('tr-layer').value;
    $('tr-layer').replaceChildren(new Option('average of every layer and head', 'avg'),
      ...Array.from({ length: layers }, (_, l) => new Option(`layer ${l + 1}, heads averaged`, `l${l}`)),
      ...Array.from({ length: layers * heads }, (_, k) => new Option(`layer ${Math.floor(k / heads) + 1}, head ${(k % heads) + 1}`, `h${k}`)));
    if ([...$('tr-layer').options].some((o) => o.value === keep)) $('tr-layer').value = keep;
    drawAlignment();
    await refreshAttention('tr');
    setStatus('tr-speed', `${best.token_ids.length} tokens in ${Math.round(performance.now() - t0)} ms`);
  } catch (e) {
    $('tr-output').textContent = e.message;
  }
}

// The cross-attention as a matrix: a row per translated token, a column per source token, darker = more attention;
// averaged over every layer and head, over one layer's heads, or one head.
function drawAlignment() {
  const a = state.alignment;
  const canvas = $('tr-canvas');
  const ctx = canvas.getContext('2d');
  if (!a) return ctx.clearRect(0, 0, canvas.width, canvas.height);
  const S = a.source_tokens.length, T = a.target_tokens.length;
  const pick = $('tr-layer').value;
  const cellOf = (t, s) => {
    let sum = 0, n = 0;
    a.weights[t].forEach((layer, l) => layer.forEach((head, h) => {
      if (pick === 'avg' || pick === `l${l}` || pick === `h${l * a.heads + h}`) sum += head[s], n++;
    }));
    return sum / n;
  };
  const margin = 100, cell = Math.max(10, Math.min(28, Math.floor(560 / Math.max(S, T))));
  canvas.width = margin + S * cell + 80;
  canvas.height = margin + T * cell + 4;
  ctx.clearRect(0, 0, canvas.width, canvas.height);
  ctx.font = '11px system-ui';
  ctx.fillStyle = '#333';
  a.source_tokens.forEach((tok, s) => {
    ctx.save();
    ctx.translate(margin + s * cell + cell * 0.7, margin - 4);
    ctx.rotate(-Math.PI / 3);
    ctx.textAlign = 'left';
    ctx.fillText(tok.trim().slice(0, 14) || '␣', 0, 0);
    ctx.restore();
  });
  a.target_tokens.forEach((tok, t) => {
    ctx.textAlign = 'right';
    ctx.fillStyle = '#333';
    ctx.fillText(tok.trim().slice(0, 14) || '␣', margin - 4, margin + t * cell + cell * 0.7);
    for (let s = 0; s < S; ++s) {
      const v = Math.round(255 * (1 - Math.sqrt(cellOf(t, s))));
      ctx.fillStyle = `rgb(${v},${v},255)`;
      ctx.fillRect(margin + s * cell, margin + t * cell, cell - 1, cell - 1);
    }
  });
  canvas.setAttribute('aria-label', `Cross-attention: ${T} translated tokens (rows) over ${S} source tokens (columns), ${$('tr-layer').selectedOptions[0]?.text ?? ''}`);
}

// ---------------------------------------------------------------------------------------------- encoder tasks
function encoderTaskChanged() {
  const [a, b] = ENCODER_TASKS[$('enc-task').value] ?? ['Text', null];
  $('enc-text-label').textContent = a;
  $('enc-text2-label').textContent = b ?? '';
  $('enc-text2').hidden = !b;
}

const lines = (s) => s.split('\n').map((l) => l.trim()).filter(Boolean);
const row = (cls, ...parts) => {
  const div = document.createElement('div');
  div.className = cls;
  for (const p of parts) {
    const span = document.createElement('span');
    span.textContent = p;
    div.append(span, ' ');
  }
  return div;
};

async function runEncoder() {
  if (!state.enc) return setStatus('model-status', 'No encoder model loaded.');
  const task = $('enc-task').value, text = $('enc-text').value, text2 = $('enc-text2').value;
  const out = $('enc-results');
  const t0 = performance.now();
  try {
    let rows = [];
    if (task === 'feature-extraction') {
      const sentences = lines(text2);
      const { data, dims } = await state.enc.embed([text, ...sentences], { pooling: 'mean', normalize: true });
      const E = dims[1], q = data.subarray(0, E);
      const scored = sentences.map((s, i) => [s, q.reduce((acc, x, j) => acc + x * data[(i + 1) * E + j], 0)]).sort((a, b) => b[1] - a[1]);
      rows = scored.map(([s, score]) => row('enc-row', score.toFixed(3), s));
    } else if (task === 'text-classification') {
      const [labels] = await state.enc.classify(text2.trim() ? { text, text_pair: text2 } : text, { top_k: null });
      rows = labels.map((l) => row('enc-row', l.score.toFixed(3), l.label));
    } else if (task === 'token-classification') {
      const [entities] = await state.enc.classifyTokens(text, { aggregation_strategy: 'simple' });
      rows = entities.map((e) => row('enc-row', e.score.toFixed(3), e.entity_group, `“${text.slice(e.start, e.end)}”`));
      if (!rows.length) rows = [row('enc-row', 'no entities')];
    } else if (task === 'question-answering') {
      const [answers] = await state.enc.answer(text, text2, { top_k: 3 });
      rows = answers.map((a) => row('enc-row', a.score.toFixed(3), `“${a.answer}”`, `(characters ${a.start}–${a.end})`));
    } else if (task === 'zero-shot-classification') {
      const [r] = await state.enc.zeroShot(text, lines(text2));
      rows = r.labels.map((l, i) => row('enc-row', r.scores[i].toFixed(3), l));
    }
    out.replaceChildren(...rows);
    setStatus('enc-speed', `${Math.round(performance.now() - t0)} ms`);
  } catch (e) {
    out.replaceChildren(row('enc-row error', e.message));
  }
}

// ---------------------------------------------------------------------------------------------------- wiring
$('enc-run').addEventListener('click', runEncoder);
$('tr-run').addEventListener('click', runTranslate);
$('tr-layer').addEventListener('change', drawAlignment);
$('enc-task').addEventListener('change', encoderTaskChanged);
$('fill-run').addEventListener('click', runFill);
$('gen-run').addEventListener('click', runGenerate);
$('gen-stop').addEventListener('click', () => state.running?.abort());
$('chat-send').addEventListener('click', runChat);
$('chat-stop').addEventListener('click', () => state.running?.abort());
$('chat-new').addEventListener('click', newChat);
$('chat-input').addEventListener('keydown', (e) => { if (e.key === 'Enter' && !e.shiftKey) { e.preventDefault(); runChat(); } });
$('att-source').addEventListener('change', attentionSourceChanged);
$('att-layer').addEventListener('change', loadAttention);
$('att-head').addEventListener('change', drawAttention);
$('att-zoom').addEventListener('input', () => {
  $('att-zoom').setAttribute('aria-valuetext', $('att-zoom').value === '0' ? 'fit' : `${$('att-zoom').value} pixels a token`);
  drawAttention();
});
for (const r of document.querySelectorAll('input[name=att-view]')) r.addEventListener('change', () => { att.focus = null; drawAttention(); });
// the lines view: the row under the pointer is followed alone
$('att-canvas').addEventListener('pointermove', (e) => {
  const g = att.geometry;
  if (!g?.lines) return;
  const r = $('att-canvas').getBoundingClientRect();
  const yy = (e.clientY - r.top) * ($('att-canvas').height / r.height);
  const i = Math.floor((yy - 10) / g.step);
  const focus = (e.clientX - r.left) * ($('att-canvas').width / r.width) < g.margin + 20 && i >= 0 && i < g.rows ? i : null;
  if (focus !== att.focus) { att.focus = focus; drawAttention(); }
});
// and by keyboard: ↑ / ↓ on the focused view move the followed row, Escape shows every line again
$('att-canvas').addEventListener('keydown', (e) => {
  const g = att.geometry;
  if (!g?.lines || !['ArrowUp', 'ArrowDown', 'Escape'].includes(e.key)) return;
  e.preventDefault();
  att.focus = e.key === 'Escape' ? null : Math.max(0, Math.min(g.rows - 1, (att.focus ?? -1) + (e.key === 'ArrowUp' ? -1 : 1)));
  drawAttention();
});
$('att-canvas').addEventListener('pointerleave', () => { if (att.focus != null) { att.focus = null; drawAttention(); } });
$('att-png').addEventListener('click', () => $('att-canvas').toBlob((b) => b && download('attention.png', b)));
$('att-json').addEventListener('click', () => {
  const a = att.at;
  if (!a) return;
  const json = { task: a.key, what: a.label, layer: a.layer, head: $('att-head').value === 'avg' ? 'average' : Number($('att-head').value),
    row_tokens: a.rows, column_tokens: a.cols, weights: attentionMatrix() };
  download('attention.json', new Blob([JSON.stringify(json)], { type: 'application/json' }));
});
// Tabs, one task at a time (the WAI-ARIA tabs pattern: arrow keys, Home and End move between them); the address's
// #hash names the open tab, so that a tab can be linked to.
const tabs = [...document.querySelectorAll('[role=tab]')];
function openTab(tab, { focus = false } = {}) {
  for (const t of tabs) {
    const on = t === tab;
    t.setAttribute('aria-selected', String(on));
    t.tabIndex = on ? 0 : -1;
    $(t.getAttribute('aria-controls')).hidden = !on;
  }
  if (focus) tab.focus();
  const hash = '#' + tab.id.replace(/-tab$/, '');
  if (location.hash !== hash) history.replaceState(null, '', hash);
}
for (const t of tabs) {
  t.addEventListener('click', () => openTab(t));
  t.addEventListener('keydown', (e) => {
    const i = tabs.indexOf(t);
    const to = { ArrowRight: i + 1, ArrowLeft: i - 1, Home: 0, End: tabs.length - 1 }[e.key];
    if (to === undefined) return;
    e.preventDefault();
    openTab(tabs[(to + tabs.length) % tabs.length], { focus: true });
  });
}
const linked = $(location.hash.slice(1) + '-tab');
openTab(tabs.includes(linked) ? linked : new URLSearchParams(location.search).has('translate') ? $('tr-tab') : tabs[0]);
const loadAndShow = async (source, label) => {
  const tab = await loadModel(source, label);
  if (tab) openTab($(tab + '-tab'));
};

// the theme: the system's (prefers-color-scheme) until the button picks the other; the pick is remembered
const themeButton = $('theme');
const systemDark = () => globalThis.matchMedia?.('(prefers-color-scheme: dark)').matches ?? false;
function applyTheme(pick) {
  if (pick) document.documentElement.dataset.theme = pick;
  else delete document.documentElement.dataset.theme;
  const dark = pick ? pick === 'dark' : systemDark();
  themeButton.textContent = dark ? 'Light theme' : 'Dark theme';
  themeButton.setAttribute('aria-pressed', String(dark));
}
const storedTheme = (() => { try { return localStorage.getItem('wasmformer-theme'); } catch { return null; } })();
applyTheme(storedTheme === 'dark' || storedTheme === 'light' ? storedTheme : null);
themeButton.addEventListener('click', () => {
  const next = (document.documentElement.dataset.theme ?? (systemDark() ? 'dark' : 'light')) === 'dark' ? 'light' : 'dark';
  try { localStorage.setItem('wasmformer-theme', next); } catch { /* storage refused: this visit only */ }
  applyTheme(next);
});
$('load-url').addEventListener('click', () => $('model-url').value && loadAndShow($('model-url').value.trim(), $('model-url').value.trim()));
const drop = $('drop');
drop.addEventListener('click', () => $('files').click());
drop.addEventListener('keydown', (e) => { if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); $('files').click(); } });
drop.addEventListener('dragover', (e) => { e.preventDefault(); drop.classList.add('over'); });
drop.addEventListener('dragleave', () => drop.classList.remove('over'));
drop.addEventListener('drop', (e) => { e.preventDefault(); drop.classList.remove('over'); loadAndShow([...e.dataTransfer.files], 'dropped files'); });
$('files').addEventListener('change', (e) => loadAndShow([...e.target.files], 'chosen files'));

async function main() {
  const offline = globalThis.WF_MODELS ? 'Offline site: everything is in these files.' : 'Models are cached for offline use.';
  setStatus('engine-status', `Engine: WebAssembly SIMD in a Web Worker. ${offline}`);
  await loadModel(BUNDLED.bert, 'the bundled BERT model');
  await loadModel(BUNDLED.embed, 'the bundled embedding model');
  await loadModel(BUNDLED.chat, 'the bundled chat model');
  await loadModel(BUNDLED.translate, params.get('translate') ? 'the translation model' : 'the bundled translation model', BUNDLED_TRANSLATE_OPTIONS);
  await loadModel(BUNDLED.gpt2, 'the bundled GPT-2 model');
  const how = await (state.gen ?? state.fm)?.engineInfo();
  if (how) setStatus('engine-status', `Engine: WebAssembly ${how.simd === 'relaxed' ? 'relaxed SIMD' : 'SIMD'} in a Web Worker, ${how.threading}. ${offline}`);
  // first visit: every box shows its example's result without a click
  if (state.fm) await runFill();
  if (state.enc) await runEncoder();
  if (state.chat) await runChat();
  if (state.gen) await runGenerate();
  if (state.tr) await runTranslate();
  document.body.dataset.ready = 'true';
}
main();
