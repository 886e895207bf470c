// Model hyper-parameters, one struct for every family (each reads the fields it has), validated against caps
// before anything is allocated. Families fill it from config.json or GGUF metadata (models/*.cpp) with the
// helpers below.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/json.h"
#include "formats/gguf.h"

namespace wf {

// gelu_erf: BERT "gelu"; gelu_tanh: GPT-2 "gelu_new"; relu and tanh: classification heads (and DistilBERT's
// "relu" feed-forward); silu: Llama's gate.
enum class activation { gelu_erf, gelu_tanh, relu, tanh, silu };

struct hparams {
    std::string arch;          // the registry's name of the family ("bert", "gpt2")
    int64_t n_vocab = 0;
    int64_t n_embd = 0;
    int64_t n_layer = 0;
    int64_t n_head = 0;
    int64_t n_head_kv = 0;     // key/value heads (grouped-query attention); = n_head without it
    int64_t n_ff = 0;
    int64_t n_ctx = 0;         // positions the model has (max_position_embeddings / n_positions)
    int64_t n_type_vocab = 0;  // token types (BERT's segments); 0: none
    float eps = 1e-12f;
    activation act = activation::gelu_erf;
    int64_t bos_token_id = -1, eos_token_id = -1, pad_token_id = -1;  // −1: not given
    int64_t position_offset = 0;  // RoBERTa's positions start at pad_token_id + 1: it takes n_ctx − offset tokens
    int64_t max_tokens() const { return n_ctx - position_offset; }
    int64_t n_embd_token = 0;    // width of the token embeddings when it differs from n_embd (ELECTRA's, ALBERT's embedding_size)
    int64_t n_layer_groups = 0;  // ALBERT: groups of layers that share one layer's weights (0: none shared)
    // What an encoder checkpoint was fine-tuned for: the head its config.json's architectures[0] names.
    std::string head;                 // "masked_lm", "sequence_classification", "token_classification",
                                      // "question_answering", "pretraining" (ELECTRA's discriminator), "" (none)
    std::vector<std::string> labels;  // id2label in id order (classification heads)
    bool multi_label = false;         // problem_type "multi_label_classification": sigmoid, not softmax
    activation head_act = activation::gelu_erf;  // ModernBERT: its prediction head's classifier_activation
    bool mean_pooling = false;        // ModernBERT: classifier_pooling "mean" (the sequence head reads the tokens' mean)
    bool head_dense_optional = false; // BERT's GGUF classifiers: the head's dense layer only where the file has one
                                      // (llama.cpp's converter drops the pooler; its rank pooling then classifies
                                      // the first token's state as it is)
    int64_t n_head_dim = 0;           // per-head width where the config gives one (Gemma, Qwen3); 0: n_embd / n_head
    int64_t head_dim() const { return n_head_dim > 0 ? n_head_dim : n_embd / n_head; }

