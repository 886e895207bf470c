// A TypeScript app using the package, checked with `tsc --strict` and the default lib (tests/js/pack.test.mjs):
// every call below must type-check without casts or narrowing where the result's shape is known.
import { FillMask, Model, TextGenerator, TextStreamer, Tokenizer, pipeline, type FillMaskCandidate, type ProgressEvent } from 'wasmformer';
import { models } from 'wasmformer-models';
import { model as chatModel } from 'wasmformer-models/chat';
import { model as translationFiles, options as translationOptions } from 'wasmformer-models/translation';

const progress: ProgressEvent[] = [];
const unmasker = await pipeline('fill-mask', undefined, { dtype: 'q8_0', progress_callback: (e) => progress.push(e) });
const one: FillMaskCandidate[] = await unmasker('Paris is the [MASK] of France.');
const best: string = one[0].token_str;
const two: FillMaskCandidate[][] = await unmasker('[MASK] is the [MASK] of France.');
const many = await unmasker(['a [MASK]', 'b [MASK]']);
console.log(best, two[1][0].score, many.length);

await using generator = await pipeline('text-generation', models['text-generation']);
const [{ generated_text }] = await generator('Once upon a time', { max_new_tokens: 5, do_sample: true, seed: 1 });
const batch = await generator(['a', 'b'], { max_new_tokens: 2 });
const streamer = new TextStreamer(generator.tokenizer, { skip_prompt: true, callback_function: (t: string) => console.log(t) });
await generator('It was', { max_new_tokens: 3, streamer, return_full_text: false });
console.log(generated_text.length, batch[0][0].generated_text);

// the bundled translation model: a map of file names to URLs
const chatGen = await pipeline('text-generation', chatModel);
const es = await pipeline('translation', translationFiles, translationOptions);
console.log(chatGen.task, es.task);
const translator = await pipeline('translation', models.translation, { dtype: 'q8_0' });
const [{ translation_text }] = await translator('And God said', { num_beams: 2 });
const urlMap = { 'config.json': new URL('https://example.com/c.json'), 'vocab.txt': '[UNK]\n' };
console.log(translation_text.length, (await Tokenizer.load(urlMap)).info);

const bytes: ArrayBuffer = new ArrayBuffer(8);
const sources = [bytes, new Uint8Array(8), new URL('https://example.com/m/'), 'org/name', { 'config.json': '{}' }, [new File([], 'm.gguf')]] as const;
console.log(sources.length);

await using m = await Model.load('org/name', { revision: 'main', threads: 2, signal: AbortSignal.timeout(1000) });
if (m.info.tasks.includes('fill-mask')) {
  const r = await m.fill('a [MASK]', { top_k: 3, targets: ['x'] });
  const rs = await m.fill(['a [MASK]', 'b [MASK]']);
  console.log(r.results[0][0].token, rs[1].timings.threads);
}
for await (const piece of m.generate('Hi', { max_new_tokens: 3, stop: ['\n'] })) console.log(piece);
const done = await m.complete('Hi', { onToken: (p) => console.log(p) });
console.log(done.finish_reason, done.tokens[0]?.logprob);

using fm = await FillMask.load('./model', { dtype: 'auto' });
const tg = await TextGenerator.load(new Uint8Array(4));
const tok = await Tokenizer.load({ 'vocab.txt': '[UNK]\n' });
console.log(fm.info.mask_token, (await tok.encode('x')).length, await tg.engineInfo());
await tg.dispose();

// the encoder pipelines
const extractor = await pipeline('feature-extraction', './models/any');
const emb = await extractor(['a', 'b'], { pooling: 'mean', normalize: true });
const dims: number[] = emb.dims;
const firstRow: number = emb.data[0];
const classifier = await pipeline('sentiment-analysis', './models/any');
const labels = await classifier('I liked it', { top_k: 2 });
const label: string = labels[0].label;
const pairLabels = await classifier({ text: 'a', text_pair: 'b' });
const ner = await pipeline('ner', './models/any');
const tokens = await ner('Wolfgang lives in Berlin');
const entity: string = tokens[0].entity;
const groups = await ner('Wolfgang lives in Berlin', { aggregation_strategy: 'simple' });
const qa = await pipeline('question-answering', './models/any');
const ans = await qa('Where?', 'In Berlin.', { doc_stride: 64 });
const zsc = await pipeline('zero-shot-classification', './models/any');
const z = await zsc('I love it', ['positive', 'negative'], { multi_label: true });
const topLabel: string = z.labels[0];
console.log(dims, firstRow, label, pairLabels.length, entity, groups.length, ans, topLabel);
