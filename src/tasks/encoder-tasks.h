// The tasks an encoder does besides filling masks, with transformers.js's names, options and outputs:
//   feature-extraction        hidden states, pooled (none / mean / cls) and normalized as asked, or as a
//                             sentence-transformers folder says (modules.json, 1_Pooling/config.json, Normalize)
//   text-classification       a sequence head's labels, softmax or sigmoid (problem_type), top_k; text pairs
//   token-classification      a token head's labels per token or per entity (aggregation_strategy), with offsets
//   question-answering        a span head's best answers in a context of any length (windows with doc_stride)
//   zero-shot-classification  an NLI head over "premise / hypothesis" pairs
// Every task takes several inputs at once: they are tokenized, sorted by length, and run in padded batches.
// Offsets are UTF-8 byte positions in the input text (the JS API turns them into string indices).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/json.h"
#include "tasks/pipeline.h"

namespace wf {

// ------------------------------------------------------------------------------------------- feature-extraction
struct feature_extraction_options {
    std::optional<pooling> pool;     // unset: the sentence-transformers folder's, else none
    std::optional<bool> normalize;   // unset: true when the folder has a Normalize module
};
struct tensor_out {
    std::vector<float> data;
    std::vector<int64_t> dims;
};
// pooling none: (B, T, E), T the longest input, padding rows zero; mean / cls: (B, E).
tensor_out feature_extraction(const pipeline_model& pm, const std::vector<std::string>& texts, const feature_extraction_options& opt = {},
                              const cancel_fn* cancel = nullptr);

// ------------------------------------------------------------------------------------------ text-classification
enum class score_function { automatic, softmax, sigmoid, none };
struct text_classification_options {
    int64_t top_k = 1;  // 0: every label
    score_function function = score_function::automatic;  // automatic: sigmoid for multi-label or one label, else softmax
};
struct label_score {
    std::string label;
    double score;
};
// One list per input, best first. text_pairs: empty, or one second text per input.
std::vector<std::vector<label_score>> text_classification(const pipeline_model& pm, const std::vector<std::string>& texts,
                                                          const std::vector<std::string>& text_pairs = {},
                                                          const text_classification_options& opt = {}, const cancel_fn* cancel = nullptr);

// ----------------------------------------------------------------------------------------- token-classification
enum class aggregation { none, simple, first, average, max };
struct token_classification_options {
    aggregation strategy = aggregation::none;
    std::vector<std::string> ignore_labels = {"O"};
};
struct token_entity {
    std::string entity;      // the label (aggregation none), or the entity group (B-/I- prefix dropped)
    double score;
    int64_t index = -1;      // the token's position in the model input (aggregation none only)
    std::string word;        // the tokens decoded
    int64_t start, end;      // bytes of the input text
};
std::vector<std::vector<token_entity>> token_classification(const pipeline_model& pm, const std::vector<std::string>& texts,
                                                            const token_classification_options& opt = {}, const cancel_fn* cancel = nullptr);

// --------------------------------------------------------------------------------------------- question-answering
struct question_answering_options {
    int64_t top_k = 1;
    int64_t doc_stride = -1;        // tokens shared by consecutive windows of a long context; −1: Hugging Face's
                                    // default, min(window / 2, 128) (less, if a long question leaves less room)
    int64_t max_answer_len = 15;    // tokens
    int64_t max_seq_len = 384;      // tokens per window (capped by the model)
    int64_t max_question_len = 64;  // tokens
    bool handle_impossible_answer = false;
    bool align_to_words = true;     // answers widened to whole words (false: exactly the tokens' text)
};
struct answer {
    double score;
    int64_t start, end;  // bytes of the context
    std::string text;
};
// Each question with its context → its best answers (best first).
std::vector<std::vector<answer>> question_answering(const pipeline_model& pm, const std::vector<std::string>& questions,
                                                   const std::vector<std::string>& contexts, const question_answering_options& opt = {},
                                                   const cancel_fn* cancel = nullptr);

// ---------------------------------------------------------------------------------------- zero-shot-classification
struct zero_shot_options {
    std::string hypothesis_template = "This example is {}.";
    bool multi_label = false;
};
struct zero_shot_result {
    std::vector<std::string> labels;  // best first
    std::vector<double> scores;
};
std::vector<zero_shot_result> zero_shot_classification(const pipeline_model& pm, const std::vector<std::string>& texts,
                                                       const std::vector<std::string>& candidate_labels, const zero_shot_options& opt = {},
                                                       const cancel_fn* cancel = nullptr);

// Two texts in the template, cut to the model's positions as Hugging Face's tokenizers do: longest_first takes a token
// from the longer text until they fit (equal lengths: the second keeps the extra one); only_first cuts the first.
// `which` prefixes errors ("text 2: ").
enum class cut { longest_first, only_first };
model_input pair_input(const pipeline_model& pm, const std::string& a, const std::string& b, const std::string& which, cut how);

// The encoder tasks by name, on JSON inputs — {"texts", "text_pairs"} | {"questions", "contexts"} | {"texts",
// "labels"} — and options, for the bindings: {"results": [one per input]} with transformers.js's field names, or for
// feature-extraction {"dims"} with the numbers in `features`. Offsets are UTF-8 bytes, or JavaScript string
// indices (UTF-16 code units) when utf16_offsets.
json run_encoder_task(const pipeline_model& pm, const std::string& task, const json& inputs, const json& options, bool utf16_offsets,
                      std::vector<float>& features, const cancel_fn* cancel = nullptr);

feature_extraction_options parse_feature_extraction_options(const json& o);
text_classification_options parse_text_classification_options(const json& o);
token_classification_options parse_token_classification_options(const json& o);
question_answering_options parse_question_answering_options(const json& o);
zero_shot_options parse_zero_shot_options(const json& o);

}  // namespace wf