    // Decoders with rotary positions (Llama, Qwen2, Mistral, …)
    float rope_theta = 10000.0f;  // base of the rotation frequencies
    int64_t n_rot = 0;            // values of each head rotated; 0: all of them
    bool rope_neox = true;        // rotate_half pairs (i, i + n_rot/2), as Hugging Face; false: adjacent pairs (llama.cpp's "normal")
    struct rope_scaling_t {
        std::string type;                  // "" (none), "linear", "llama3"
        float factor = 1.0f;               // linear: positions divided by it; llama3: long wavelengths divided by it
        float low_freq_factor = 1.0f, high_freq_factor = 4.0f;  // llama3: the band between them is interpolated
        int64_t original_ctx = 8192;       // llama3: original_max_position_embeddings
    } rope_scaling;
    int64_t sliding_window = 0;   // Mistral: a query sees itself and the sliding_window − 1 positions before it; 0: all
    bool tied_embeddings = true;  // the output matrix is the token embeddings unless the file has its own
    // Gemma's and Gemma 2's differences from Llama
    float embedding_multiplier = 1.0f;   // Gemma: the token embeddings × √n_embd
    float norm_weight_offset = 0.0f;     // Gemma's RMSNorm scales by (1 + w): 1 (llama.cpp's Gemma GGUF files store 1 + w: 0)
    float attn_softcap = 0.0f;           // Gemma 2: scores become c·tanh(score / c); 0: none
    float final_softcap = 0.0f;          // Gemma 2: logits become c·tanh(logit / c); 0: none
    float attn_scale = 0.0f;             // Gemma 2: query_pre_attn_scalar^−½; 0: head_dim^−½
    int64_t sliding_window_pattern = 0;  // with a sliding window: layer l slides unless l % pattern == pattern − 1
                                         // (Gemma 2: 2, its even layers slide); 0: every layer slides
                                         // (ModernBERT: layer l is global when l % pattern == 0; its window is
                                         // local_attention, a query seeing the keys within ±local_attention / 2)
    float rope_theta_local = 0.0f;       // ModernBERT: the sliding-window layers' rotary base; 0: rope_theta
    // Encoder–decoder models (Marian): the decoder's own sizes (the encoder's are n_layer, n_head, n_ff) and the
    // token the decoder starts from
    int64_t n_dec_layer = 0, n_dec_head = 0, n_dec_ff = 0;
    int64_t decoder_start_token_id = -1;
    // T5: the gated feed-forward (act(wi_0·x) ⊙ wi_1·x, "gated-gelu"), the relative position buckets
    bool gated_ff = false;
    int64_t rel_buckets = 0, rel_max_distance = 0;
    // Per dimension pair, the frequencies of the rotation: theta^(−2i/n_rot), rescaled as rope_scaling says.
    std::vector<float> rope_inv_freq() const;
};

// Positions any model gets: a decoder with rotary positions trained on more (Llama 3.2: 131072) runs at most this
// many (wasm32's memory holds a KV cache of a few thousand positions for the models that fit in it).
constexpr int64_t max_context = 8192;

// Caps (DESIGN.md §4): vocab ≤ 2^20, hidden ≤ 8192, layers ≤ 128, heads ≤ 1024 (a multiple of the key/value
// heads), ff ≤ 65536, positions ≤ 8192, token types ≤ 1024, hidden % heads == 0, eps in (0, 0.1], token ids < vocab.
void validate_hparams(const hparams& hp, const std::string& what);

// "gelu" → erf GELU; "gelu_new", "gelu_pytorch_tanh", "gelu_fast" → tanh GELU; "relu", "tanh"; else an error naming
// the key.
activation parse_activation(const std::string& name, const std::string& what, const char* key);

// config.json fields: absent or null → the default; present → checked type (errors name the file and key).
int64_t config_int(const json& j, const char* key, int64_t dflt, const std::string& file);
double config_float(const json& j, const char* key, double dflt, const std::string& file);
std::string config_string(const json& j, const char* key, const std::string& dflt, const std::string& file);
bool config_bool(const json& j, const char* key, bool dflt, const std::string& file);
// config.json with a family's own defaults for the keys it omits (where the family's differ from its base's).
inline json with_defaults(json j, std::initializer_list<std::pair<const char*, json>> defaults) {
    for (const auto& [key, value] : defaults)
        if (!j.contains(key)) j[key] = value;
    return j;
}

// The metadata every llama.cpp architecture writes ("{arch}.block_count", ".context_length", ".embedding_length",
// ".feed_forward_length", ".attention.head_count", ".attention.head_count_kv" if present), n_vocab from
// token_embd.weight's shape, and eps from ".attention.layer_norm_epsilon".
hparams gguf_common_hparams(const gguf_file& g, const std::string& arch);

// An encoder's task head from config.json: architectures[0] with the family's class prefix ("Bert", "Roberta", …)
// names it (…ForMaskedLM, …ForSequenceClassification, …ForTokenClassification, …ForQuestionAnswering,
// …ForPreTraining, …Model), and id2label / num_labels / problem_type give its labels. Unknown suffixes are errors.
void read_encoder_head(const json& j, const std::string& file, hparams& hp);

// A classifier in a GGUF file as llama.cpp writes it (convert_hf_to_gguf.py's BertModel and its subclasses, for
// …ForSequenceClassification and rerankers; llama.cpp runs it as its "rank" pooling): the output layer cls.output
// (the dense layer before it, cls, optional) and the labels "{arch}.classifier.output_labels" (absent: LABEL_0 …,
// one per row of cls.output). With cls.output, hp.head becomes "sequence_classification"; without, nothing changes.
// Errors name the file and the key.
void read_gguf_classifier(const gguf_file& g, const std::string& arch, hparams& hp);

}  // namespace wf
