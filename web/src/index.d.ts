// Type declarations for wasmformer's JavaScript API (the same in browsers and in Node). They compile under
// `tsc --strict` with the default `lib` of any target: the disposal symbols are declared here when the lib lacks them.

declare global {
  interface SymbolConstructor {
    readonly dispose: unique symbol;
    readonly asyncDispose: unique symbol;
  }
  interface Disposable {
    [Symbol.dispose](): void;
  }
  interface AsyncDisposable {
    [Symbol.asyncDispose](): PromiseLike<void>;
  }
}

/** Where a model comes from. */
export type ModelSource =
  | string           // a folder or .gguf URL (a split GGUF: any part's); a Hugging Face repo id "org/name" or URL; in Node a folder or file path
  | URL
  | ArrayBuffer      // the bytes of one .gguf file
  | ArrayBufferView
  | Blob             // one .gguf file (File objects too)
  | File[]
  | FileList
  | Record<string, ArrayBuffer | ArrayBufferView | Blob | string | URL>;  // file name → contents, or → its URL (fetched; file: URLs read in Node)

export type Task = 'fill-mask' | 'text-generation' | 'feature-extraction' | 'text-classification' | 'token-classification' | 'question-answering' | 'zero-shot-classification' | 'translation' | 'text2text-generation' | 'summarization';

/** Load progress, as transformers.js sends it: per file, then across files, then 'ready'. */
export type ProgressEvent =
  | { status: 'initiate' | 'download' | 'done'; name: string; file: string }
  | { status: 'progress'; name: string; file: string; loaded: number; total: number | null; progress: number | null }
  | { status: 'progress_total'; name: string; loaded: number; total: number | null; progress: number | null;
      files: Record<string, { loaded: number; total: number | null }> }
  | { status: 'ready'; task: string; model: string };

export interface LoadOptions {
  /** Weight storage: 'auto' (default: as stored, F16/BF16 widened to f32 while the model stays under 1 GiB),
   *  'as_stored' (the least memory), or a type to convert to (transformers.js's fp32 / fp16 / q8 accepted). */
  dtype?: 'auto' | 'as_stored' | 'f32' | 'f16' | 'bf16' | 'q8_0' | 'q6_k' | 'q5_k' | 'q5_1' | 'q5_0' | 'q4_k' | 'q4_1' | 'q4_0'
    | 'iq4_nl' | 'q3_k' | 'q2_k' | 'fp32' | 'fp16' | 'q8' | 'q4';
  /** Bytes the engine may allocate for this model; a model estimated to need more is refused before allocating. */
  memory_budget?: number;
  /** The revision of a Hugging Face repo (default 'main'). */
  revision?: string;
  /** The Hugging Face endpoint (default https://huggingface.co). */
  hub?: string;
  progress_callback?: (e: ProgressEvent) => void;
  signal?: AbortSignal;
  /** Browsers: keep downloaded files in the Cache API (default true). */
  cache?: boolean;
  /** false: run the engine in this thread instead of the package's worker (it then blocks this thread). */
  worker?: boolean;
  /** Threads: default min(cores, 8) where threads are possible (Node; cross-origin isolated pages); 1 = none. */
  threads?: number;
  /** Where the single-thread .wasm is, if not beside the package (an absolute URL, or relative to the page). */
  wasmUrl?: string | URL;
  wasmBinary?: ArrayBuffer | Uint8Array;
  threadedWasmUrl?: string | URL;
  /** Relaxed SIMD (its int8 dot product for q8_0 and 4-bit prefill and for 4–6-bit decode, its fused multiply-add for
   *  f32 / f16 / bf16 matrices from 6 rows on): default where the JavaScript engine runs it (Chromium; not Node 20), false = the plain
   *  SIMD128 build, true = required (an error where it is missing). Results differ from the plain build's within the
   *  7-bit activations' rounding (q8_0) and the fused multiply-add's one rounding instead of two (README). */
  relaxedSimd?: boolean;
  /** With { worker: false }: the fetch to download with. */
  fetch?: typeof fetch;
  /** Accepted for transformers.js compatibility: 'wasm' or 'cpu' (the engine runs on the CPU). */
  device?: 'wasm' | 'cpu' | 'auto';
}

