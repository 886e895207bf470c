// SentencePiece tokenizers (XLM-R, ALBERT, T5, Marian: Unigram; Llama 1/2, Mistral: BPE with byte fallback), as
// google/sentencepiece encodes: its normalizer (precompiled charsmap rules by longest match, dummy prefix, extra
// whitespace removed, spaces escaped to ▁, user-defined symbols kept whole), then the model over the normalized
// text (Unigram: the Viterbi best segmentation by piece scores; BPE: merges by piece score), then unknown pieces
// either merged (a run of unknown characters is one <unk>) or spelt as <0xNN> byte pieces. Offsets map each token
// back through the normalization to the original bytes.
//
// Two front ends over the same models: sentencepiece's own (.model files, GGUF's "llama" vocabularies), and Hugging
// Face's (tokenizer.json: a Sequence of Precompiled / Replace / Strip normalizers, the Metaspace pre-tokenizer, the
// model per word).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tokenizers/tokenizer.h"

namespace wf {

// sentencepiece's ModelProto.SentencePiece.Type (llama.cpp's token types use the same numbers).
enum class piece_type : uint8_t { normal = 1, unknown = 2, control = 3, user_defined = 4, unused = 5, byte = 6 };

struct sentencepiece_piece {
    std::string text;
    float score = 0;
    piece_type type = piece_type::normal;
};

// What a SentencePiece model file holds that encoding needs (ModelProto: pieces, trainer_spec, normalizer_spec).
struct sentencepiece_model {
    enum class kind { unigram, bpe } type = kind::unigram;
    std::vector<sentencepiece_piece> pieces;
    bool byte_fallback = false;
    // normalizer_spec
    std::string normalizer_name;
    std::string precompiled_charsmap;  // the rules blob (empty: no rules)
    bool add_dummy_prefix = true, remove_extra_whitespaces = true, escape_whitespaces = true;
    // trainer_spec's names of the special pieces (roles are looked up by these)
    std::string unk_piece = "<unk>", bos_piece = "<s>", eos_piece = "</s>", pad_piece = "<pad>";
};

// Reads sentencepiece's ModelProto (protobuf wire format) from a .model file's bytes; every malformed input is a
// wf::error naming `file` and the field.
sentencepiece_model parse_sentencepiece_model(std::string_view bytes, const std::string& file);

// A precompiled charsmap: normalization rules compiled into a Darts-clone double-array trie over UTF-8 byte
// strings, whose values index a blob of NUL-terminated replacements. Blob: u32 little-endian trie size in bytes,
// the trie's 32-bit units, then the replacements.
class precompiled_charsmap {
public:
    precompiled_charsmap() = default;
    precompiled_charsmap(std::string_view blob, const std::string& what);
    bool empty() const { return units_.empty(); }
    // The longest rule matching a prefix of text: (replacement, bytes consumed); consumed is 0 when none matches.
    std::pair<std::string_view, size_t> match(std::string_view text) const;

private:
    std::vector<uint32_t> units_;
    std::string replacements_;
};

// Hugging Face's normalizers a tokenizer.json may chain before Metaspace.
struct hf_normalizer {
    enum class kind { precompiled, replace, strip } type = kind::precompiled;
    precompiled_charsmap charsmap;     // precompiled
    std::string pattern, content;      // replace: a literal text, or with `runs`, a run of ≥ 2 of `pattern` (" {2,}")
    bool runs = false;
    bool strip_left = false, strip_right = false;
};
// Hugging Face's Metaspace pre-tokenizer (and, with whitespace_split, a WhitespaceSplit before it).
struct hf_metaspace {
    std::string replacement = "\xE2\x96\x81";
    enum class prepend { always, first, never } scheme = prepend::always;
    bool split = true;
    bool whitespace_split = false;
};

class sentencepiece_tokenizer : public tokenizer {
public:
    // sentencepiece's own pipeline.
    sentencepiece_tokenizer(sentencepiece_model model, const std::string& source);
    // Hugging Face's (tokenizer.json): the normalizers in order, then Metaspace, then the model per word. Scores
    // add up in double precision, as Hugging Face's Unigram does.
    sentencepiece_tokenizer(sentencepiece_model model, std::vector<hf_normalizer> normalizers, hf_metaspace metaspace, const std::string& source);

