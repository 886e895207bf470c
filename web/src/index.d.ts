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
  // weight storage: auto (default: as stored, F16/BF16 widened to f32 while the model stays under 1 GiB), as_stored
  // (the least memory), or converted at load (transformers.js's fp32 / fp16 / q8 are accepted too)
  dtype?: 'auto' | 'as_stored' | 'f32' | 'f16' | 'bf16' | 'q8_0' | 'fp32' | 'fp16' | 'q8';
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

export type Task = 'fill-mask' | 'text-generation';

export interface ModelInfo {
  architecture: string;                      // the engine's name of the family: 'bert', 'gpt2', …
  tasks: Task[];                             // what the model can run
  n_layer: number; n_embd: number; n_head: number; n_vocab: number; n_ctx: number;
  dtype: string;                             // what the dtype option became, e.g. 'auto (f16/bf16 widened to f32)'
  weight_bytes: number;                      // weights the engine owns (the rest are views into the file)
  borrows_file_bytes: boolean;
  mask_token: string;                        // '' if the tokenizer has none
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

export interface FillMaskOptions { top_k?: number; targets?: string | string[]; signal?: AbortSignal; attention_layer?: number }
export interface FillMaskResult { results: FillMaskCandidate[][]; attention?: Attention; timings: { seconds: number } & EngineInfo }

export interface GenerationOptions {
  max_new_tokens?: number; do_sample?: boolean; temperature?: number; top_k?: number; top_p?: number; min_p?: number;
  repetition_penalty?: number; no_repeat_ngram_size?: number; stop?: string | string[]; seed?: number;
  stop_at_eos?: boolean; signal?: AbortSignal; attention_layer?: number;
}
export interface GenerationResult {
  text: string;
  finish_reason: 'eos' | 'stop' | 'length' | 'max_new_tokens' | 'aborted';
  tokens: { id: number; text: string; logprob: number }[];
  prompt_tokens: number;
  attention?: Attention;
  timings: { seconds: number; tokens_per_second: number } & EngineInfo;
}

// Any model the engine runs; its methods work for the tasks in info.tasks (an error names the ones it supports).
export class Model extends Disposable {
  static load(source: ModelSource, opts?: LoadOptions): Promise<Model>;
  readonly tokenizer: TokenizerLike;
  fill(text: string, opts?: FillMaskOptions): Promise<FillMaskResult>;
  generate(prompt: string, opts?: GenerationOptions): AsyncIterable<string> & { result: GenerationResult | null };
  complete(prompt: string, opts?: GenerationOptions & { onToken?: (piece: string) => void }): Promise<GenerationResult>;
}
// A model loaded for fill-mask (refused at load if it cannot fill masks).
export class FillMask extends Model {
  static load(source: ModelSource, opts?: LoadOptions): Promise<FillMask>;
}
// A model loaded for text generation.
export class TextGenerator extends Model {
  static load(source: ModelSource, opts?: LoadOptions): Promise<TextGenerator>;
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