/** How the engine runs: the threads in use and, in words, how — or why only one thread; whether it runs relaxed SIMD. */
export interface EngineInfo { threads: number; threading: string; simd: 'relaxed' | 'simd128'; backend: 'local' | 'worker' }

export interface ModelInfo {
  /** The engine's name of the family: 'bert', 'gpt2', … */
  architecture: string;
  /** What the model can run. */
  tasks: Task[];
  n_layer: number; n_embd: number; n_head: number; n_vocab: number; n_ctx: number;
  /** What the dtype option became, e.g. 'auto (f16/bf16 widened to f32)'. */
  dtype: string;
  /** Bytes of weights the engine owns (the rest are views into the model file). */
  weight_bytes: number;
  borrows_file_bytes: boolean;
  /** The mask token, or '' when the tokenizer has none. */
  mask_token: string;
  /** The names of the model's chat templates ('default', 'tool_use', …); empty when it has none. */
  chat_templates: string[];
  /** The ids that end a generation: EOS, and end-of-turn ids from the GGUF or generation_config.json. */
  end_ids: number[];
}

/** A message of a chat, as Hugging Face's chat templates take it. */
export interface Message {
  role: 'system' | 'user' | 'assistant' | 'tool' | (string & {});
  /** Text, or parts such as { type: 'text', text }; null beside tool_calls. */
  content: string | { type: string; text?: string; [key: string]: unknown }[] | null;
  tool_calls?: unknown[];
  [key: string]: unknown;
}
export type Chat = Message[];

/** How a chat becomes a prompt: the model's chat template (or one given), rendered with @huggingface/jinja. */
export interface ChatTemplateOptions {
  /** A Jinja template, or the name of one of the model's (info.chat_templates); default: the model's "default"
   *  ("tool_use" when tools are given and the model has one). */
  chat_template?: string;
  /** Tools (JSON schemas) for the template's tool-calling format. */
  tools?: object[] | null;
  /** Documents for templates that take them (RAG). */
  documents?: object[] | null;
  /** End the prompt with the start of an assistant turn (default: true for chat and the pipeline, unless the last
   *  message is the assistant's; false for apply_chat_template). */
  add_generation_prompt?: boolean;
  /** Continue the last message instead of starting a new one (default: true when it is the assistant's). */
  continue_final_message?: boolean;
  /** More template variables, e.g. { enable_thinking: false }, { date_string: '26 Jul 2024' }. */
  chat_template_kwargs?: Record<string, unknown>;
  /** As transformers.js: apply_chat_template's options and template variables. */
  tokenizer_encode_kwargs?: Record<string, unknown>;
}

/** apply_chat_template's options: names other than these are template variables (enable_thinking, …). */
export type ApplyChatTemplateOptions = ChatTemplateOptions & { [variable: string]: unknown };

export interface TokenizerLike {
  encode(text: string, opts?: { add_special_tokens?: boolean }): Promise<number[]>;
  decode(ids: ArrayLike<number>, opts?: { skip_special_tokens?: boolean }): Promise<string>;
  /** As transformers.js: the chat as its template makes it (tokenize: false), or its ids without the tokenizer's
   *  own special tokens (a plain array). */
  apply_chat_template(messages: Chat, opts: ApplyChatTemplateOptions & { tokenize: false }): Promise<string>;
  apply_chat_template(messages: Chat, opts?: ApplyChatTemplateOptions & { tokenize?: true }): Promise<number[]>;
}

declare class Handle {
  readonly info: ModelInfo;
  /** The source it was loaded from (a URL, a path, a repo id, 'files'). */
  readonly source: string;
  engineInfo(): Promise<EngineInfo>;
  /** Frees the object's memory in the engine. */
  dispose(): Promise<void>;
  [Symbol.dispose](): void;
  [Symbol.asyncDispose](): Promise<void>;
}

