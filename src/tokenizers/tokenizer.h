// Tokenizers with Hugging Face `tokenizers` semantics. The base class holds what every kind shares: the
// vocabulary, the special tokens by role (from the model's own files, never assumed by name), the texts matched
// as whole tokens before normalization (special and added tokens, as the fast tokenizers do), and the template
// that encode(…, add_special_tokens = true) wraps around a text. Kinds: wordpiece.h (BERT), bpe.h (byte-level
// BPE); loaders for every file format in load.h. Text is UTF-8 bytes with a length; ill-formed bytes decode to
// U+FFFD.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace wf {

// Token ids by role; −1 where the tokenizer has none.
struct special_tokens {
    int32_t unk = -1, cls = -1, sep = -1, pad = -1, mask = -1, bos = -1, eos = -1;
};

// What encode(text, true) puts around a text: Hugging Face's post-processor ([CLS] … [SEP] for BERT, <s> … </s>
// for RoBERTa, BOS for Llama, nothing for GPT-2), and around a pair of texts (pair_before A pair_middle B
// pair_after: BERT [CLS] A [SEP] B [SEP], RoBERTa <s> A </s></s> B </s>). Token types: 0 up to B, then type_b.
struct special_template {
    std::vector<int32_t> before, after;
    std::vector<int32_t> pair_before, pair_middle, pair_after;
    int32_t type_b = 1;
    bool has_pair = false;  // false: the tokenizer takes no pairs (GPT-2)
    bool after_if_absent = false;  // T5: `after` is not added to a text that already ends with it ("…</s>")
    static special_template bert(int32_t cls, int32_t sep) { return {{cls}, {sep}, {cls}, {sep}, {sep}, 1, true}; }
    static special_template roberta(int32_t cls, int32_t sep) { return {{cls}, {sep}, {cls}, {sep, sep}, {sep}, 0, true}; }
    static special_template t5(int32_t eos) { return {{}, {eos}, {}, {eos}, {eos}, 0, true, true}; }  // A </s> B </s>
    static special_template llama(int32_t bos) { return {{bos}, {}, {bos}, {bos}, {}, 1, true}; }    // <s> A <s> B
};

// Bytes [begin, end) of the text a token came from.
struct token_span {
    int32_t begin = 0, end = 0;
    bool operator==(const token_span&) const = default;
};
// A text's tokens without the template, with where each came from.
struct encoding {
    std::vector<int32_t> ids;
    std::vector<token_span> offsets;  // into the encoded text
    std::vector<int32_t> words;       // the pre-tokenizer's word each token belongs to (0, 1, …; Hugging Face's word_ids)
    // Tokens [begin, end) of this encoding (a window of a long text, or the text cut short).
    encoding slice(size_t begin, size_t end) const {
        return {{ids.begin() + long(begin), ids.begin() + long(end)},
                {offsets.begin() + long(begin), offsets.begin() + long(end)},
                {words.begin() + long(begin), words.begin() + long(end)}};
    }
};
// One or two encodings inside the template: what the model reads.
struct model_input {
    std::vector<int32_t> ids, types;
    std::vector<token_span> offsets;  // into the token's own text; (0, 0) for the template's tokens
    std::vector<int8_t> sequence;     // −1: a template token; 0: the first text; 1: the second
    std::vector<int32_t> words;       // the word in its own text (encoding::words); −1 for the template's tokens
};

// Hugging Face's clean_up_tokenization_spaces: " ." → ".", " ," → ",", " n't" → "n't", " 's" → "'s", …
std::string clean_up_tokenization(std::string text);

class tokenizer {
public:
    virtual ~tokenizer() = default;
    // Texts over max_text_bytes are refused before any work (tasks refuse theirs sooner: task_max_text_bytes).
    static constexpr size_t max_text_bytes = size_t(64) << 20;
    std::vector<int32_t> encode(std::string_view text, bool add_special_tokens = true) const;
    // The tokens of a text with their byte offsets (Hugging Face's offsets_mapping, in UTF-8 bytes), no template.
    encoding encode_offsets(std::string_view text) const;
    // The template around a (and b): ids, token types, offsets and which text each token is from. Errors if the
    // tokenizer takes no pairs.
    model_input apply_template(const encoding& a, const encoding* b = nullptr) const;
    // Tokens the template adds around one text, or a pair.
    int64_t template_size(bool pair) const;
    // Byte-level BPE offsets leave out a token's leading spaces (RoBERTa's trim_offsets).
    void set_trim_offsets(bool on) { trim_offsets_ = on; }
    // T5Tokenizer's decoding (SentencePiece): the text stripped, and tokenizer_config.json's
    // clean_up_tokenization_spaces applied when it says so
    void set_t5_decoding(bool clean_up_spaces) { strip_decoded_ = true, clean_up_spaces_ = clean_up_spaces; }
    virtual std::string decode(const std::vector<int32_t>& ids, bool skip_special_tokens = false) const = 0;
    // The bytes one token stands for (BPE: raw bytes, possibly part of a UTF-8 character).
    virtual std::string token_bytes(int32_t id) const = 0;
    virtual bool is_byte_level() const = 0;
    int64_t vocab_size() const { return int64_t(id_to_token_.size()); }
    const std::string& token(int32_t id) const;  // the vocabulary string; error if out of range
    std::optional<int32_t> token_id(std::string_view token) const;
    const special_tokens& special() const { return special_; }
    const special_template& post_template() const { return template_; }
    bool is_special(int32_t id) const;

    // Set by the loaders (load.cpp). Every id must be a vocabulary id.
    void set_special(const special_tokens& s);
    void set_template(special_template t);
    // A text matched as one token wherever it appears in the input (special tokens, added tokens); `special`
    // tokens are the ones decode(…, skip_special_tokens) leaves out.
    // lstrip / rstrip: the match takes the whitespace before / after it too (RoBERTa's " <mask>").
    void add_token_text(std::string text, int32_t id, bool special = true, bool lstrip = false, bool rstrip = false);

protected:
    // Appends the ids of a stretch of text that contains no special token, and (when asked) each one's bytes in
    // the stretch and the word (numbered from 0 in the stretch) it belongs to.
    virtual void encode_text(std::string_view text, std::vector<int32_t>& out, std::vector<token_span>* offsets = nullptr,
                             std::vector<int32_t>* words = nullptr) const = 0;
    bool trim_offsets_ = false;
    bool clean_up_spaces_ = false, strip_decoded_ = false;
    // Splits text into (segment, special id or −1) around the token texts written in it.
    std::vector<std::pair<std::string_view, int32_t>> split_special(std::string_view text) const;
    std::vector<std::string> id_to_token_;
    struct sv_hash {  // lookups by string_view without building a std::string
        using is_transparent = void;
        size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
    };
    std::unordered_map<std::string, int32_t, sv_hash, std::equal_to<>> token_to_id_;

private:
    void check_id(int32_t id, const char* what) const;
    // encode / encode_offsets: the text's ids appended to `ids`, and their offsets and words to `detail` if given.
    void encode_into(std::string_view text, std::vector<int32_t>& ids, encoding* detail) const;
    struct token_text {
        std::string text;
        int32_t id;
        bool lstrip, rstrip;
    };
    std::vector<token_text> texts_;  // matched in raw text, longest first
    std::vector<int32_t> special_ids_;                    // sorted
    special_tokens special_;
    special_template template_;
};

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
