// The demo page in headless Chromium (Debian's /usr/bin/chromium, driven by playwright-core): on the first visit every
// box shows its example's result without a click; fill-mask, a chat with the bundled chat model and a seeded
// continuation render, Stop ends a generation, the heatmap draws; with COOP/COEP and without; under the strict CSP
// the server sends. The test fails on any page error, console error, or request leaving localhost.
import assert from 'node:assert/strict';
import { fork } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';

import { root } from '../js/helpers.mjs';
import { launch, watch } from './helpers.mjs';

const ARTIFACTS = path.join(root, 'build/artifacts');
const MODELS = process.env.WF_DEMO_MODELS ?? 'bundled';  // "fixtures": the tiny random-weight fixtures
let browser;

async function startServer(extra = []) {
  const child = fork(path.join(root, 'scripts/serve.mjs'), ['--port', '0', '--quiet', ...extra], { stdio: 'ignore' });
  const port = await new Promise((resolve, reject) => {
    child.once('message', (m) => resolve(m.port));
    child.once('exit', (c) => reject(new Error(`server exited with ${c}`)));
  });
  return { url: `http://127.0.0.1:${port}`, close: () => child.kill() };
}

async function openDemo(server, extra = '', contextOptions = {}) {
  const context = await browser.newContext(contextOptions);
  const page = await context.newPage();
  const problems = await watch(context, page, (u) => u.hostname === '127.0.0.1' || u.protocol === 'data:' || u.protocol === 'blob:');
  const q = MODELS === 'fixtures' ? '?bert=/tests/data/fixtures/bert-tiny/&gpt2=/tests/data/fixtures/gpt2-tiny/&embed=/tests/data/fixtures/bert-tiny-st/' : '';
  await page.goto(`${server.url}/web/demo/${q}${extra ? (q ? '&' : '?') + extra : ''}`);
  await page.waitForSelector('body[data-ready="true"]', { timeout: 60000 });
  return { page, context, problems };
}

// the demo shows one task at a time: its tab first
const openTab = (page, name) => page.click(`#${name}-tab`);

// The attention explorer's export: the JSON it downloads, and the PNG's size.
async function saveAttention(page) {
  const [json] = await Promise.all([page.waitForEvent('download'), page.click('#att-json')]);
  const data = JSON.parse(readFileSync(await json.path(), 'utf8'));
  const [png] = await Promise.all([page.waitForEvent('download'), page.click('#att-png')]);
  const bytes = readFileSync(await png.path());
  assert.deepEqual([...bytes.subarray(1, 4)].map((c) => String.fromCharCode(c)).join(''), 'PNG');
  return data;
}
// blue pixels on a canvas (the heatmaps' cells, the head view's lines)
const coloured = (page, sel) => page.$eval(sel, (c) => {
  const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
  let n = 0;
  for (let i = 0; i < d.length; i += 4) if (d[i + 3] > 0 && d[i] < 250 && d[i + 2] > 200) n++;
  return n;
});
const rowSumsAreOne = (w) => w.every((row) => Math.abs(row.reduce((a, b) => a + b, 0) - 1) < 1e-3);

before(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  browser = await launch();
});
after(async () => { await browser?.close(); });