export class Tokenizer extends Handle implements TokenizerLike {
  static load(source: ModelSource, opts?: LoadOptions): Promise<Tokenizer>;
  encode(text: string, opts?: { add_special_tokens?: boolean }): Promise<number[]>;
  decode(ids: ArrayLike<number>, opts?: { skip_special_tokens?: boolean }): Promise<string>;
  apply_chat_template(messages: Chat, opts: ApplyChatTemplateOptions & { tokenize: false }): Promise<string>;
  apply_chat_template(messages: Chat, opts?: ApplyChatTemplateOptions & { tokenize?: true }): Promise<number[]>;
}

export interface FillMaskCandidate { score: number; token: number; token_str: string; sequence: string }
/** Attention weights of one layer: data is (heads, tokens, tokens), row-major. */
export interface Attention { layer: number; heads: number; data: Float32Array }

export interface FillMaskOptions {
  top_k?: number;
  /** Score only these words (each by its first token). */
  targets?: string | string[];
  /** Also return the attention weights of this layer (one text at a time). */
  attention_layer?: number;
  signal?: AbortSignal;
}
export interface FillMaskResult {
  /** One list per mask token in the text, in order, best first. */
  results: FillMaskCandidate[][];
  attention?: Attention;
  timings: { seconds: number } & EngineInfo;
}

export interface GenerationOptions {
  max_new_tokens?: number; do_sample?: boolean; temperature?: number; top_k?: number; top_p?: number; min_p?: number;
  repetition_penalty?: number; no_repeat_ngram_size?: number; seed?: number;
  /** Stop strings: generation ends before the first, which is not returned. */
  stop?: string | string[];
  /** End at the model's end ids (info.end_ids: EOS, end of turn); default true. */
  stop_at_eos?: boolean;
  /** More ids that end the generation (finish_reason 'stop'); their text is not returned. */
  stop_token_ids?: number | number[];
  /** false: tokenize the prompt without the tokenizer's own special tokens (BOS); default true. */
  add_special_tokens?: boolean;
  /** Leave generated special tokens out of the text (default false; true for chat). */
  skip_special_tokens?: boolean;
  /** Start from the model's last KV cache where the prompt begins with the tokens it holds (default false; true for
   *  chat: a conversation's next turn runs only its new tokens). */
  reuse_cache?: boolean;
  /** Also return the prompt's attention weights of this layer. */
  attention_layer?: number;
  /** Give each token its log-probability (tokens[].logprob; default false). Without it a greedy step computes only
   *  the logits its choice needs (the same tokens), and no step computes the softmax's sum over the vocabulary. */
  output_scores?: boolean;
  signal?: AbortSignal;
}
/** eos: an end id of the model (EOS, end of turn); stop: a stop string or one of stop_token_ids. */
export type FinishReason = 'eos' | 'stop' | 'length' | 'max_new_tokens';
export interface GenerationResult {
  text: string;
  finish_reason: FinishReason;
  /** Each token; its log-probability under the model (before penalties and warping) with output_scores only. */
  tokens: { id: number; text: string; logprob?: number }[];
  prompt_tokens: number;
  /** Prompt tokens whose keys and values came from the model's last generation (reuse_cache; a chat's next turn). */
  cached_tokens: number;
  attention?: Attention;
  timings: { seconds: number; tokens_per_second: number } & EngineInfo;
}
/** A chat's result: generate's, with the prompt its template made and the conversation with the reply. */
export interface ChatResult extends GenerationResult {
  prompt: string;
  messages: Message[];
}
export interface ChatOptions extends Omit<GenerationOptions, 'attention_layer'>, ChatTemplateOptions {}

/** What an aborted generation rejects with: an AbortError carrying what was generated until then. */
export interface GenerationAbortError extends Error {
  name: 'AbortError';
  result: Omit<GenerationResult, 'timings' | 'finish_reason'> & { finish_reason: 'aborted' };
}

