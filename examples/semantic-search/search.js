// The semantic-search page: the query is embedded in the browser (the engine in a Web Worker), then every verse is
// scored against it (int8 vectors with a scale each: cosine = scale · Σ q·x) and the best ten are shown, with the
// time each step took. Everything it needs is in the page's own script files (build.mjs writes them).
import { Model } from '../../web/src/index.js';

const $ = (id) => document.getElementById(id);
const bytes = (b64) => Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));

async function main() {
  const c = globalThis.WF_SEARCH_CORPUS;
  const E = c.dims, n = c.keys.length;
  const vectors = new Int8Array(bytes(c.vectors).buffer), scales = new Float32Array(bytes(c.scales).buffer);
  $('source').textContent = `${n} verses: ${c.source}.`;
  const t0 = performance.now();
  const files = Object.fromEntries(Object.entries(globalThis.WF_SEARCH_MODEL).map(([name, b64]) => [name, bytes(b64)]));
  const model = await Model.load(files);
  $('status').textContent = `Model loaded in ${Math.round(performance.now() - t0)} ms (${model.info.architecture}, ${E} dimensions).`;

  let seq = 0;
  const search = async () => {
    const query = $('query').value.trim();
    const mine = ++seq;
    if (!query) return void ($('results').textContent = '');
    const t1 = performance.now();
    const { data } = await model.embed(query, { pooling: 'mean', normalize: true });
    const t2 = performance.now();
    const scores = new Float32Array(n);
    for (let i = 0; i < n; i++) {
      let s = 0;
      for (let j = 0, o = i * E; j < E; j++) s += vectors[o + j] * data[j];
      scores[i] = s * scales[i];
    }
    const best = Array.from(scores.keys()).sort((a, b) => scores[b] - scores[a]).slice(0, 10);
    const t3 = performance.now();
    if (mine !== seq) return;  // a newer query is on its way
    $('results').replaceChildren(...best.map((i) => {
      const li = document.createElement('li');
      li.className = 'hit';
      li.dataset.key = c.keys[i];
      li.innerHTML = '<span class="score"></span> <b></b> <span class="text"></span>';
      li.querySelector('.score').textContent = scores[i].toFixed(3);
      li.querySelector('b').textContent = c.keys[i];
      li.querySelector('.text').textContent = c.texts[i];
      return li;
    }));
    $('timing').textContent = `query embedded in ${(t2 - t1).toFixed(1)} ms, ${n} verses ranked in ${(t3 - t2).toFixed(1)} ms`;
    document.body.dataset.searched = query;
  };
  let timer;
  $('query').addEventListener('input', () => {
    clearTimeout(timer);
    timer = setTimeout(search, 150);
  });
  $('form').addEventListener('submit', (e) => {
    e.preventDefault();
    search();
  });
  document.body.dataset.ready = 'true';
}
main().catch((e) => {
  $('status').textContent = `Failed: ${e.message}`;
  throw e;
});
