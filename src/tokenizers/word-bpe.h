// GPT-1's tokenizer (Hugging Face's OpenAIGPTTokenizer without ftfy and spaCy, and its tokenizer.json): BERT's basic
// tokenizer (lower-cased, accents stripped, punctuation apart: wordpiece.h's bert_split), then BPE over each word's
// characters with "</w>" on the last one, merges by rank; a token the vocabulary lacks is <unk>. Decoding joins the
// tokens and makes each "</w>" a space.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tokenizers/wordpiece.h"

namespace wf {

class word_bpe_tokenizer : public tokenizer {
public:
    word_bpe_tokenizer(const std::unordered_map<std::string, int32_t>& vocab, const std::vector<std::pair<std::string, std::string>>& merges,
                       const wordpiece_options& normalizer, std::string suffix, const std::string& source);
    std::string decode(const std::vector<int32_t>& ids, bool skip_special_tokens = false) const override;
    std::string token_bytes(int32_t id) const override;
    bool is_byte_level() const override { return false; }

protected:
    void encode_text(std::string_view text, std::vector<int32_t>& out, std::vector<token_span>* offsets, std::vector<int32_t>* words) const override;

private:
    wordpiece_options opt_;
    std::string suffix_;
    std::unordered_map<std::string, int32_t> ranks_;  // "left right" → rank
};

}  // namespace wf