/** As transformers.js's Tensor: feature-extraction's output. */
export interface Tensor { type: 'float32'; data: Float32Array; dims: number[]; size: number; tolist(): any[] }
export interface FeatureExtractionOptions {
  /** none: every token's state (B, T, E), padding rows zero; mean / cls: one vector per text (B, E). Default: the
   *  sentence-transformers folder's (modules.json), else none. */
  pooling?: 'none' | 'mean' | 'cls';
  /** L2-normalize each vector (default: true when the folder has a Normalize module). */
  normalize?: boolean;
  signal?: AbortSignal;
}
export interface LabelScore { label: string; score: number }
export interface TextClassificationOptions {
  /** How many labels, best first (default 1); null or 0: every label. */
  top_k?: number | null;
  /** default: sigmoid for multi-label models (problem_type) and single-output heads, else softmax. */
  function_to_apply?: 'default' | 'softmax' | 'sigmoid' | 'none';
  signal?: AbortSignal;
}
export interface TextPair { text: string; text_pair: string }
/** One token's label (aggregation_strategy none); offsets are string indices into the text. */
export interface TokenEntity { entity: string; score: number; index: number; word: string; start: number; end: number }
/** An entity of one or more words (aggregation_strategy simple / first / average / max). */
export interface EntityGroup { entity_group: string; score: number; word: string; start: number; end: number }
export interface TokenClassificationOptions {
  aggregation_strategy?: 'none' | 'simple' | 'first' | 'average' | 'max';
  /** Labels left out (default ["O"]). */
  ignore_labels?: string[];
  signal?: AbortSignal;
}
export interface Answer { answer: string; score: number; start: number; end: number }
export interface QuestionAnsweringOptions {
  top_k?: number;
  /** Tokens shared by consecutive windows of a long context (default 128). */
  doc_stride?: number;
  max_answer_len?: number;
  max_seq_len?: number;
  max_question_len?: number;
  /** Also score "no answer" (an empty answer at 0). */
  handle_impossible_answer?: boolean;
  signal?: AbortSignal;
}
export interface ZeroShotOptions {
  /** The hypothesis, with {} for the label (default "This example is {}."). */
  hypothesis_template?: string;
  /** Score each label on its own (entailment vs contradiction) instead of across labels. */
  multi_label?: boolean;
  signal?: AbortSignal;
}
export interface ZeroShotResult { sequence: string; labels: string[]; scores: number[] }
/** translation / text2text-generation (an encoder–decoder); the model's generation_config.json gives the defaults. */
export interface Seq2SeqOptions {
  max_new_tokens?: number;
  /** 1: greedy (or sampling with do_sample); more: beam search. */
  num_beams?: number;
  /** The best finished hypotheses returned per text (≤ num_beams). */
  num_return_sequences?: number;
  /** A hypothesis scores sum(log p) / length^length_penalty. */
  length_penalty?: number;
  early_stopping?: boolean | 'never';
  no_repeat_ngram_size?: number;
  bad_words_ids?: number[][];
  renormalize_logits?: boolean;
  do_sample?: boolean;
  temperature?: number;
  top_k?: number;
  top_p?: number;
  seed?: number;
  skip_special_tokens?: boolean;
  /** Each generated token's cross-attention over the source tokens. */
  output_attentions?: boolean;
  /** Greedy and sampling: give each hypothesis its score, sum(log p) (beam search always does). Without it a greedy
   *  step computes only the logits its choice needs (the same tokens). */
  output_scores?: boolean;
  signal?: AbortSignal;
}
export interface CrossAttentions {
  source_tokens: string[];
  target_tokens: string[];
  layers: number;
  heads: number;
  /** weights[target token][layer][head][source token] */
  weights: number[][][][];
}
export interface Seq2SeqHypothesis {
  translation_text?: string;
  generated_text?: string;
  summary_text?: string;
  /** Beam search: sum(log p) / length^length_penalty; greedy and sampling, with output_scores: sum(log p). */
  score?: number;
  finish_reason: 'eos' | 'length';
  token_ids: number[];
  cross_attentions?: CrossAttentions;
}

