// What a model can do, as interfaces the tasks ask for (never an architecture's name): an encoder gives hidden
// states, a masked LM adds a vocabulary head over them, a causal LM continues sequences with a KV cache.
// A family (models/*.cpp) implements the interfaces it has; the registry (models/registry.h) builds it.
//
// Models are immutable once built and can be shared; everything that changes during a call lives in the caller's
// state (a decoder_state, an arena), so one model serves several sessions.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "nn/arena.h"
#include "nn/hparams.h"
#include "nn/kv-cache.h"
#include "nn/weights.h"

namespace wf {

// What a forward pass records on request (tests, the attention views).
struct forward_trace {
    bool want_hidden = false;                   // hidden[0] = embeddings output, hidden[l+1] = after layer l
    int attention_layer = -2;                   // −2: none, −1: every layer, l: only layer l
    std::vector<std::vector<float>> hidden;     // each (T, n_embd), the first sequence of a batch
    std::vector<std::vector<float>> attention;  // per recorded layer: (n_head, T, n_kv), the first sequence
    std::vector<int> attention_layers;          // which layer each attention entry belongs to
    // Encoder–decoders' decoder: cross-attention over the source, for EVERY sequence (all the beams), recorded
    // when want_cross is set — per decoder layer l (in order): (n_seq, n_head, T, S)
    bool want_cross = false;
    std::vector<std::vector<float>> cross_attention;
    bool wants_attention(int layer) const { return attention_layer == -1 || attention_layer == layer; }
    // Whether a pass must run this layer at every row (the hidden states, or this layer's attention, are recorded).
    bool wants_layer(int layer) const { return want_hidden || wants_attention(layer); }
};

// Token sequences for an encoder, padded to one length: sequence b is lengths[b] tokens, then padding.
struct token_batch {
    int64_t n_seq = 0, n_tokens = 0;  // B sequences, T positions each
    std::vector<int32_t> ids;         // (B, T); padding positions hold any valid id
    std::vector<int32_t> types;       // (B, T) token types, or empty for all 0
    std::vector<int64_t> lengths;     // (B)
    // The rows (b·T + t, ascending) whose last states the caller reads — a classifier's first tokens, fill-mask's
    // masks — or empty for all. A model may then run its last layer at these rows only (keys and values still from
    // every token); the other rows of `hidden` are left unspecified.
    std::vector<int64_t> out_rows;
    // Throws, naming `who` (the family) and the row, unless out_rows ascend and lie within the batch.
    void check_out_rows(const std::string& who) const;
    static token_batch one(std::vector<int32_t> ids, std::vector<int32_t> types = {}) {
        token_batch b;
        b.n_seq = 1;
        b.n_tokens = int64_t(ids.size());
        b.lengths = {b.n_tokens};
        b.ids = std::move(ids);
        b.types = std::move(types);
        return b;
    }
};

class encoder {
public:
    virtual ~encoder() = default;
    // hidden (B·T, E): the last layer's states for every position (for batch.out_rows at least); padding positions
    // attend to nothing real and their rows are meaningless. Errors name the bad token id, length or row.
    virtual void encode(const token_batch& batch, float* hidden, arena& scratch, forward_trace* trace = nullptr,
                        const cancel_fn* cancel = nullptr) const = 0;
};

// A task head over an encoder's last hidden states: an optional dense layer and activation, then the output layer.
// Which rows it reads is the head's kind:
//   sequence — each sequence's first token ([CLS], <s>) → (labels): text classification, NLI, zero-shot
//   token    — every token → (labels): token classification (NER); ELECTRA's discriminator (1 output)
//   span     — every token → (2): the start and end logits of extractive question answering
enum class head_kind { sequence, token, span };
struct classifier_head {
    linear dense;                  // (E', E), or no matrix (w.data null): none
    activation act = activation::tanh;
    norm dense_norm;               // ModernBERT's prediction head: a LayerNorm after the activation; g null: none
    float norm_eps = 0.0f;
    linear out;                    // (outputs, E')
    // sequence heads: the rows they read — the first token's (BERT's [CLS]), or the mean of the sequence's tokens
    // (ModernBERT's classifier_pooling "mean")
    bool mean_pooling = false;
    int64_t n_outputs() const { return out.w.n_rows; }
};

class masked_lm : public encoder {
public:
    // The masked-LM head on n rows of hidden states (n, E) → logits (n, V).
    virtual void mlm_logits(const float* hidden, int64_t n, float* logits, arena& scratch) const = 0;
};

// One generation session's mutable state: the KV cache of its sequences, scratch, and the last logits.
struct decoder_state {
    kv_cache cache;
    arena scratch;
    std::vector<float> logits;  // (rows, V) of the last forward
};

class head_screen;

// The screen of a model's output layer for greedy steps (nn/head-screen.h), made once the model has run
// head_screen::steps_before greedy steps in full (a ski rental: making it costs about as much as it then saves over
// that many steps, so a short job never pays for it and a long one pays at most twice the least it could). The one
// state a model adds after it is built (a quarter of the layer's f32 bytes, kept while the model is), so calls must
// not race (the engine calls a model from one thread at a time).
class screen_slot {
public:
    screen_slot();  // out of line, with the destructor: head_screen is complete there
    ~screen_slot();
    // The screen of `head`, or null: none yet (this call counts a step), or none for this layer.
    const head_screen* get(const linear& head) const;

private:
    mutable int64_t unscreened_steps_ = 0;  // −1 once the screen was made (or found impossible)
    mutable std::unique_ptr<head_screen> screen_;
};

class causal_lm {
public:
    virtual ~causal_lm() = default;
    // A state for n_seq sequences of up to `capacity` positions (≤ n_ctx).
    virtual decoder_state new_state(int64_t capacity, int64_t n_seq = 1) const = 0;
    // Runs T new tokens of every sequence (ids: (n_seq, T)) at positions n_past … n_past+T−1, appends them to the
    // cache and returns the logits (n_seq, V) of each sequence's last token — or (n_seq·T, V) when all_logits.
    // The span points into the state and is valid until its next forward. On cancel or error the cache is left
    // as before the call.
    std::span<const float> forward(decoder_state& s, std::span<const int32_t> ids, bool all_logits = false, forward_trace* trace = nullptr,
                                   const cancel_fn* cancel = nullptr) const {
        return run(s, ids, all_logits, false, trace, cancel);
    }
    // forward up to the output layer: (n_seq, E), each sequence's last token as the output layer takes it
    // (logits = x·Wᵀ + b, output_layer()), for a caller that computes only some of the logits.
    std::span<const float> forward_hidden(decoder_state& s, std::span<const int32_t> ids, const cancel_fn* cancel = nullptr) const {
        return run(s, ids, false, true, nullptr, cancel);
    }
    // The output layer, or one without a matrix (w.data null) where the logits are not x·Wᵀ + b (Gemma 2's soft cap).
    virtual linear output_layer() const = 0;
    // The output layer's screen for a greedy step, or null (screen_slot).
    const head_screen* screen() const { return screen_.get(output_layer()); }

protected:
    // What a family implements for forward and forward_hidden: with `hidden`, each sequence's last row as the output
    // layer takes it instead of the logits.
    virtual std::span<const float> run(decoder_state& s, std::span<const int32_t> ids, bool all_logits, bool hidden, forward_trace* trace,
                                       const cancel_fn* cancel) const = 0;

private:
    screen_slot screen_;
};

// An encoder–decoder's state: each decoder layer's cross-attention keys and values over the encoder's output for
// one or several sources (computed once each), and the decoder's own KV cache for n_seq target sequences. One source:
// every sequence reads it (the beams of a beam search). Several (join_sources: a batch of texts decoded side by
// side): sequence b reads source seq_sources[b].
struct seq2seq_state {
    kv_cache self;   // (n_dec_layer, n_seq, capacity, E)
    kv_cache cross;  // (n_dec_layer, n_sources, S_max, E), n_past = S_max
    std::vector<int64_t> source_lengths;  // per source, when there are several (empty: one source of n_past)
    std::vector<int32_t> seq_sources;     // per sequence, its source, when there are several
    arena scratch;
    std::vector<float> logits;  // (rows, V) of the last decode
    int64_t n_source() const { return cross.n_past; }  // the (longest) source's length
    // The source sequence b reads, and its length.
    int64_t source_of(int64_t b) const { return seq_sources.empty() ? 0 : seq_sources[size_t(b)]; }
    int64_t source_length(int64_t b) const { return source_lengths.empty() ? cross.n_past : source_lengths[size_t(source_of(b))]; }
};
// One state for several sources, each from encode_source(…, n_seq = 1): their cross-attention keys and values side by
// side (the shorter ones' rows past their length unused), and a fresh decoder cache of `capacity` positions for
// per_source sequences per source (a source's beams), source by source. Throws unless every part has the same layers,
// row width and capacity, and none has decoded.
seq2seq_state join_sources(std::vector<seq2seq_state>&& parts, int64_t per_source = 1);

class seq2seq_lm {
public:
    virtual ~seq2seq_lm() = default;
    // Runs the encoder over one source sequence (the trace gets its self-attention and hidden states) and returns a
    // state for n_seq target sequences of up to `capacity` positions (≤ n_ctx). Errors name the bad id or length.
    virtual seq2seq_state encode_source(std::span<const int32_t> source, int64_t capacity, int64_t n_seq = 1, forward_trace* trace = nullptr,
                                        const cancel_fn* cancel = nullptr) const = 0;
    // As causal_lm::forward, for the decoder: T new target tokens of every sequence (ids: (n_seq, T)) → the logits
    // (n_seq, V) of each sequence's last token, or (n_seq·T, V) when all_logits. The trace records the decoder's
    // self-attention and hidden states (the first sequence) and, with want_cross, the cross-attention (all of them).
    // On cancel or error the cache is left as before the call.
    std::span<const float> decode(seq2seq_state& s, std::span<const int32_t> ids, bool all_logits = false, forward_trace* trace = nullptr,
                                  const cancel_fn* cancel = nullptr) const {
        return run_decoder(s, ids, all_logits, false, trace, cancel);
    }
    // decode up to the output layer: (n_seq, E), each sequence's last token as the output layer takes it
    // (logits = x·Wᵀ + b, output_layer()), for a caller that computes only some of the logits.
    std::span<const float> decode_hidden(seq2seq_state& s, std::span<const int32_t> ids, const cancel_fn* cancel = nullptr) const {
        return run_decoder(s, ids, false, true, nullptr, cancel);
    }
    virtual linear output_layer() const = 0;
    // The output layer's screen for a greedy step, or null (screen_slot).
    const head_screen* screen() const { return screen_.get(output_layer()); }

protected:
    // What a family implements for decode and decode_hidden: with `hidden`, each sequence's last row as the output
    // layer takes it instead of the logits.
    virtual std::span<const float> run_decoder(seq2seq_state& s, std::span<const int32_t> ids, bool all_logits, bool hidden,
                                               forward_trace* trace, const cancel_fn* cancel) const = 0;

private:
    screen_slot screen_;
};

class model {
public:
    virtual ~model() = default;
    const hparams& hp() const { return hp_; }
    virtual const encoder* as_encoder() const { return nullptr; }
    virtual const masked_lm* as_masked_lm() const { return nullptr; }
    virtual const causal_lm* as_causal_lm() const { return nullptr; }
    virtual const seq2seq_lm* as_seq2seq_lm() const { return nullptr; }
    // The checkpoint's fine-tuned head of this kind, if it has one (hp().head says which it was trained for).
    virtual const classifier_head* head(head_kind) const { return nullptr; }
    // Bytes of weights the model owns (converted or copied); the rest are views into the file bytes.
    int64_t weight_bytes() const { return weight_bytes_; }
    bool borrows_file_bytes() const { return borrows_; }

protected:
    explicit model(hparams hp) : hp_(std::move(hp)) {}
    // Takes over what the weight store owns; call once, at the end of construction.
    void keep(weight_store& s) {
        weight_bytes_ = s.owned_bytes();
        borrows_ = s.borrows();
        owned_ = s.release();
    }
    hparams hp_;

private:
    std::vector<std::unique_ptr<uint8_t[]>> owned_;
    int64_t weight_bytes_ = 0;
    bool borrows_ = false;
};

}  // namespace wf
