// ALBERT (Hugging Face's modeling_albert.py): BERT's encoder whose embeddings are narrower than the hidden size
// (embedding_size, then encoder.embedding_hidden_mapping_in) and whose layers share their weights — layer l uses
// the one layer of group l·num_hidden_groups / num_hidden_layers. The forward pass is BERT's (models/bert.cpp).
//   MLM         predictions.decoder(LayerNorm(act(predictions.dense(h)))) + predictions.bias   (tied, embedding width)
//   sequence    classifier(tanh(pooler(h[CLS])))
#include "models/bert.h"

namespace wf::models {
namespace {

bert_layout layout(const hparams& hp) {
    bert_layout l;
    l.family = "albert";
    l.prefixes = {"albert.", ""};
    l.projection = "encoder.embedding_hidden_mapping_in";
    l.layers = "encoder.albert_layer_groups.";
    l.layer = {"attention.query", "attention.key", "attention.value", "attention.dense", "attention.LayerNorm", "ffn", "ffn_output",
               "full_layer_layer_norm"};
    l.mlm = {"predictions.dense", hp.act, "predictions.decoder"};
    l.mlm_norm = "predictions.LayerNorm";
    l.mlm_bias = {"predictions.bias", "predictions.decoder.bias"};
    l.sequence = {"pooler", activation::tanh, "classifier"};
    return l;
}

hparams from_config(const json& j, const std::string& file) {
    const json k = with_defaults(j, {{"hidden_size", 4096}, {"num_attention_heads", 64}, {"intermediate_size", 16384}, {"hidden_act", "gelu_new"},
                                     {"vocab_size", 30000}});
    hparams hp = bert_config(k, file, 128);
    hp.n_layer_groups = config_int(j, "num_hidden_groups", 1, file);
    if (hp.n_layer_groups < 1 || hp.n_layer_groups > hp.n_layer)
        throw error(file + ": num_hidden_groups = " + std::to_string(hp.n_layer_groups) + " is outside [1, num_hidden_layers]");
    if (const int64_t inner = config_int(j, "inner_group_num", 1, file); inner != 1)
        throw error(file + ": inner_group_num = " + std::to_string(inner) + " is not supported (every released ALBERT has 1)");
    return hp;
}

constexpr std::string_view model_types[] = {"albert"};
constexpr std::string_view hf_architectures[] = {"AlbertForMaskedLM", "AlbertModel", "AlbertForPreTraining", "AlbertForSequenceClassification",
                                                 "AlbertForTokenClassification", "AlbertForQuestionAnswering"};

}  // namespace

extern const architecture albert_architecture = {
    "albert", model_types, hf_architectures, {}, cap_encoder | cap_masked_lm, from_config, nullptr, {}, build_with<layout>};

}  // namespace wf::models
