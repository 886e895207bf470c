// The BERT encoder and the families that are BERT with other names (DistilBERT, RoBERTa / XLM-RoBERTa, ELECTRA):
// one forward pass (bert.cpp), and per family a layout — where its tensors are and how its embeddings and heads
// differ. Each family's file (models/<family>.cpp) writes its layout and its config.json reading.
#pragma once

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "models/registry.h"

namespace wf::models {

// A head's tensors: an optional dense layer (base name, "" for none) with its activation, then the output layer.
struct head_names {
    std::string dense;  // "classifier.dense"; "" for none
    activation act = activation::tanh;
    std::string out;    // "classifier.out_proj"
};

struct bert_layout {
    std::string family;                  // "roberta": in errors
    std::vector<std::string> prefixes;   // of the encoder's names, tried in order ("roberta.", "")
    // embeddings, base names (".weight" / ".bias" appended)
    std::string word = "embeddings.word_embeddings", position = "embeddings.position_embeddings";
    std::string type = "embeddings.token_type_embeddings";  // "" when the family has no token types
    std::string emb_norm = "embeddings.LayerNorm";
    std::string projection;              // ELECTRA's embeddings_project (when embedding_size ≠ hidden size), else ""
    // (RoBERTa's position offset and ALBERT's layer groups are hyper-parameters: hparams.position_offset, n_layer_groups)
    // the layers: "<prefix><layers><l>.<part>"; with layer groups (ALBERT) the layers of a group share one layer's
    // weights, "<prefix><layers><group>.albert_layers.0.<part>"
    std::string layers = "encoder.layer.";
    std::array<std::string, 8> layer = {"attention.self.query", "attention.self.key", "attention.self.value",
                                        "attention.output.dense", "attention.output.LayerNorm", "intermediate.dense",
                                        "output.dense", "output.LayerNorm"};
    // heads, full names (no prefix); the masked-LM head is dense → activation → norm → decoder (tied) + bias
    head_names mlm;                      // mlm.out = the decoder's base name
    std::string mlm_norm;
    std::vector<std::string> mlm_bias;   // the output bias's names, in the order tried
    head_names sequence;
    head_names token{"", activation::tanh, "classifier"}, span{"", activation::tanh, "qa_outputs"};
    head_names pretraining;              // ELECTRA's discriminator (one logit per token); "" out: none
    bool pretraining_is_mlm = true;      // BERT's …ForPreTraining is a masked LM (and next-sentence) model
};

// The BERT forward pass with the family's layout. Builds the head hp.head names (and a masked-LM head when the
// config names no head and the file has one).
std::unique_ptr<model> build_bert_encoder(const hparams& hp, const tensor_source& src, const storage_plan& plan, const bert_layout& layout);
// A family's `build` for its architecture entry: the BERT forward pass with the family's layout.
template <bert_layout (*layout)(const hparams&)>
std::unique_ptr<model> build_with(const hparams& hp, const tensor_source& src, const storage_plan& plan) {
    return build_bert_encoder(hp, src, plan, layout(hp));
}

// config.json fields every BERT-like family shares under BERT's names (vocab_size, hidden_size, …, the head), and
// embedding_size where the family has it (ELECTRA, ALBERT: default_embedding_size when config.json omits it).
hparams bert_config(const json& j, const std::string& file, int64_t default_embedding_size = 0);

}  // namespace wf::models
