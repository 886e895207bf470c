// Generation with an encoder–decoder (translation, text2text-generation), as Hugging Face's generate(): the encoder
// runs once; the decoder starts from decoder_start_token_id and continues with its KV cache, the cross-attention's
// keys and values computed once per source. Greedy (arg-max), sampling, or beam search (num_beams, length_penalty,
// early_stopping, num_return_sequences), after the logits processors in Hugging Face's order: no_repeat_ngram_size,
// bad_words_ids, forced_eos_token_id, then renormalize_logits. A greedy step that returns no score (output_scores
// false, no cross-attention asked for) computes in full only the logits that can be the largest: nn/head-screen.h.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "nn/model.h"
#include "tasks/options.h"
#include "tasks/pipeline.h"

namespace wf {

struct seq2seq_hypothesis {
    std::vector<int32_t> ids;  // the decoder start token first, then the generated tokens (EOS last when it ended there)
    // beam search: Hugging Face's sequences_scores, sum(log p) / generated_length^length_penalty (the length counts
    // EOS, not the start token); greedy and sampling with output_scores: sum(log p) of the chosen tokens under the
    // unprocessed logits (without it, a greedy step that screens the output layer computes none: 0)
    double score = 0;
    std::string finish_reason;  // "eos" or "length"
    // with output_attentions: per generated token (ids[1…]) the cross-attention of the decoder position that chose
    // it, (n_dec_layer, n_dec_head, S) each, row-major
    std::vector<std::vector<float>> cross_attention;
};

// Called with each token greedy or sampling chooses, as it is chosen (never during beam search, whose tokens are
// known only at the end). Returns nothing; cancel is checked between layers and steps.
using seq2seq_stream = std::function<void(int32_t id)>;

// The num_return_sequences best hypotheses for one source sequence (the tokenizer's ids, </s> included).
std::vector<seq2seq_hypothesis> seq2seq_generate(const seq2seq_lm& lm, const hparams& hp, std::span<const int32_t> source, const seq2seq_params& p,
                                                 const seq2seq_stream& on_token = {}, const cancel_fn* cancel = nullptr);

// Several sources decoded side by side, greedy or by beam search (no sampling, no output_attentions): the encoder
// once per source, then one decoder pass per step for all of them (num_beams rows a source), so each weight matrix is
// read once per step for the whole batch. Each source's hypotheses are those seq2seq_generate gives it alone, up to
// the float rounding of products over more rows.
std::vector<std::vector<seq2seq_hypothesis>> seq2seq_batch(const seq2seq_lm& lm, const hparams& hp, const std::vector<std::span<const int32_t>>& sources,
                                                           const seq2seq_params& p, const cancel_fn* cancel = nullptr);
// One text's generation a token at a time, for streaming: greedy and sampling give a token per step; beam search
// (whose tokens are known only at the end) runs whole in the first step. A cancelled step leaves the session where it
// was: the next step goes on.
class seq2seq_session {
public:
    // options: parse_seq2seq_options over the model's defaults; errors name the task
    seq2seq_session(const pipeline_model& pm, const std::string& task, std::string_view text, const json& options);
    ~seq2seq_session();
    // The token chosen (greedy, sampling), or nothing (beam search, or already finished).
    std::optional<int32_t> step(const cancel_fn* cancel = nullptr);
    // The bindings' step: {done, id?, text? (what the token adds to the decoded translation; held back while the
    // decoded text does not grow at its end), results? (once done: every hypothesis, as run_seq2seq_task writes it)}
    json step_json(const cancel_fn* cancel = nullptr);
    bool finished() const { return !results_.empty(); }
    const std::vector<seq2seq_hypothesis>& results() const { return results_; }  // once finished
    const std::vector<int32_t>& source_ids() const { return source_; }
    const seq2seq_params& params() const { return p_; }
    struct greedy_state;

private:
    const pipeline_model& pm_;
    std::string task_;
    std::string sent_;  // the text step_json has sent
    const seq2seq_lm* lm_ = nullptr;
    seq2seq_params p_;
    std::vector<int32_t> source_;
    int64_t max_length_ = 0;
    std::unique_ptr<seq2seq_state> state_;
    std::unique_ptr<greedy_state> greedy_;
    std::vector<seq2seq_hypothesis> results_;
};

// translation / text2text-generation / summarization on {"texts": [...]}: {"results": [per text: [per returned
// sequence: { translation_text | generated_text | summary_text, score (beam search, output_scores), finish_reason, token_ids (after the start token), and with
// output_attentions: cross_attentions: {source_tokens, target_tokens, layers, heads, weights[token][layer][head][source]}
// }]]}. Options: parse_seq2seq_options over the model's defaults.
// One hypothesis as run_seq2seq_task writes it.
json seq2seq_hypothesis_json(const pipeline_model& pm, const std::string& task, std::span<const int32_t> source, const seq2seq_hypothesis& h,
                             const seq2seq_params& p);
// A list decoded greedily (no sampling, no output_attentions) runs its texts side by side, kSeq2seqRows decoder rows
// at a time; by beam search likewise (num_beams rows a text) where the model's matrices are quantized
// (loaded_model::quantized: dtype q8_0, q4_0, …): there 4 texts' 4 beams a step (16 rows, the integer GEMM) were
// 1.17–1.34× as fast as one text at a time in Node and 1.25× in Chromium, while in f32 the 16-row GEMM was slower than
// four 4-row GEMVs (0.80–0.91×; bench/translate-lists.mjs --beams 4). batch_sources = false: one after another, as
// sampling and output_attentions run.
constexpr size_t kSeq2seqRows = 16;
json run_seq2seq_task(const pipeline_model& pm, const std::string& task, const std::vector<std::string>& texts, const json& options,
                      const cancel_fn* cancel = nullptr, bool batch_sources = true);

}  // namespace wf
