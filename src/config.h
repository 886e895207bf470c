// Model hyper-parameters from a Hugging Face config.json (or GGUF metadata), validated against caps.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace wf {

enum class arch { bert, gpt2 };
enum class activation { gelu_erf, gelu_tanh };

struct hparams {
    arch architecture = arch::bert;
    int64_t n_vocab = 0;
    int64_t n_embd = 0;
    int64_t n_layer = 0;
    int64_t n_head = 0;
    int64_t n_ff = 0;
    int64_t n_ctx = 0;           // position table size (max_position_embeddings / n_positions)
    int64_t n_type_vocab = 0;    // BERT token types
    float eps = 1e-12f;
    activation act = activation::gelu_erf;
    int64_t bos_token_id = -1, eos_token_id = -1, pad_token_id = -1;  // −1: not given
    int64_t head_dim() const { return n_embd / n_head; }
};

// Fields missing from the file take Hugging Face's defaults (BertConfig / GPT2Config); values are checked:
// vocab ≤ 1M, hidden ≤ 8192, layers ≤ 128, positions ≤ 8192, ff ≤ 65536, hidden % heads == 0, eps in (0, 0.1].
hparams parse_config(std::string_view text, const std::string& file_name = "config.json");
void validate_hparams(const hparams& hp, const std::string& what);
const char* arch_name(arch a);

}  // namespace wf
