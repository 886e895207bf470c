// The demo page: fill-mask, streamed continuation, attention heatmap, model picker. All inference runs in the
// package's Web Worker, so the page stays responsive.
import { Model } from '../src/index.js';

const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);
// The bundled models: model folders next to the repository's demo, or (offline site) GGUF files embedded in
// script files that set globalThis.WF_MODELS, since a page opened from file:// can fetch nothing.
const embedded = (name) => {
  const m = globalThis.WF_MODELS?.[name];
  if (!m) return null;
  const bin = atob(m.base64);
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  return [new File([bytes], m.file)];
};
const BUNDLED = {
  bert: params.get('bert') ?? embedded('bert') ?? new URL('../../models/wasmformer-bert-mini/', import.meta.url).href,
  gpt2: params.get('gpt2') ?? embedded('gpt2') ?? new URL('../../models/wasmformer-gpt2-mini/', import.meta.url).href,
};

const state = { fm: null, gen: null, attention: null, tokens: [], running: null };

function setStatus(id, text) { $(id).textContent = text; }

function progress(e) {
  if (e.status === 'progress_total' && e.total) $('progress').value = e.progress;
  if (e.status === 'initiate') $('progress').value = 0;
}

// Loads any model the engine runs and puts it where its task is: a masked LM in the fill-mask box, a causal LM in
// the continuation box. The engine says what a model can do (info.tasks).
async function loadModel(source, label) {
  setStatus('model-status', `Loading ${label}…`);
  try {
    const t0 = performance.now();
    const m = await Model.load(source, { progress_callback: progress });
    const { info } = m;
    if (info.tasks.includes('fill-mask')) {
      await state.fm?.dispose();
      state.fm = m;
      fillLayerChoices(info);
    } else if (info.tasks.includes('text-generation')) {
      await state.gen?.dispose();
      state.gen = m;
    } else {
      await m.dispose();
      throw new Error(`this demo shows fill-mask and text-generation; the model supports ${info.tasks.join(', ') || 'no task'}`);
    }
    $('progress').value = 100;
    let cached = '';
    if (typeof caches !== 'undefined' && typeof source === 'string') {
      try { cached = ` ${(await (await caches.open('wasmformer-v1')).keys()).length} files in the browser cache for offline use.`; } catch {}
    }
    setStatus('model-status', `Loaded ${label}: ${info.architecture} (${info.tasks.join(', ')}), ${info.n_layer} layers × ${info.n_embd} wide, ${info.n_vocab} tokens, in ${Math.round(performance.now() - t0)} ms.${cached}`);
  } catch (e) {
    setStatus('model-status', `Could not load ${label}: ${e.message}`);
  }
}

function fillLayerChoices(info) {
  const layer = $('att-layer'), head = $('att-head');
  layer.replaceChildren(...Array.from({ length: info.n_layer }, (_, i) => new Option(String(i + 1), String(i))));
  head.replaceChildren(...Array.from({ length: info.n_head }, (_, i) => new Option(String(i + 1), String(i))));
  layer.value = String(info.n_layer - 1);
}

// ------------------------------------------------------------------------------------------------- fill-mask
async function runFill() {
  if (!state.fm) return setStatus('model-status', 'No BERT model loaded.');
  const text = $('fill-text').value;
  const out = $('fill-results');
  try {
    const layer = Number($('att-layer').value || 0);
    const { results, attention } = await state.fm.fill(text, { top_k: Number($('fill-topk').value) || 5, attention_layer: layer });
    state.attention = attention;
    state.tokens = await Promise.all((await state.fm.tokenizer.encode(text)).map((id) => state.fm.tokenizer.decode([id])));
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
    drawAttention();
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

function drawAttention() {
  const a = state.attention;
  const canvas = $('att-canvas');
  const ctx = canvas.getContext('2d');
  ctx.clearRect(0, 0, canvas.width, canvas.height);
  if (!a) return;
  const T = Math.round(Math.sqrt(a.data.length / a.heads));
  const head = Number($('att-head').value || 0);
  const margin = 90, cell = Math.max(4, Math.floor((canvas.width - margin) / T));
  ctx.font = '11px system-ui';
  ctx.fillStyle = '#333';
  for (let i = 0; i < T; ++i) {
    const label = (state.tokens[i] ?? '').slice(0, 12);
    ctx.textAlign = 'right';
    ctx.fillText(label, margin - 4, margin + i * cell + cell * 0.7);
    ctx.save();
    ctx.translate(margin + i * cell + cell * 0.7, margin - 4);
    ctx.rotate(-Math.PI / 3);
    ctx.textAlign = 'left';
    ctx.fillText(label, 0, 0);
    ctx.restore();
  }
  for (let i = 0; i < T; ++i)
    for (let j = 0; j < T; ++j) {
      const p = a.data[(head * T + i) * T + j];
      const v = Math.round(255 * (1 - Math.sqrt(p)));
      ctx.fillStyle = `rgb(${v},${v},255)`;
      ctx.fillRect(margin + j * cell, margin + i * cell, cell - 1, cell - 1);
    }
  canvas.setAttribute('aria-label', `Attention heatmap, layer ${a.layer + 1}, head ${head + 1}, ${T} tokens`);
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

// ---------------------------------------------------------------------------------------------------- wiring
$('fill-run').addEventListener('click', runFill);
$('gen-run').addEventListener('click', runGenerate);
$('gen-stop').addEventListener('click', () => state.running?.abort());
$('att-layer').addEventListener('change', runFill);
$('att-head').addEventListener('change', drawAttention);
$('load-url').addEventListener('click', () => $('model-url').value && loadModel($('model-url').value.trim(), $('model-url').value.trim()));
const drop = $('drop');
drop.addEventListener('click', () => $('files').click());
drop.addEventListener('keydown', (e) => { if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); $('files').click(); } });
drop.addEventListener('dragover', (e) => { e.preventDefault(); drop.classList.add('over'); });
drop.addEventListener('dragleave', () => drop.classList.remove('over'));
drop.addEventListener('drop', (e) => { e.preventDefault(); drop.classList.remove('over'); loadModel([...e.dataTransfer.files], 'dropped files'); });
$('files').addEventListener('change', (e) => loadModel([...e.target.files], 'chosen files'));

async function main() {
  const offline = globalThis.WF_MODELS ? 'Offline site: everything is in these files.' : 'Models are cached for offline use.';
  setStatus('engine-status', `Engine: WebAssembly SIMD in a Web Worker. ${offline}`);
  await loadModel(BUNDLED.bert, 'the bundled BERT model');
  await loadModel(BUNDLED.gpt2, 'the bundled GPT-2 model');
  const how = await (state.gen ?? state.fm)?.engineInfo();
  if (how) setStatus('engine-status', `Engine: WebAssembly SIMD in a Web Worker, ${how.threading}. ${offline}`);
  document.body.dataset.ready = 'true';
}
main();
