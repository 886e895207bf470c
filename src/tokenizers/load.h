// Tokenizers from the files models come with: tokenizer.json; vocab.txt (WordPiece); vocab.json + merges.txt
// (byte-level BPE); SentencePiece models (sentencepiece.bpe.model, spiece.model, tokenizer.model); GGUF metadata
// (tokenizer.ggml.*). tokenizer_config.json and special_tokens_map.json, when
// present, name the special tokens' roles (mask, bos, eos, …) and BERT's lower-casing. Every loader names the file
// and the problem in its errors (research/security.md T1–T15).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "formats/file-set.h"
#include "formats/gguf.h"
#include "tokenizers/wordpiece.h"

namespace wf {

// The files a tokenizer is made of, of those `available`: the first complete set of tokenizer.json, vocab.txt,
// vocab.json + merges.txt, sentencepiece.bpe.model, spiece.model, tokenizer.model, plus tokenizer_config.json and
// special_tokens_map.json when present. Empty if no set is complete. load_tokenizer reads exactly these.
std::vector<std::string> tokenizer_files(const std::vector<std::string>& available);
// Every name tokenizer_files may pick, for sources that must ask for each file (required sets first).
std::vector<std::string> tokenizer_candidates();

std::unique_ptr<tokenizer> load_tokenizer(const file_set& files);
std::unique_ptr<tokenizer> load_tokenizer(const gguf_file& g, int64_t n_vocab);

// One format each (tests and fuzzing); roles and templates take the formats' defaults.
std::unique_ptr<tokenizer> load_vocab_txt(std::string_view text, const wordpiece_options& opt, const std::string& file = "vocab.txt");
std::unique_ptr<tokenizer> load_gpt2_files(std::string_view vocab_json, std::string_view merges_txt);
std::unique_ptr<tokenizer> load_tokenizer_json(std::string_view text, const std::string& file = "tokenizer.json");
// A SentencePiece .model file (Marian's source.spm / target.spm too); its template follows the file name
// (sentencepiece.bpe.model: XLM-R, fairseq's ids; spiece.model: ALBERT or T5; others: Llama's <s> A).
std::unique_ptr<tokenizer> load_sentencepiece(std::string_view model, const std::string& file = "tokenizer.model");

}  // namespace wf
