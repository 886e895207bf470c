// RoBERTa, XLM-RoBERTa and CamemBERT (Hugging Face's modeling_roberta.py): BERT's encoder under "roberta.", with
// positions counted from padding_idx + 1 (pad_token_id + 1; padding itself sits at padding_idx), one token type,
// and its own heads — the forward pass is BERT's (models/bert.cpp).
//   MLM         lm_head.decoder(LayerNorm(GELU(lm_head.dense(h)))) + lm_head.bias   (tied to the word embeddings)
//   sequence    classifier.out_proj(tanh(classifier.dense(h[<s>])))
#include "models/bert.h"

namespace wf::models {
namespace {

bert_layout layout(const hparams&) {
    bert_layout l;
    l.family = "roberta";
    l.prefixes = {"roberta.", ""};
    l.mlm = {"lm_head.dense", activation::gelu_erf, "lm_head.decoder"};
    l.mlm_norm = "lm_head.layer_norm";
    l.mlm_bias = {"lm_head.bias", "lm_head.decoder.bias"};
    l.sequence = {"classifier.dense", activation::tanh, "classifier.out_proj"};
    return l;
}

hparams from_config(const json& j, const std::string& file) {
    const json k = with_defaults(j, {{"pad_token_id", 1}, {"type_vocab_size", 1}, {"layer_norm_eps", 1e-5}, {"max_position_embeddings", 514},
                                     {"vocab_size", 50265}});
    hparams hp = bert_config(k, file);
    if (hp.pad_token_id < 0 || hp.pad_token_id + 2 > hp.n_ctx)
        throw error(file + ": pad_token_id = " + std::to_string(hp.pad_token_id) + " leaves no positions (max_position_embeddings = " +
                    std::to_string(hp.n_ctx) + "; RoBERTa's positions start at pad_token_id + 1)");
    hp.position_offset = hp.pad_token_id + 1;
    return hp;
}

constexpr std::string_view model_types[] = {"roberta", "xlm-roberta", "camembert"};
constexpr std::string_view hf_architectures[] = {
    "RobertaForMaskedLM", "RobertaModel", "RobertaForSequenceClassification", "RobertaForTokenClassification", "RobertaForQuestionAnswering",
    "XLMRobertaForMaskedLM", "XLMRobertaModel", "XLMRobertaForSequenceClassification", "XLMRobertaForTokenClassification",
    "XLMRobertaForQuestionAnswering", "CamembertForMaskedLM", "CamembertModel", "CamembertForSequenceClassification",
    "CamembertForTokenClassification", "CamembertForQuestionAnswering"};

}  // namespace

extern const architecture roberta_architecture = {
    "roberta", model_types, hf_architectures, {}, cap_encoder | cap_masked_lm, from_config, nullptr, {}, build_with<layout>};

}  // namespace wf::models
