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

// How text is cut into pieces before the merges, by name: each is a regular expression of a model family, matched
// by hand (no regex engine).
enum class pre_tokenizer { gpt2 };
// The named pre-tokenizer whose regular expression is `regex` (as tokenizer.json writes it), if any.
std::optional<pre_tokenizer> pre_tokenizer_for_pattern(std::string_view regex);
const char* pre_tokenizer_name(pre_tokenizer kind);

class bpe_tokenizer : public tokenizer {
public:
    // vocab: token → id (byte-level strings); merges: pairs in rank order; added: tokens with ids beyond the
    // vocabulary (their texts are not byte-level strings).
    bpe_tokenizer(const std::unordered_map<std::string, int32_t>& vocab, const std::vector<std::pair<std::string, std::string>>& merges,
                  const std::vector<std::pair<std::string, int32_t>>& added, pre_tokenizer pre, const std::string& source);
    std::string decode(const std::vector<int32_t>& ids, bool skip_special_tokens = false) const override;
    std::string token_bytes(int32_t id) const override;
    bool is_byte_level() const override { return true; }
    // The pieces of text the pre-tokenizer cuts, in order (UTF-8).
    static std::vector<std::string> pre_tokenize(std::string_view text, pre_tokenizer kind = pre_tokenizer::gpt2);

protected:
    void encode_text(std::string_view text, std::vector<int32_t>& out, std::vector<token_span>* offsets, std::vector<int32_t>* words) const override;

private:
    // piece: its bytes start at `at` in the text
    void bpe(std::string_view piece, std::vector<int32_t>& out, std::vector<token_span>* offsets, int32_t at) const;
    pre_tokenizer pre_;
    int32_t byte_token_[256];
    std::unordered_map<uint64_t, std::pair<int32_t, int32_t>> merges_;  // (left, right) → (rank, merged id)
    std::vector<std::string> bytes_of_;                                  // id → raw bytes
};

}  // namespace wf
