// MarianTokenizer (Helsinki-NLP opus-mt folders): two SentencePiece models, source.spm for the texts to translate and
// target.spm for the translations, over one vocabulary, vocab.json, that gives the model's ids. A source text is
// cut into source.spm's pieces (an unknown run of characters is its own text), each looked up in vocab.json
// (missing: vocab.json's <unk>), then </s>; a language code written first (">>es<<", multilingual models) is one
// token. Decoding joins target.spm's pieces (its <unk> as " ⁇ ", a piece it lacks as its own text, as sentencepiece
// does) and turns ▁ into spaces. Special tokens written in a text (</s>, <unk>, <pad>) are matched whole, as the slow
// tokenizers do.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizers/sentencepiece.h"

namespace wf {

class marian_tokenizer : public tokenizer {
public:
    // vocab: vocab.json's pieces by id (dense from 0); target may be null (then source.spm decodes too)
    marian_tokenizer(std::unique_ptr<sentencepiece_tokenizer> source, std::unique_ptr<sentencepiece_tokenizer> target, std::vector<std::string> vocab);
    // Hugging Face's MarianTokenizer.decode: the pieces between special tokens through target.spm, the special
    // tokens themselves (unless skipped) followed by a space, ▁ → space, stripped.
    std::string decode(const std::vector<int32_t>& ids, bool skip_special_tokens = false) const override;
    std::string token_bytes(int32_t id) const override;
    bool is_byte_level() const override { return true; }

protected:
    void encode_text(std::string_view text, std::vector<int32_t>& out, std::vector<token_span>* offsets, std::vector<int32_t>* words) const override;

private:
    std::string decode_pieces(const std::vector<int32_t>& ids) const;
    std::unique_ptr<sentencepiece_tokenizer> source_, target_;
};

}  // namespace wf
