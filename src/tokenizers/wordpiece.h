// WordPiece, as Hugging Face's BertNormalizer + BertPreTokenizer + WordPiece model + WordPiece decoder.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tokenizers/tokenizer.h"

namespace wf {

struct wordpiece_options {
    bool clean_text = true;
    bool handle_chinese_chars = true;
    std::optional<bool> strip_accents;  // unset: follows lowercase
    bool lowercase = true;
    int max_input_chars_per_word = 100;
    std::string continuing_subword_prefix = "##";
    std::string unk_token = "[UNK]";
};

// BertNormalizer + BertPreTokenizer (BERT's BasicTokenizer): a text's words, normalized (control characters
// dropped, whitespace made spaces, accents stripped and lower-cased as the options say, CJK characters apart), cut
// on whitespace with every punctuation character a word of its own; each character with the original bytes it
// came from. WordPiece and GPT-1's BPE read words this way.
struct bert_word {
    std::u32string chars;
    std::vector<token_span> from;  // per character
};
std::vector<bert_word> bert_split(std::string_view text, const wordpiece_options& opt);

// Hugging Face's WordPiece decoder on token strings: the first kept whole, a later "##" piece glued to its word,
// other tokens after a space; then clean_up_tokenization_spaces (" ." → ".", " n't" → "n't", …).
std::string wordpiece_join(const std::vector<std::string>& tokens, const std::string& prefix = "##");

class wordpiece_tokenizer : public tokenizer {
public:
    wordpiece_tokenizer(std::vector<std::string> vocab, const wordpiece_options& opt, const std::string& source);
    std::string decode(const std::vector<int32_t>& ids, bool skip_special_tokens = false) const override;
    std::string token_bytes(int32_t id) const override { return token(id); }
    bool is_byte_level() const override { return false; }
    const std::string& continuing_subword_prefix() const { return opt_.continuing_subword_prefix; }
    // Normalized, pre-tokenized words (for tests and debugging).
    std::vector<std::u32string> words(std::string_view text) const;

protected:
    void encode_text(std::string_view text, std::vector<int32_t>& out, std::vector<token_span>* offsets, std::vector<int32_t>* words) const override;

private:
    using word = bert_word;
    void word_ids(const word& w, std::vector<int32_t>& out, std::vector<token_span>* offsets) const;
    wordpiece_options opt_;
    int32_t unk_ = -1;
};

}  // namespace wf