    std::string decode(const std::vector<int32_t>& ids, bool skip_special_tokens = false) const override;
    // ▁ is a space, <0xNN> its byte; control and unknown pieces their own text.
    std::string token_bytes(int32_t id) const override;
    // Byte-fallback pieces are single bytes (possibly part of a UTF-8 character), and a word's first token carries
    // its space: token texts are not WordPiece's continuations.
    bool is_byte_level() const override { return true; }
    const sentencepiece_model& model() const { return model_; }
    // The normalized text the model segments (▁ for spaces), for tests.
    std::string normalize(std::string_view text) const;
    // sentencepiece's encode(text, out_type=str) beside the ids (its own pipeline only): each token's piece, and for
    // a run of unknown characters the normalized text itself (what MarianTokenizer looks up in its vocab.json).
    struct piece_token {
        int32_t id;
        std::string piece;
        token_span offset;  // bytes of `text`
        int32_t word;
    };
    std::vector<piece_token> encode_pieces(std::string_view text) const;

protected:
    void encode_text(std::string_view text, std::vector<int32_t>& out, std::vector<token_span>* offsets, std::vector<int32_t>* words) const override;

private:
    // Normalized text with, for every byte, the offset in the original text its source starts at (and one more
    // entry: where the text ends), as sentencepiece's norm_to_orig.
    struct normalized {
        std::string text;
        std::vector<int32_t> to_orig;
    };
    struct piece_span {  // a segment of the normalized text and the piece it is (or the unknown id)
        int32_t begin, end, id;
    };
    void init(const std::string& source);
    normalized spm_normalize(std::string_view text) const;
    normalized hf_normalize(std::string_view text) const;
    // a prefix of text as the charsmap (or the user-defined symbols) normalize it: (replacement, bytes consumed)
    std::pair<std::string_view, size_t> normalize_prefix(std::string_view text) const;
    size_t user_defined_prefix(std::string_view text) const;
    void unigram(std::string_view text, int32_t at, std::vector<piece_span>& out) const;
    void bpe(std::string_view text, int32_t at, std::vector<piece_span>& out) const;
    // the model over one stretch [begin, end) of normalized text, then unknowns merged or spelt in bytes
    void segment(const normalized& n, int32_t begin, int32_t end, int32_t word, std::vector<int32_t>& out, std::vector<token_span>* offsets,
                 std::vector<int32_t>* words, std::vector<std::string>* surfaces = nullptr) const;
    const sentencepiece_piece& piece(int32_t id) const { return token(id), model_.pieces[size_t(id)]; }  // range-checked
    bool is_unknown(int32_t id) const { return id >= 0 && model_.pieces[size_t(id)].type == piece_type::unknown; }

    sentencepiece_model model_;
    bool hf_ = false;
    std::vector<hf_normalizer> hf_normalizers_;
    hf_metaspace metaspace_;
    precompiled_charsmap charsmap_;
    // the pieces the model segments into (normal, user-defined, unused), as a trie of sorted children: node k's
    // children are nodes first_child_[k] … first_child_[k] + child_count_[k] − 1, with ascending labels
    std::vector<int32_t> first_child_, node_piece_;
    std::vector<uint16_t> child_count_;
    std::vector<uint8_t> label_;
    std::unordered_map<std::string, int32_t, sv_hash, std::equal_to<>> model_pieces_;  // the same pieces by text
    std::vector<std::string> user_defined_;  // matched before normalization, longest first
    int32_t unk_ = -1;
    int32_t byte_piece_[256];
    float min_score_ = 0, max_score_ = 0;
};

}  // namespace wf