/** Any model the engine runs; its methods work for the tasks in info.tasks (an error names the ones it has). */
export class Model extends Handle {
  static load(source: ModelSource, opts?: LoadOptions): Promise<Model>;
  readonly tokenizer: TokenizerLike;
  /** fill-mask; an array of texts runs as one padded batch. */
  fill(text: string, opts?: FillMaskOptions): Promise<FillMaskResult>;
  fill(texts: string[], opts?: FillMaskOptions): Promise<FillMaskResult[]>;
  /** text-generation, streamed as text pieces of whole characters; .result is set when the loop ends. */
  generate(prompt: string, opts?: GenerationOptions): AsyncIterable<string> & { result: GenerationResult | null };
  complete(prompt: string, opts?: GenerationOptions & { onToken?: (piece: string) => void }): Promise<GenerationResult>;
  /** A chat, made a prompt by the model's chat template and generated from: the reply streamed as text pieces;
   *  .result (a ChatResult) is set when the loop ends. */
  chat(messages: Chat, opts?: ChatOptions): AsyncIterable<string> & { result: ChatResult | null };
  /** feature-extraction; several texts run in padded batches. */
  embed(texts: string | string[], opts?: FeatureExtractionOptions): Promise<Tensor>;
  /** text-classification: per text, its labels best first. */
  classify(texts: string | TextPair | string[] | TextPair[], opts?: TextClassificationOptions): Promise<LabelScore[][]>;
  /** token-classification: per text, its tokens' or entities' labels. */
  classifyTokens(texts: string | string[], opts?: TokenClassificationOptions): Promise<(TokenEntity | EntityGroup)[][]>;
  /** question-answering: per question (with its context), the best answers. */
  answer(questions: string | string[], contexts: string | string[], opts?: QuestionAnsweringOptions): Promise<Answer[][]>;
  /** zero-shot-classification with an NLI model. */
  zeroShot(texts: string | string[], labels: string | string[], opts?: ZeroShotOptions): Promise<ZeroShotResult[]>;
  /** translation: per text, its num_return_sequences best hypotheses, best first. A greedy list (num_beams 1, no
   *  sampling, no output_attentions) is decoded side by side, up to 16 texts per decoder pass, and so is a beam
   *  search's list on a quantized model (dtype q8_0, q4_0, …: 16 / num_beams texts a pass); each text gets the
   *  hypotheses it gets alone. */
  translate(texts: string | string[], opts?: Seq2SeqOptions): Promise<Seq2SeqHypothesis[][]>;
  /** One text's translation streamed as text pieces (greedy or sampling; beam search yields its text at the end);
   *  .result is set when the loop ends. */
  translateStream(text: string, opts?: Seq2SeqOptions & { task?: 'translation' | 'text2text-generation' | 'summarization' }):
    AsyncIterable<string> & { result: { results: Seq2SeqHypothesis[]; timings: { seconds: number } & EngineInfo } | null };
  /** text2text-generation: as translate, with generated_text. */
  text2text(texts: string | string[], opts?: Seq2SeqOptions): Promise<Seq2SeqHypothesis[][]>;
}
/** A model loaded for fill-mask (refused at load if it cannot fill masks). */
export class FillMask extends Model {
  static load(source: ModelSource, opts?: LoadOptions): Promise<FillMask>;
}
/** A model loaded for text generation. */
export class TextGenerator extends Model {
  static load(source: ModelSource, opts?: LoadOptions): Promise<TextGenerator>;
}

