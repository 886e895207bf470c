// ELECTRA (Hugging Face's modeling_electra.py): BERT's encoder under "electra.", whose embeddings may be narrower
// than the hidden size (embedding_size, then embeddings_project), with its own heads — the forward pass is BERT's
// (models/bert.cpp).
//   discriminator (…ForPreTraining)  one logit per token: dense_prediction(act(discriminator_predictions.dense(h)))
//   generator (…ForMaskedLM)         generator_lm_head(LayerNorm(GELU(generator_predictions.dense(h))))   (tied)
//   sequence                         classifier.out_proj(GELU(classifier.dense(h[CLS])))
#include "models/bert.h"

namespace wf::models {
namespace {

bert_layout layout(const hparams& hp) {
    bert_layout l;
    l.family = "electra";
    l.prefixes = {"electra.", ""};
    l.projection = "embeddings_project";
    l.mlm = {"generator_predictions.dense", activation::gelu_erf, "generator_lm_head"};
    l.mlm_norm = "generator_predictions.LayerNorm";
    l.mlm_bias = {"generator_lm_head.bias"};
    l.sequence = {"classifier.dense", activation::gelu_erf, "classifier.out_proj"};
    l.pretraining = {"discriminator_predictions.dense", hp.act, "discriminator_predictions.dense_prediction"};
    l.pretraining_is_mlm = false;
    return l;
}

hparams from_config(const json& j, const std::string& file) { return bert_config(j, file, 128); }

constexpr std::string_view model_types[] = {"electra"};
constexpr std::string_view hf_architectures[] = {"ElectraForPreTraining", "ElectraForMaskedLM", "ElectraModel", "ElectraForSequenceClassification",
                                                 "ElectraForTokenClassification", "ElectraForQuestionAnswering"};

}  // namespace

extern const architecture electra_architecture = {
    "electra", model_types, hf_architectures, {}, cap_encoder | cap_masked_lm, from_config, nullptr, {}, build_with<layout>};

}  // namespace wf::models
