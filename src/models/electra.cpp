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
    l.token = {"", activation::tanh, "classifier"};
    l.pretraining = {"discriminator_predictions.dense", hp.act, "discriminator_predictions.dense_prediction"};
    l.pretraining_is_mlm = false;
    return l;
}

hparams from_config(const json& j, const std::string& file) {
    hparams hp = bert_config(j, file);
    const int64_t e = config_int(j, "embedding_size", 128, file);
    hp.n_embd_token = e == hp.n_embd ? 0 : e;
    return hp;
}

hparams no_gguf(const gguf_file& g) { throw error(g.file_name + ": ELECTRA has no GGUF architecture"); }

constexpr std::string_view model_types[] = {"electra"};
constexpr std::string_view hf_architectures[] = {"ElectraForPreTraining", "ElectraForMaskedLM", "ElectraModel", "ElectraForSequenceClassification",
                                                 "ElectraForTokenClassification", "ElectraForQuestionAnswering"};

std::unique_ptr<model> build(const hparams& hp, const tensor_source& src, const storage_plan& plan) {
    return build_bert_encoder(hp, src, plan, layout(hp));
}

}  // namespace

extern const architecture electra_architecture = {
    "electra", model_types, hf_architectures, {}, cap_encoder | cap_masked_lm, from_config, no_gguf, {}, build};

}  // namespace wf::models
