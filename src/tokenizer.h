// Tokenizers with Hugging Face `tokenizers` semantics:
//   - WordPiece (BERT): BertNormalizer (clean text, CJK spacing, NFD + strip accents, lowercase), BertPreTokenizer
//     (whitespace and punctuation), greedy longest-match pieces with "##", words over 100 code points → [UNK].
//   - byte-level BPE (GPT-2): the GPT-2 pre-tokenizer pattern, merges by rank (a heap, O(n log n) per word).
// Special tokens written in the text ([MASK], <|endoftext|>) are matched before normalization, as the fast
// tokenizers do. Text is UTF-8 bytes with a length; ill-formed bytes decode to U+FFFD.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace wf {

struct special_tokens {
    int32_t unk = -1, cls = -1, sep = -1, pad = -1, mask = -1, bos = -1, eos = -1;
};

class tokenizer {
public:
    virtual ~tokenizer() = default;
    virtual std::vector<int32_t> encode(std::string_view text, bool add_special_tokens = true) const = 0;
    virtual std::string decode(const std::vector<int32_t>& ids, bool skip_special_tokens = false) const = 0;
    // The bytes one token stands for (BPE: raw bytes, possibly part of a UTF-8 character).
    virtual std::string token_bytes(int32_t id) const = 0;
    virtual bool is_byte_level() const = 0;
    int64_t vocab_size() const { return int64_t(id_to_token_.size()); }
    const std::string& token(int32_t id) const;  // the vocabulary string; error if out of range
    std::optional<int32_t> token_id(const std::string& token) const;
    const special_tokens& special() const { return special_; }
    bool is_special(int32_t id) const;

protected:
    // Splits text into (segment, special id or −1) around the special tokens written in it.
    std::vector<std::pair<std::string_view, int32_t>> split_special(std::string_view text) const;
    std::vector<std::string> id_to_token_;
    struct sv_hash {  // lookups by string_view without building a std::string
        using is_transparent = void;
        size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
    };
    std::unordered_map<std::string, int32_t, sv_hash, std::equal_to<>> token_to_id_;
    std::vector<std::pair<std::string, int32_t>> specials_;  // matched in raw text, longest first
    special_tokens special_;
};

struct wordpiece_options {
    bool clean_text = true;
    bool handle_chinese_chars = true;
    std::optional<bool> strip_accents;  // unset: follows lowercase
    bool lowercase = true;
    int max_input_chars_per_word = 100;
    std::string continuing_subword_prefix = "##";
};

class wordpiece_tokenizer : public tokenizer {
public:
    wordpiece_tokenizer(std::vector<std::string> vocab, const wordpiece_options& opt, const std::string& source);
    std::vector<int32_t> encode(std::string_view text, bool add_special_tokens = true) const override;
    std::string decode(const std::vector<int32_t>& ids, bool skip_special_tokens = false) const override;
    std::string token_bytes(int32_t id) const override { return token(id); }
    bool is_byte_level() const override { return false; }
    // Normalized, pre-tokenized words (for tests and debugging).
    std::vector<std::u32string> words(std::string_view text) const;

private:
    void word_ids(const std::u32string& word, std::vector<int32_t>& out) const;
    wordpiece_options opt_;
};

class bpe_tokenizer : public tokenizer {
public:
    // vocab: token → id (byte-level strings); merges: pairs in rank order; added: extra (special) tokens.
    bpe_tokenizer(const std::unordered_map<std::string, int32_t>& vocab, const std::vector<std::pair<std::string, std::string>>& merges,
                  const std::vector<std::pair<std::string, int32_t>>& added, const std::string& source);
    std::vector<int32_t> encode(std::string_view text, bool add_special_tokens = true) const override;
    std::string decode(const std::vector<int32_t>& ids, bool skip_special_tokens = false) const override;
    std::string token_bytes(int32_t id) const override;
    bool is_byte_level() const override { return true; }
    // The GPT-2 pre-tokenizer: the pieces of text the pattern matches, in order (UTF-8).
    static std::vector<std::string> pre_tokenize(std::string_view text);

private:
    void bpe(std::string_view piece, std::vector<int32_t>& out) const;
    int32_t byte_token_[256];
    std::unordered_map<uint64_t, std::pair<int32_t, int32_t>> merges_;  // (left, right) → (rank, merged id)
    std::vector<std::string> bytes_of_;                                  // id → raw bytes
};

// Loaders. Each names the file and the problem in its errors (research/security.md T1–T15).
std::unique_ptr<tokenizer> load_vocab_txt(std::string_view text, const wordpiece_options& opt, const std::string& file = "vocab.txt");
std::unique_ptr<tokenizer> load_gpt2_files(std::string_view vocab_json, std::string_view merges_txt);
std::unique_ptr<tokenizer> load_tokenizer_json(std::string_view text, const std::string& file = "tokenizer.json");

// Streaming decoder: feed token bytes, get back only whole UTF-8 characters; finish() flushes a trailing
// incomplete sequence as U+FFFD.
class utf8_stream {
public:
    std::string push(std::string_view bytes);
    std::string finish();

private:
    std::string pending_;
};

}  // namespace wf
