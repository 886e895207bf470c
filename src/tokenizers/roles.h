// The special tokens' roles (unk, cls, sep, pad, mask, bos, eos): what tokenizer_config.json and
// special_tokens_map.json say of them, and which token of a vocabulary plays each. Shared by the loaders of Hugging
// Face's files (load.cpp) and of GGUF's vocabularies (load-gguf.cpp); internal to src/tokenizers.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "formats/file-set.h"
#include "tokenizers/sentencepiece.h"
#include "tokenizers/tokenizer.h"

namespace wf::token_roles {

// The role names and, for each, the token texts that usually play it, tried in order when no file names it.
struct role {
    const char* key;  // tokenizer_config.json's name
    int32_t special_tokens::*id;
    std::vector<const char*> usual;
};
// What tokenizer_config.json (or special_tokens_map.json) says: role → token text, and BERT's casing.
struct tokenizer_config {
    std::vector<std::pair<const role*, std::string>> roles;
    std::vector<const role*> lstrip;  // roles whose token takes the whitespace before it (RoBERTa's mask)
    std::string tokenizer_class;
    std::optional<bool> lowercase, strip_accents;
    int64_t extra_ids = 0;  // T5Tokenizer: <extra_id_0> … appended after the SentencePiece pieces
    bool clean_up_spaces = false;  // clean_up_tokenization_spaces (false unless the file says: transformers ≥ 4.45)
};

// tokenizer_config.json and special_tokens_map.json of files (the second wins), where present.
tokenizer_config read_config(const file_set& files);
// Gives each role its token: the one the config names (an error naming `source` if the vocabulary lacks it), else
// the one `found` holds, else the first usual text the vocabulary has. Each role's token is matched as a whole
// wherever the text contains it.
void assign_roles(tokenizer& t, const tokenizer_config& cfg, const std::string& source, special_tokens found = {});
// BERT's template ([CLS] … [SEP], [CLS] A [SEP] B [SEP]) when the tokenizer has both.
void bert_template(tokenizer& t);
// The roles of a SentencePiece model's pieces: its unknown piece, and the control pieces trainer_spec names.
special_tokens sentencepiece_roles(const sentencepiece_tokenizer& t);

}  // namespace wf::token_roles