for (const isolation of [true, false]) {
  test(`demo page works ${isolation ? 'with COOP/COEP (cross-origin isolated)' : 'without COOP/COEP'}, under the strict CSP`, async () => {
    const server = await startServer(isolation ? [] : ['--no-isolation']);
    try {
      const { page, context, problems } = await openDemo(server);
      assert.equal(await page.evaluate(() => self.crossOriginIsolated), isolation);
      assert.match(await page.textContent('#model-status'), /Loaded .*gpt2/);
      // threads where the page is cross-origin isolated, one thread and the reason elsewhere
      assert.match(await page.textContent('#engine-status'), isolation ? /\d+ threads \(pthreads\)/ : /one thread: the page is not cross-origin isolated/);

      // first visit: every box shows its example's result without a click
      assert.equal(await page.$$eval('.cand', (c) => c.length), 5);
      assert.equal(await page.$$eval('.enc-row', (r) => r.length), 5);
      assert.equal(await page.$eval('.chat-log li.assistant', (li) => li.dataset.finish), 'eos');
      assert.ok((await page.textContent('.chat-log li.assistant')).length > 10);
      assert.ok(await page.$eval('#gen-output', (o) => o.dataset.finish));
      assert.ok((await page.textContent('#gen-continuation')).length > 0);
      // the bundled English → Spanish model (run as q8_0) translated the example, Hosea 6:6 (a book held out of its training), and drew its alignment
      assert.ok(await page.$eval('#tr-output', (o) => o.dataset.finish));
      assert.match(await page.textContent('#tr-output'), /misericordia/);
      assert.match(await page.textContent('#tr-model'), /marian.*dtype q8_0/);
      assert.ok(await coloured(page, '#tr-canvas') > 100, 'alignment drawn');
      if (isolation) await page.screenshot({ path: path.join(ARTIFACTS, 'demo-first-visit.png'), fullPage: true });

      // each task's tab names its model, dtype, size and the engine's threads; fill-mask says how long it took
      for (const t of ['fill', 'gen', 'chat', 'enc', 'tr'])
        assert.match(await page.textContent(`#${t}-model`), /^Model: .+ — \w+, \d+ layers × \d+, dtype .+, [\d.]+ MiB of weights; .*thread/, t);
      assert.match(await page.textContent('#fill-speed'), /^\d+ ms$/);

      // the tabs: the first visit opens on fill-mask, one panel at a time, the address names the tab
      assert.deepEqual(await page.$$eval('[role=tabpanel]', (p) => p.filter((x) => !x.hidden).map((x) => x.id)), ['fill-section']);
      await openTab(page, 'chat');
      assert.deepEqual(await page.$$eval('[role=tabpanel]', (p) => p.filter((x) => !x.hidden).map((x) => x.id)), ['chat-section']);
      assert.match(page.url(), /#chat$/);
      await page.focus('#chat-tab');
      await page.keyboard.press('ArrowRight');  // arrow keys move between tabs and open them
      assert.equal(await page.evaluate(() => document.activeElement.id), 'tr-tab');
      assert.equal(await page.isVisible('#tr-section'), true);

      // fill-mask: candidates with probability bars; clicking one puts it in the text
      await openTab(page, 'fill');
      await page.$eval('#fill-results', (r) => r.replaceChildren());
      await page.fill('#fill-text', 'And God said, Let there be [MASK].');
      await page.click('#fill-run');
      await page.waitForSelector('.cand');
      const words = await page.$$eval('.cand span:first-child', (s) => s.map((x) => x.textContent));
      assert.equal(words.length, 5);
      // the heatmap has colour in it
      assert.ok(await coloured(page, '#att-canvas') > 100, 'heatmap drawn');
      await page.click('.cand');
      assert.doesNotMatch(await page.inputValue('#fill-text'), /\[MASK\]/);

      // the attention explorer: the fill-mask input's self-attention and the prompt's (causal) in continuation, per
      // layer and head or the heads' average, as a heatmap or as lines; saved as PNG and JSON
      await openTab(page, 'att');
      assert.deepEqual(await page.$$eval('#att-source option', (o) => o.map((x) => x.value)), ['fill', 'gen', 'tr']);
      await page.selectOption('#att-head', 'avg');
      const fillJson = await saveAttention(page);
      assert.equal(fillJson.task, 'fill');
      assert.equal(fillJson.head, 'average');
      assert.equal(fillJson.row_tokens.length, fillJson.weights.length);
      assert.deepEqual(fillJson.row_tokens, fillJson.column_tokens);
      assert.ok(rowSumsAreOne(fillJson.weights), "each token's attention sums to 1");
      await page.selectOption('#att-source', 'gen');
      await page.waitForFunction(() => /^Continue/.test(document.querySelector('#att-status').textContent));
      await page.selectOption('#att-layer', '0');
      await page.waitForFunction(() => /layer 1,/.test(document.querySelector('#att-status').textContent));
      const genJson = await saveAttention(page);
      assert.equal(genJson.task, 'gen');
      assert.equal(genJson.layer, 0);
      assert.ok(rowSumsAreOne(genJson.weights));
      assert.ok(genJson.weights.every((row, i) => row.every((w, j) => j <= i || w === 0)), 'a prompt token attends only to those before it');
      await page.check('input[name=att-view][value=lines]');
      assert.match(await page.getAttribute('#att-canvas', 'aria-label'), /as lines/);
      await page.focus('#att-canvas');
      await page.keyboard.press('ArrowDown');
      assert.ok(await coloured(page, '#att-canvas') > 20, 'lines drawn');
      await page.keyboard.press('Escape');
      await page.check('input[name=att-view][value=heatmap]');
      await page.fill('#att-zoom', '30');
      await page.dispatchEvent('#att-zoom', 'input');
      assert.ok(await page.$eval('#att-canvas', (c) => c.width) > 30 * genJson.column_tokens.length, 'zoomed: 30 px a token, scrolled in its box');
      if (isolation) await page.screenshot({ path: path.join(ARTIFACTS, 'demo-attention.png'), fullPage: true });
      await openTab(page, 'fill');
      if (isolation) await page.screenshot({ path: path.join(ARTIFACTS, 'demo-fill-mask.png'), fullPage: true });

      // sentence similarity with the bundled embedding model: the verse about creation answers the question first
      await openTab(page, 'enc');
      assert.equal(await page.inputValue('#enc-task'), 'feature-extraction');
      await page.$eval('#enc-results', (r) => r.replaceChildren());
      await page.click('#enc-run');
      await page.waitForSelector('.enc-row');
      const ranked = await page.$$eval('.enc-row', (rows) => rows.map((r) => r.textContent));
      assert.equal(ranked.length, 5);
      if (MODELS === 'bundled') assert.match(ranked[0], /In the beginning God created the heaven and the earth/);

      // chat with the bundled chat model: a held-out verse gets PyTorch's greedy reply (the model's f32 folder), a
      // second turn is answered in the same conversation, Enter sends, New chat empties the log
      const { verses } = JSON.parse(readFileSync(path.join(root, 'tests/data/chat-mini/greedy.json'), 'utf8'));
      await openTab(page, 'chat');
      await page.click('#chat-new');  // the first visit's example conversation goes
      assert.equal(await page.$$eval('.chat-log li', (l) => l.length), 0);
      const send = async (text, n, how = 'click') => {
        await page.fill('#chat-input', text);
        if (how === 'click') await page.click('#chat-send');
        else await page.press('#chat-input', 'Enter');
        await page.waitForFunction((k) => document.querySelectorAll('.chat-log li.assistant')[k]?.dataset.finish, n);
        return page.$eval(`.chat-log li.assistant:nth-of-type(${2 * n + 2})`, (li) => [li.dataset.finish, li.textContent]);
      };
      const [finish1, reply1] = await send(verses[0].kjv, 0);
      assert.equal(finish1, 'eos');
      assert.equal(reply1, verses[0].torch);
      const [finish2, reply2] = await send(verses[1].kjv, 1, 'enter');
      assert.equal(finish2, 'eos');
      assert.ok(reply2.length > 10);
      assert.equal(await page.$$eval('.chat-log li', (l) => l.length), 4);
      assert.match(await page.textContent('#chat-speed'), /tokens\/s/);
      if (isolation) await page.screenshot({ path: path.join(ARTIFACTS, 'demo-chat.png'), fullPage: true });
      await page.click('#chat-new');
      assert.equal(await page.$$eval('.chat-log li', (l) => l.length), 0);

      // seeded continuation: runs to the end, twice the same
      await openTab(page, 'gen');
      await page.fill('#gen-max', '20');
      const generate = async () => {
        await page.$eval('#gen-output', (o) => delete o.dataset.finish);
        await page.click('#gen-run');
        await page.waitForFunction(() => document.querySelector('#gen-output').dataset.finish && !document.querySelector('#gen-run').disabled);
        return page.textContent('#gen-continuation');
      };
      const a = await generate();
      const b = await generate();
      assert.ok(a.length > 0);
      assert.equal(a, b);
      assert.match(await page.textContent('#gen-speed'), /tokens\/s/);
      if (isolation) await page.screenshot({ path: path.join(ARTIFACTS, 'demo-generate.png'), fullPage: true });

      // Stop mid-generation: the page presses Stop as soon as the first piece of text shows
      await page.fill('#gen-max', '1000');
      await page.evaluate(() => {
        const out = document.querySelector('#gen-output');
        delete out.dataset.finish;
        const obs = new MutationObserver(() => {
          const c = document.querySelector('#gen-continuation');
          if (c && c.textContent.length > 0) {
            obs.disconnect();
            document.querySelector('#gen-stop').click();
          }
        });
        obs.observe(out, { childList: true, subtree: true, characterData: true });
        document.querySelector('#gen-run').click();
      });
      await page.waitForFunction(() => document.querySelector('#gen-output').dataset.finish);
      assert.equal(await page.$eval('#gen-output', (o) => o.dataset.finish), 'aborted');
      const stopped = await page.textContent('#gen-speed');
      assert.match(stopped, /aborted/);

      assert.deepEqual(problems, []);
      await context.close();
    } finally {
      server.close();
    }
  });
}

// A translation model given by URL (the random-weight Marian fixture: its words are noise, the mechanics are not):
// the first visit translates the example with its cross-attention drawn; the alignment picker offers the average,
// each layer and each head; a greedy translation equals the package's own.
test('demo translates with a Marian model and draws the cross-attention alignment', async () => {
  const server = await startServer();
  try {
    const { page, context, problems } = await openDemo(server, 'translate=/tests/data/fixtures/marian-tiny/');
    assert.equal(await page.isVisible('#tr-section'), true, 'a page opened with ?translate= opens on its tab');
    assert.ok(await page.$eval('#tr-output', (o) => o.dataset.finish));
    assert.ok((await page.textContent('#tr-output')).length > 0);
    assert.ok(await coloured(page, '#tr-canvas') > 100, 'alignment drawn');
    // marian-tiny: 3 decoder layers × 4 heads
    assert.equal(await page.$$eval('#tr-layer option', (o) => o.length), 1 + 3 + 12);
    await page.selectOption('#tr-layer', 'h5');
    assert.match(await page.$eval('#tr-canvas', (c) => c.getAttribute('aria-label')), /layer 2, head 2/);
    assert.ok(await coloured(page, '#tr-canvas') > 100);
    // greedy, as the API gives it
    await page.selectOption('#tr-beams', '1');
    await page.fill('#tr-text', 'In the beginning God created the heaven and the earth.');
    await page.$eval('#tr-output', (o) => delete o.dataset.finish);
    await page.click('#tr-run');
    await page.waitForFunction(() => document.querySelector('#tr-output').dataset.finish);
    const shown = await page.textContent('#tr-output');
    const api = await page.evaluate(async () => {
      const { Model } = await import('/web/src/index.js');
      const m = await Model.load('/tests/data/fixtures/marian-tiny/');
      const [[h]] = await m.translate('In the beginning God created the heaven and the earth.', { num_beams: 1, max_new_tokens: 128 });
      await m.dispose();
      return h.translation_text;
    });
    assert.equal(shown, api);
    await page.screenshot({ path: path.join(ARTIFACTS, 'demo-translate.png'), fullPage: true });
    // the explorer has the cross-attention too: a row per translated token, a column per source token
    await openTab(page, 'att');
    await page.selectOption('#att-source', 'tr');
    await page.waitForFunction(() => /^Translate/.test(document.querySelector('#att-status').textContent));
    await page.selectOption('#att-head', 'avg');
    const tr = await saveAttention(page);
    assert.equal(tr.task, 'tr');
    assert.equal(tr.weights.length, tr.row_tokens.length);
    assert.equal(tr.weights[0].length, tr.column_tokens.length);
    assert.ok(rowSumsAreOne(tr.weights));
    assert.deepEqual(problems, []);
    await context.close();
  } finally {
    server.close();
  }
});

// A phone (390 × 844) in the system's dark theme, then the light one from the header's button: nothing wider than the
// screen, in every tab; every text colour at least 4.5 : 1 against the background it is drawn on (WCAG AA), in both
// themes. Screenshots: demo-phone-dark.png, demo-phone-light.png.
test('demo on a phone: no horizontal scroll, dark and light themes with readable contrast', async () => {
  const server = await startServer();
  try {
    const { page, context, problems } = await openDemo(server, '', { viewport: { width: 390, height: 844 }, colorScheme: 'dark' });
    const fits = () => page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth);
    // the text colours of the page's kinds of text against their backgrounds (the nearest ancestor that paints one)
    const contrasts = () => page.evaluate(() => {
      const rgb = (c) => c.match(/[\d.]+/g).map(Number);
      const lum = ([r, g, b]) => {
        const f = (v) => ((v /= 255) <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4);
        return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
      };
      const background = (el) => {
        for (let e = el; e; e = e.parentElement) {
          const c = rgb(getComputedStyle(e).backgroundColor);
          if (c.length < 4 || c[3] > 0) return c;
        }
        return rgb(getComputedStyle(document.documentElement).backgroundColor);
      };
      const out = {};
      for (const sel of ['header p', 'h2', '[role=tab]', '[role=tab][aria-selected=true]', '.hint', '.model-line', 'label', 'button', 'textarea', '.output', '.chat-log li.user', '.chat-log li.assistant', '.enc-row span']) {
        const el = document.querySelector(sel);
        if (!el) continue;
        const [a, b] = [lum(rgb(getComputedStyle(el).color)), lum(background(el))];
        out[sel] = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
      }
      out.dark = lum(background(document.body)) < 0.05;
      return out;
    });
    assert.ok(await fits(), 'nothing wider than the phone, dark');
    const dark = await contrasts();
    assert.equal(dark.dark, true, 'the system dark theme applies');
    for (const [sel, r] of Object.entries(dark)) if (sel !== 'dark') assert.ok(r >= 4.5, `dark theme: ${sel} contrast ${r.toFixed(2)}`);
    assert.ok(Object.keys(dark).length >= 10);
    await page.screenshot({ path: path.join(ARTIFACTS, 'demo-phone-dark.png'), fullPage: true });

    await page.click('#theme');
    assert.equal(await page.getAttribute('#theme', 'aria-pressed'), 'false');
    const light = await contrasts();
    assert.equal(light.dark, false, 'the button switches to the light theme');
    for (const [sel, r] of Object.entries(light)) if (sel !== 'dark') assert.ok(r >= 4.5, `light theme: ${sel} contrast ${r.toFixed(2)}`);
    assert.ok(await fits(), 'nothing wider than the phone, light');
    await page.screenshot({ path: path.join(ARTIFACTS, 'demo-phone-light.png'), fullPage: true });

    // every tab's panel fits the phone too
    for (const t of ['gen', 'chat', 'tr', 'enc', 'att', 'models']) {
      await openTab(page, t);
      assert.ok(await fits(), `the ${t} tab fits the phone`);
    }
    assert.deepEqual(problems, []);
    await context.close();
  } finally {
    server.close();
  }
});
