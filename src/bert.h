// BERT for masked-language modelling (Hugging Face BertForMaskedLM).
#pragma once

#include "config.h"
#include "model.h"
#include "weights.h"

namespace wf {

struct bert_layer {
    linear query, key, value;  // (E, E) each
    linear attn_out;           // (E, E)
    norm attn_norm;            // LayerNorm after attention + residual
    linear ff_up;              // (F, E)
    linear ff_down;            // (E, F)
    norm ff_norm;              // LayerNorm after feed-forward + residual
};

struct bert_weights {
    matrix_view word_emb;  // (V, E)
    matrix_view pos_emb;   // (P, E)
    matrix_view type_emb;  // (n_type_vocab, E)
    norm emb_norm;
    std::vector<bert_layer> layers;
    linear mlm_dense;          // (E, E): cls.predictions.transform.dense
    norm mlm_norm;             // cls.predictions.transform.LayerNorm
    matrix_view mlm_decoder;   // (V, E): the word embeddings (tied) unless the file has its own
    const float* mlm_bias = nullptr;  // (V)
};

class bert_model {
public:
    bert_model(const hparams& hp, const tensor_source& src, weight_format fmt);
    const hparams& hp() const { return hp_; }
    // Final hidden states (T, E) for one sequence of token ids (and token types, or all 0).
    std::vector<float> encode(const std::vector<int32_t>& ids, const std::vector<int32_t>& types = {},
                              forward_trace* trace = nullptr, const cancel_fn* cancel = nullptr) const;
    // MLM head on n rows of hidden states (n, E) → logits (n, V).
    std::vector<float> mlm_logits(const float* hidden, int64_t n) const;
    int64_t weight_bytes() const { return weight_bytes_; }
    bool borrows_file_bytes() const { return borrows_; }

private:
    hparams hp_;
    std::vector<std::unique_ptr<uint8_t[]>> owned_;  // converted or copied weights
    bert_weights w_;
    int64_t weight_bytes_ = 0;
    bool borrows_ = false;
};

}  // namespace wf
