// A model with its tokenizer, loaded from a model's files, and what tasks it can run. Tasks ask for the
// interface they need (need_masked_lm, need_causal_lm); the error lists the tasks the model does support.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/json.h"
#include "models/registry.h"
#include "tasks/options.h"
#include "tokenizers/tokenizer.h"

namespace wf {

// How token states become one vector per text: none (every token's), mean over the real tokens, the first ([CLS]),
// or the largest value of each dimension (sentence-transformers' max pooling).
enum class pooling { none, mean, cls, max };

// What an embedding model's files say about its embeddings: a sentence-transformers folder (modules.json,
// 1_Pooling/config.json) or a GGUF's {arch}.pooling_type — how to pool (unset: they say nothing) and whether to
// L2-normalize.
struct sentence_embedding_config {
    std::optional<wf::pooling> pooling;
    bool normalize = false;
};

// What a model's files say about chat (tasks/generation.h: chat_template_for): its chat templates by name (a single
// template is "default") — tokenizer_config.json's chat_template (a string, or a list of {name, template}),
// chat_template.jinja beside it (it wins, as in Hugging Face's loader), or a GGUF's tokenizer.chat_template and
// tokenizer.chat_template.<name> — and the special tokens' texts a template may use, as Hugging Face's
// apply_chat_template passes them: bos_token, eos_token, unk_token, sep_token, pad_token, cls_token, mask_token for
// the tokenizer's roles, any other "…_token" text and additional_special_tokens that tokenizer_config.json names.
struct chat_config {
    std::vector<std::pair<std::string, std::string>> templates;  // name → Jinja source, in the files' order
    json special_tokens = json::object();                         // "bos_token" → "<s>", …
};
// A folder's chat config (tokenizer_config.json, special_tokens_map.json, chat_template.jinja) for tokenizer `tok`.
chat_config read_chat_config(const file_set& files, const tokenizer& tok);
// A GGUF file's (tokenizer.chat_template, tokenizer.chat_template.<name>), the texts from tok's roles.
chat_config read_chat_config(const gguf_file& g, const tokenizer& tok);
// The special tokens' texts for tok's roles (bos_token, eos_token, …), the part every chat config has.
json role_token_texts(const tokenizer& tok);

// The ids that end a generation (stop_at_eos), as the files say: the tokenizer's EOS; a GGUF's
// tokenizer.ggml.eot_token_id and eom_token_id and, as llama.cpp does, the tokens whose text is a known end of turn
// (<|im_end|>, <|eot_id|>, <|eom_id|>, <|end|>, <end_of_turn>, <|endoftext|>, <EOT>); a folder's
// generation_config.json eos_token_id (an id or a list). Sorted, no duplicates; ids outside the vocabulary are errors.
std::vector<int32_t> read_end_ids(const file_set& files, const tokenizer& tok);
std::vector<int32_t> read_end_ids(const gguf_file& g, const tokenizer& tok);

struct pipeline_model {
    loaded_model loaded;
    std::unique_ptr<tokenizer> tok;
    sentence_embedding_config sentence;
    chat_config chat;
    std::vector<int32_t> end_ids;  // read_end_ids
    seq2seq_params seq2seq;        // an encoder–decoder's generate() defaults (config.json, generation_config.json)
    const model& m() const { return *loaded.m; }
    const hparams& hp() const { return loaded.m->hp(); }
};

// A Hugging Face folder's files (config.json, weights, tokenizer files) or one .gguf file → model and tokenizer.
pipeline_model load_pipeline_model(std::shared_ptr<const file_set> files, const load_options& opt = {});

// The files a pipeline (weights = true) or a tokenizer alone loads, of those `available`: one .gguf file, or
// config.json, model.safetensors.index.json or model.safetensors, a tokenizer's files (tokenizers/load.h), a
// sentence-transformers folder's modules.json and 1_Pooling/config.json, chat_template.jinja, and a pipeline's
// generation_config.json.
// The shards an index names are read from the index by the caller. Errors name what is missing.
std::vector<std::string> select_files(const std::vector<std::string>& available, bool weights);
sentence_embedding_config read_sentence_embedding_config(const file_set& files);
// Every file name select_files may pick, for sources that cannot list a folder and must ask for each.
std::vector<std::string> candidate_files(bool weights);

// The tasks (transformers.js names) this model can run.
std::vector<std::string> supported_tasks(const model& m);
const masked_lm& need_masked_lm(const pipeline_model& pm, const char* task);
const causal_lm& need_causal_lm(const pipeline_model& pm, const char* task);
const seq2seq_lm& need_seq2seq_lm(const pipeline_model& pm, const char* task);
const encoder& need_encoder(const pipeline_model& pm, const char* task);
const classifier_head& need_head(const pipeline_model& pm, head_kind k, const char* task);

// A task's input text, checked before tokenization: at most 1 MiB (no model here takes more than a few thousand
// tokens, and tokenizing is proportional to the bytes). `which`: "" or "text 2: " for a batch.
constexpr size_t task_max_text_bytes = size_t(1) << 20;
void check_text_size(std::string_view text, const std::string& which = "");
// The prefix of errors about input i of n: "" for a single input, else "text 2: " (what = "text", "question", …).
std::string input_label(const char* what, size_t i, size_t n);

// The label of an NLI model's "entailment" class (id2label, case-insensitive "entail…"), or −1: zero-shot needs one.
int64_t entailment_label(const hparams& hp);

}  // namespace wf
