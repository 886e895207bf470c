// Byte-level BPE, as Hugging Face's ByteLevel pre-tokenizer + BPE model + ByteLevel decoder.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tokenizers/tokenizer.h"

namespace wf {

// How text is cut into pieces before the merges, by name: each is the regular expression of a model family (or
// Hugging Face's chain of pre-tokenizers), matched by hand (no regex engine).
//   gpt2    GPT-2's: 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//   llama3  Llama 3's (cl100k's): (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*
//           |\s*[\r\n]+|\s+(?!\S)|\s+
//   qwen2   Qwen2's: llama3's with one digit a piece (\p{N} for \p{N}{1,3})
//   smollm  SmolLM's and StarCoder's: every digit a piece of its own (Digits with individual_digits), then GPT-2's
//           regular expression on each stretch between them
enum class pre_tokenizer { gpt2, llama3, qwen2, smollm };
// The named pre-tokenizer whose regular expression is `regex` (as tokenizer.json's Split writes it), if any.
std::optional<pre_tokenizer> pre_tokenizer_for_pattern(std::string_view regex);
// The named pre-tokenizer of a GGUF file's tokenizer.ggml.pre (llama.cpp's names), if this engine has it.
std::optional<pre_tokenizer> pre_tokenizer_for_gguf(std::string_view name);
// The tokenizer.ggml.pre values pre_tokenizer_for_gguf knows, for errors: "default, gpt-2, …".
std::string gguf_pre_tokenizer_names();
const char* pre_tokenizer_name(pre_tokenizer kind);

// tokenizers' ByteLevel decoder on strings that are already decoded: a string whose every character stands for a
// byte in GPT-2's byte map becomes those bytes ("Ã©" → é, but "é" alone → the lone byte 0xE9), any other string is
// kept as it is (" Dupré": the space is no byte's character); the bytes are then read as UTF-8, ill-formed ones as
// U+FFFD. Hugging Face's token-classification pipeline does this to the words it groups under the first / average /
// max strategies (each was decoded once already).
std::string byte_level_decode(const std::vector<std::string>& texts);

class bpe_tokenizer : public tokenizer {
public:
    // vocab: token → id (byte-level strings); merges: pairs in rank order; added: tokens with ids beyond the
    // vocabulary (their texts are not byte-level strings).
    bpe_tokenizer(const std::unordered_map<std::string, int32_t>& vocab, const std::vector<std::pair<std::string, std::string>>& merges,
                  const std::vector<std::pair<std::string, int32_t>>& added, pre_tokenizer pre, const std::string& source);
    std::string decode(const std::vector<int32_t>& ids, bool skip_special_tokens = false) const override;
    std::string token_bytes(int32_t id) const override;
    bool is_byte_level() const override { return true; }
    // Hugging Face BPE's ignore_merges (Llama 3): a piece that is a token of the vocabulary as a whole becomes that
    // token, whatever the merges would make of it.
    void set_ignore_merges(bool on) { ignore_merges_ = on; }
    // tokenizer.json's normalizer NFC (Qwen2's, ModernBERT's): the text is composed before it is cut; offsets stay
    // those of the text as given.
    void set_nfc(bool on) { nfc_ = on; }
    // The pieces of text the pre-tokenizer cuts, in order (UTF-8).
    static std::vector<std::string> pre_tokenize(std::string_view text, pre_tokenizer kind = pre_tokenizer::gpt2);

protected:
    void encode_text(std::string_view text, std::vector<int32_t>& out, std::vector<token_span>* offsets, std::vector<int32_t>* words) const override;

private:
    // piece: its bytes start at `at` in the text
    void bpe(std::string_view piece, std::vector<int32_t>& out, std::vector<token_span>* offsets, int32_t at) const;
    pre_tokenizer pre_;
    bool ignore_merges_ = false;
    bool nfc_ = false;
    void encode_normalized(std::string_view text, std::vector<int32_t>& out, std::vector<token_span>* offsets, std::vector<int32_t>* words) const;
    int32_t byte_token_[256];
    std::unordered_map<uint64_t, std::pair<int32_t, int32_t>> merges_;  // (left, right) → (rank, merged id)
    std::vector<std::string> bytes_of_;                                  // id → raw bytes
};

}  // namespace wf
