// DistilBERT (Hugging Face's modeling_distilbert.py): BERT's encoder with six layers' worth of other names, no
// token types, and its own heads — the forward pass is BERT's (models/bert.cpp).
//   MLM         vocab_projector(LayerNorm(act(vocab_transform(h))))   (tied to the word embeddings)
//   sequence    classifier(ReLU(pre_classifier(h[CLS])))
#include "models/bert.h"

namespace wf::models {
namespace {

bert_layout layout(const hparams& hp) {
    bert_layout l;
    l.family = "distilbert";
    l.prefixes = {"distilbert.", ""};
    l.type = "";
    l.layers = "transformer.layer.";
    l.layer = {"attention.q_lin", "attention.k_lin", "attention.v_lin", "attention.out_lin", "sa_layer_norm", "ffn.lin1", "ffn.lin2",
               "output_layer_norm"};
    l.mlm = {"vocab_transform", hp.act, "vocab_projector"};
    l.mlm_norm = "vocab_layer_norm";
    l.mlm_bias = {"vocab_projector.bias"};
    l.sequence = {"pre_classifier", activation::relu, "classifier"};
    return l;
}

hparams from_config(const json& j, const std::string& file) {
    hparams hp;
    hp.n_vocab = config_int(j, "vocab_size", 30522, file);
    hp.n_embd = config_int(j, "dim", 768, file);
    hp.n_layer = config_int(j, "n_layers", 6, file);
    hp.n_head = hp.n_head_kv = config_int(j, "n_heads", 12, file);
    hp.n_ff = config_int(j, "hidden_dim", 3072, file);
    hp.n_ctx = config_int(j, "max_position_embeddings", 512, file);
    hp.n_type_vocab = 0;
    hp.eps = 1e-12f;  // fixed in modeling_distilbert.py
    hp.act = parse_activation(config_string(j, "activation", "gelu", file), file, "activation");
    hp.pad_token_id = config_int(j, "pad_token_id", 0, file);
    read_encoder_head(j, file, hp);
    return hp;
}

constexpr std::string_view model_types[] = {"distilbert"};
constexpr std::string_view hf_architectures[] = {"DistilBertForMaskedLM", "DistilBertModel", "DistilBertForSequenceClassification",
                                                 "DistilBertForTokenClassification", "DistilBertForQuestionAnswering"};

}  // namespace

extern const architecture distilbert_architecture = {
    "distilbert", model_types, hf_architectures, {}, cap_encoder | cap_masked_lm, from_config, nullptr, {}, build_with<layout>};

}  // namespace wf::models