/** As transformers.js's TextStreamer: callback_function gets the text as it becomes printable. */
export class TextStreamer {
  constructor(tokenizer: TokenizerLike, opts?: {
    skip_prompt?: boolean;
    skip_special_tokens?: boolean;
    callback_function?: (text: string) => void;
    token_callback_function?: (ids: bigint[]) => void;
  });
  put(ids: ArrayLike<number | bigint> | ArrayLike<ArrayLike<number | bigint>>, text?: string): void;
  end(): void;
  on_finalized_text(text: string, stream_end: boolean): void;
}
/** What a text-generation pipeline streams to: a TextStreamer, or anything with put/end. */
export interface StreamerLike { put(ids: bigint[][] | number[][], text?: string): void; end(): void }

interface PipelineObject<M> {
  task: Task; model: M; tokenizer: TokenizerLike;
  dispose(): Promise<void>;
  [Symbol.dispose](): void;
  [Symbol.asyncDispose](): Promise<void>;
}

/** fill-mask as transformers.js: a text with one mask gives its candidates; a text with several masks, one list per
 *  mask (as Python transformers); an array of texts, one of those per text. */
export interface FillMaskPipeline extends PipelineObject<FillMask> {
  (text: `${string}[MASK]${string}[MASK]${string}` | `${string}<mask>${string}<mask>${string}`, opts?: Omit<FillMaskOptions, 'attention_layer'>): Promise<FillMaskCandidate[][]>;
  (text: `${string}[MASK]${string}` | `${string}<mask>${string}`, opts?: Omit<FillMaskOptions, 'attention_layer'>): Promise<FillMaskCandidate[]>;
  (text: string, opts?: Omit<FillMaskOptions, 'attention_layer'>): Promise<FillMaskCandidate[] | FillMaskCandidate[][]>;
  (texts: string[], opts?: Omit<FillMaskOptions, 'attention_layer'>): Promise<(FillMaskCandidate[] | FillMaskCandidate[][])[]>;
}
export interface TextGenerationOptions extends Omit<GenerationOptions, 'attention_layer'> {
  /** false: generated_text is only the continuation (default true: the prompt and the continuation). */
  return_full_text?: boolean;
  streamer?: StreamerLike;
}
export type ChatGenerationOptions = TextGenerationOptions & ChatTemplateOptions;
export interface TextGenerationPipeline extends PipelineObject<TextGenerator> {
  (prompt: string, opts?: TextGenerationOptions): Promise<{ generated_text: string }[]>;
  (prompts: string[], opts?: TextGenerationOptions): Promise<{ generated_text: string }[][]>;
  /** A chat: the conversation with the assistant's reply appended (or its last message continued). */
  (messages: Chat, opts?: ChatGenerationOptions & { return_full_text?: true }): Promise<{ generated_text: Message[] }[]>;
  /** return_full_text: false: the reply's text alone, as Python transformers. */
  (messages: Chat, opts: ChatGenerationOptions & { return_full_text: false }): Promise<{ generated_text: string }[]>;
  (chats: Chat[], opts?: ChatGenerationOptions & { return_full_text?: true }): Promise<{ generated_text: Message[] }[][]>;
  (chats: Chat[], opts: ChatGenerationOptions & { return_full_text: false }): Promise<{ generated_text: string }[][]>;
}

