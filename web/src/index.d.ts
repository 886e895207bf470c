// Type declarations for wasmformer's JavaScript API.

export type ModelSource =
  | string                                   // folder URL, Hugging Face repo URL, or (Node) a folder path
  | URL
  | File[]
  | FileList
  | Record<string, ArrayBuffer | ArrayBufferView | Blob | string>;  // file name → contents

export interface ProgressEvent {
  status: 'initiate' | 'progress' | 'done';
  file?: string;
  files?: string[];
  loaded?: number;
  total?: number | null;                     // known up front
  progress?: number | null;                  // 0–100
}

export interface LoadOptions {
  dtype?: 'as_stored' | 'f32' | 'f16' | 'q8_0';  // convert weights at load time to save memory
  memory_budget?: number;                    // bytes; a model estimated to need more is refused before allocating
  cache?: boolean;                           // browsers: Cache API (default true)
  signal?: AbortSignal;
  progress_callback?: (e: ProgressEvent) => void;
  worker?: boolean;                          // browsers: run in a Web Worker (default true)
  wasmUrl?: string | URL;                    // where the .wasm is, if not next to the package (single-thread build)
  wasmBinary?: ArrayBuffer | Uint8Array;     // the single-thread build's bytes
  threads?: number;                          // browsers, cross-origin isolated pages: default min(cores, 8); 1 = no threads
  threadedWasmUrl?: string | URL;            // where wasmformer-mt.wasm is, if not next to the package
}

// How the engine runs: the thread count in use and, in words, how — or why only one thread (e.g. the page is not
// cross-origin isolated). Every result's timings carry it.
export interface EngineInfo { threads: number; threading: string; backend: 'local' | 'worker' }

export interface ModelInfo {
  architecture: 'bert' | 'gpt2';
  n_layer: number; n_embd: number; n_head: number; n_vocab: number; n_ctx: number;
  weight_bytes: number;
  mask_token: string;
}

export interface TokenizerLike {
  encode(text: string, opts?: { add_special_tokens?: boolean }): Promise<number[]>;
  decode(ids: ArrayLike<number>, opts?: { skip_special_tokens?: boolean }): Promise<string>;
}

declare class Disposable {
  readonly info: ModelInfo;
  engineInfo(): Promise<EngineInfo>;
  dispose(): Promise<void>;
  [Symbol.dispose](): void;
  [Symbol.asyncDispose](): Promise<void>;
}

export class Tokenizer extends Disposable implements TokenizerLike {
  static load(source: ModelSource, opts?: LoadOptions): Promise<Tokenizer>;
  encode(text: string, opts?: { add_special_tokens?: boolean }): Promise<number[]>;
  decode(ids: ArrayLike<number>, opts?: { skip_special_tokens?: boolean }): Promise<string>;
}

export interface FillMaskCandidate { score: number; token: number; token_str: string; sequence: string; }
export interface Attention { layer: number; heads: number; data: Float32Array; }  // (heads, tokens, tokens)

export class FillMask extends Disposable {
  static load(source: ModelSource, opts?: LoadOptions): Promise<FillMask>;
  readonly tokenizer: TokenizerLike;
  fill(text: string, opts?: { top_k?: number; targets?: string | string[]; signal?: AbortSignal; attention_layer?: number }):
    Promise<{ results: FillMaskCandidate[][]; attention?: Attention; timings: { seconds: number } & EngineInfo }>;
}

export interface GenerationOptions {
  max_new_tokens?: number; do_sample?: boolean; temperature?: number; top_k?: number; top_p?: number; min_p?: number;
  repetition_penalty?: number; no_repeat_ngram_size?: number; stop?: string | string[]; seed?: number;
  signal?: AbortSignal; attention_layer?: number;
}
export interface GenerationResult {
  text: string;
  finish_reason: 'eos' | 'stop' | 'length' | 'max_new_tokens' | 'aborted';
  tokens: { id: number; text: string; logprob: number }[];
  prompt_tokens: number;
  attention?: Attention;
  timings: { seconds: number; tokens_per_second: number } & EngineInfo;
}

export class TextGenerator extends Disposable {
  static load(source: ModelSource, opts?: LoadOptions): Promise<TextGenerator>;
  readonly tokenizer: TokenizerLike;
  generate(prompt: string, opts?: GenerationOptions): AsyncIterable<string> & { result: GenerationResult | null };
  complete(prompt: string, opts?: GenerationOptions & { onToken?: (piece: string) => void }): Promise<GenerationResult>;
}

export interface FillMaskPipeline {
  (text: string, opts?: { top_k?: number; targets?: string | string[]; signal?: AbortSignal }): Promise<FillMaskCandidate[] | FillMaskCandidate[][]>;
  (texts: string[], opts?: { top_k?: number; targets?: string | string[]; signal?: AbortSignal }): Promise<(FillMaskCandidate[] | FillMaskCandidate[][])[]>;
  task: 'fill-mask'; model: FillMask; tokenizer: TokenizerLike; dispose(): Promise<void>;
}
export interface TextGenerationPipeline {
  (prompt: string, opts?: GenerationOptions & { return_full_text?: boolean; streamer?: ((text: string) => void) | { callback_function?: (text: string) => void; end?: () => void } }):
    Promise<{ generated_text: string }[]>;
  task: 'text-generation'; model: TextGenerator; tokenizer: TokenizerLike; dispose(): Promise<void>;
}

export function pipeline(task: 'fill-mask', source: ModelSource, opts?: LoadOptions): Promise<FillMaskPipeline>;
export function pipeline(task: 'text-generation', source: ModelSource, opts?: LoadOptions): Promise<TextGenerationPipeline>;
export function clearCache(): Promise<void>;