export interface FeatureExtractionPipeline extends PipelineObject<Model> {
  (texts: string | string[], opts?: FeatureExtractionOptions): Promise<Tensor>;
}
export interface TextClassificationPipeline extends PipelineObject<Model> {
  /** One text: its top_k labels. */
  (text: string | TextPair, opts?: TextClassificationOptions): Promise<LabelScore[]>;
  /** Several: the best label of each (top_k 1, the default), or each one's list. */
  (texts: string[] | TextPair[], opts?: TextClassificationOptions): Promise<LabelScore[] | LabelScore[][]>;
}
export interface TokenClassificationPipeline extends PipelineObject<Model> {
  (text: string, opts?: TokenClassificationOptions & { aggregation_strategy?: 'none' }): Promise<TokenEntity[]>;
  (text: string, opts: TokenClassificationOptions): Promise<(TokenEntity | EntityGroup)[]>;
  (texts: string[], opts?: TokenClassificationOptions): Promise<(TokenEntity | EntityGroup)[][]>;
}
export interface QuestionAnsweringPipeline extends PipelineObject<Model> {
  /** top_k 1 (the default): the best answer (null if none); else a list. */
  (question: string, context: string, opts?: QuestionAnsweringOptions): Promise<Answer | Answer[] | null>;
  (questions: string[], contexts: string[], opts?: QuestionAnsweringOptions): Promise<(Answer | Answer[] | null)[]>;
}
export interface ZeroShotClassificationPipeline extends PipelineObject<Model> {
  (text: string, candidate_labels: string | string[], opts?: ZeroShotOptions): Promise<ZeroShotResult>;
  (texts: string[], candidate_labels: string | string[], opts?: ZeroShotOptions): Promise<ZeroShotResult[]>;
}
export interface TranslationPipeline extends PipelineObject<Model> {
  /** As transformers.js: one flat list, num_return_sequences entries per text. */
  (texts: string | string[], opts?: Seq2SeqOptions): Promise<{ translation_text: string; cross_attentions?: CrossAttentions }[]>;
}
export interface Text2TextGenerationPipeline extends PipelineObject<Model> {
  (texts: string | string[], opts?: Seq2SeqOptions): Promise<{ generated_text: string; cross_attentions?: CrossAttentions }[]>;
}
export interface SummarizationPipeline extends PipelineObject<Model> {
  (texts: string | string[], opts?: Seq2SeqOptions): Promise<{ summary_text: string; cross_attentions?: CrossAttentions }[]>;
}

/** A pipeline for a task; with no source, the task's default model (Node: installed with the package; browsers:
 *  after `import 'wasmformer-models'`). */
export function pipeline(task: 'fill-mask', source?: ModelSource | null, opts?: LoadOptions): Promise<FillMaskPipeline>;
export function pipeline(task: 'fill-mask', opts: LoadOptions): Promise<FillMaskPipeline>;
export function pipeline(task: 'text-generation', source?: ModelSource | null, opts?: LoadOptions): Promise<TextGenerationPipeline>;
export function pipeline(task: 'text-generation', opts: LoadOptions): Promise<TextGenerationPipeline>;
export function pipeline(task: 'feature-extraction' | 'embeddings', source?: ModelSource | null, opts?: LoadOptions): Promise<FeatureExtractionPipeline>;
export function pipeline(task: 'text-classification' | 'sentiment-analysis', source?: ModelSource | null, opts?: LoadOptions): Promise<TextClassificationPipeline>;
export function pipeline(task: 'token-classification' | 'ner', source?: ModelSource | null, opts?: LoadOptions): Promise<TokenClassificationPipeline>;
export function pipeline(task: 'question-answering', source?: ModelSource | null, opts?: LoadOptions): Promise<QuestionAnsweringPipeline>;
export function pipeline(task: 'zero-shot-classification', source?: ModelSource | null, opts?: LoadOptions): Promise<ZeroShotClassificationPipeline>;
export function pipeline(task: 'translation', source?: ModelSource | null, opts?: LoadOptions): Promise<TranslationPipeline>;
export function pipeline(task: 'text2text-generation', source?: ModelSource | null, opts?: LoadOptions): Promise<Text2TextGenerationPipeline>;
export function pipeline(task: 'summarization', source?: ModelSource | null, opts?: LoadOptions): Promise<SummarizationPipeline>;

/** A Hugging Face repo id ("org/name") or repo URL as the source the loader reads it by. */
export function hubSource(s: string, opts?: { revision?: string; hub?: string }): { type: 'hub'; repo: string; revision: string; hub: string } | null;
/** Stops the package's workers; models loaded in them are gone, and the next load starts new ones. */
export function terminate(): void;
/** Removes every model file the package cached in the browser (Cache API). */
export function clearCache(): Promise<void>;
export const CACHE_NAME: string;
