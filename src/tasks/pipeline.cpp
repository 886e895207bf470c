#include "tasks/pipeline.h"

#include <algorithm>
#include <cctype>

#include "tokenizers/load.h"

namespace wf {

pipeline_model load_pipeline_model(std::shared_ptr<const file_set> files, const load_options& opt) {
    pipeline_model pm;
    if (const auto joined = read_gguf(*files)) {
        const gguf_file& g = *joined;
        pm.loaded = load_gguf_model(g, files, opt);  // keeps the files only if the weights are views into them
        pm.tok = load_tokenizer(g, pm.hp().n_vocab);
        pm.chat = read_chat_config(g, *pm.tok);
        pm.end_ids = read_end_ids(g, *pm.tok);
        // an embedding model's pooling, as llama.cpp writes it ({arch}.pooling_type: 1 mean, 2 cls); its
        // embeddings are then normalized, as llama.cpp's are by default. 4 (rank) is a classifier's: its head
        // (cls.output) is the model's sequence head, text-classification's
        if (const std::string key = pm.hp().arch + ".pooling_type"; g.has(key)) {
            const uint64_t t = g.get_uint(key);
            if (t == 1 || t == 2) pm.sentence = {t == 1 ? pooling::mean : pooling::cls, true};
            else if (t == 4 && !pm.m().head(head_kind::sequence))
                throw error(g.file_name + ": " + key + " = 4 (rank) but the file has no classifier (cls.output.weight)");
            else if (t != 0 && t != 4)
                throw error(g.file_name + ": " + key + " = " + std::to_string(t) + " is not supported (0 none, 1 mean, 2 cls, 4 rank)");
        }
    } else {
        pm.loaded = load_model(files, opt);
        pm.tok = load_tokenizer(*files);
        pm.chat = read_chat_config(*files, *pm.tok);
        pm.end_ids = read_end_ids(*files, *pm.tok);
        if (pm.m().as_seq2seq_lm()) {  // generate()'s settings: config.json's, then generation_config.json's over them
            seq2seq_params& d = pm.seq2seq;
            d.decoder_start_token_id = int32_t(pm.hp().decoder_start_token_id);
            d.eos_token_id = int32_t(pm.hp().eos_token_id);
            d.pad_token_id = int32_t(pm.hp().pad_token_id);
            read_seq2seq_defaults(parse_json_strict(files->text("config.json"), "config.json", 1 << 20), "config.json", d);
            if (files->has("generation_config.json"))
                read_seq2seq_defaults(parse_json_strict(files->text("generation_config.json"), "generation_config.json", 1 << 20), "generation_config.json", d);
            for (int32_t id : {d.decoder_start_token_id, d.eos_token_id, d.pad_token_id, d.forced_eos_token_id})
                if (id >= pm.hp().n_vocab) throw error("config.json: token id " + std::to_string(id) + " (a generation setting) is not in the vocabulary");
        }
    }
    if (!pm.sentence.pooling) pm.sentence = read_sentence_embedding_config(*files);
    if (pm.tok->vocab_size() > pm.hp().n_vocab)
        throw error("the tokenizer has " + std::to_string(pm.tok->vocab_size()) + " tokens but the model only " + std::to_string(pm.hp().n_vocab));
    return pm;
}

namespace {
constexpr const char* kModules = "modules.json";
constexpr const char* kPooling = "1_Pooling/config.json";
constexpr const char* kChatTemplate = "chat_template.jinja";
constexpr const char* kGenerationConfig = "generation_config.json";

// Hugging Face's special token attributes, in its order, and the tokenizer's role for each.
const std::pair<const char*, int32_t special_tokens::*> kRoleTokens[] = {
    {"bos_token", &special_tokens::bos}, {"eos_token", &special_tokens::eos}, {"unk_token", &special_tokens::unk},
    {"sep_token", &special_tokens::sep}, {"pad_token", &special_tokens::pad}, {"cls_token", &special_tokens::cls},
    {"mask_token", &special_tokens::mask}};

// A token as tokenizer_config.json writes it: a string, or an AddedToken object {"content": …}; nullopt otherwise.
std::optional<std::string> token_text(const json& v) {
    const json& t = v.is_object() && v.contains("content") ? v["content"] : v;
    if (t.is_string()) return t.get<std::string>();
    return std::nullopt;
}

// The templates of a tokenizer_config.json's chat_template: a string is "default"; a list holds {name, template}.
void add_templates(chat_config& c, const json& v, const std::string& where) {
    auto bad = [&](const std::string& what) { throw error(where + " " + what + ", got " + v.dump().substr(0, 60)); };
    if (v.is_string()) {
        c.templates.emplace_back("default", v.get<std::string>());
    } else if (v.is_array()) {
        for (size_t i = 0; i < v.size(); ++i) {
            const json& e = v[i];
            if (!e.is_object() || !e.contains("name") || !e["name"].is_string() || !e.contains("template") || !e["template"].is_string())
                throw error(where + "[" + std::to_string(i) + "] must be an object {\"name\": string, \"template\": string}, got " + e.dump().substr(0, 60));
            const std::string name = e["name"].get<std::string>();
            for (auto& [n, t] : c.templates)
                if (n == name) throw error(where + ": two templates are named \"" + name + "\"");
            c.templates.emplace_back(name, e["template"].get<std::string>());
        }
    } else if (!v.is_null()) {
        bad("must be a string or a list of {name, template}");
    }
}
}  // namespace

json role_token_texts(const tokenizer& tok) {
    json out = json::object();
    for (auto [key, member] : kRoleTokens)
        if (const int32_t id = tok.special().*member; id >= 0) out[key] = tok.token(id);
    return out;
}

chat_config read_chat_config(const file_set& files, const tokenizer& tok) {
    chat_config c;
    c.special_tokens = role_token_texts(tok);
    for (const char* name : {"special_tokens_map.json", "tokenizer_config.json"}) {  // the second wins, as for the roles
        if (!files.has(name)) continue;
        const json j = parse_json_strict(files.text(name), name, 16 << 20);
        if (!j.is_object()) throw error(std::string(name) + ": must be a JSON object");
        for (auto it = j.begin(); it != j.end(); ++it) {
            const std::string& k = it.key();
            if (k.size() > 6 && k.compare(k.size() - 6, 6, "_token") == 0) {
                // the roles come from the tokenizer (which read these same names); other tokens a template may use
                // (Gemma 3's boi_token, image_token, …) as the file writes them
                bool role = false;
                for (auto [key, member] : kRoleTokens) role = role || k == key;
                if (const auto t = token_text(it.value()); t && !role) c.special_tokens[k] = *t;
            } else if (k == "additional_special_tokens" && it.value().is_array()) {
                json list = json::array();
                for (const json& e : it.value())
                    if (const auto t = token_text(e)) list.push_back(*t);
                c.special_tokens[k] = list;
            }
        }
        if (std::string(name) == "tokenizer_config.json" && j.contains("chat_template")) {
            c.templates.clear();
            add_templates(c, j["chat_template"], std::string(name) + ": chat_template");
        }
    }
    if (files.has(kChatTemplate)) {  // transformers saves the template there since 4.43, and reads it first
        const std::string_view t = files.text(kChatTemplate);
        if (t.size() > (16u << 20)) throw error(std::string(kChatTemplate) + ": over 16 MiB");
        std::erase_if(c.templates, [](auto& e) { return e.first == "default"; });
        c.templates.insert(c.templates.begin(), {"default", std::string(t)});
    }
    return c;
}

chat_config read_chat_config(const gguf_file& g, const tokenizer& tok) {
    chat_config c;
    c.special_tokens = role_token_texts(tok);
    const std::string prefix = "tokenizer.chat_template";
    if (g.has(prefix)) c.templates.emplace_back("default", g.get_string(prefix));
    for (auto& [key, value] : g.kv)  // named ones, as llama.cpp's gguf writer stores a list of templates
        if (key.size() > prefix.size() + 1 && key.compare(0, prefix.size() + 1, prefix + ".") == 0)
            c.templates.emplace_back(key.substr(prefix.size() + 1), g.get_string(key));
    return c;
}

namespace {
std::vector<int32_t> sorted_ids(std::vector<int32_t> ids) {
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    return ids;
}
}  // namespace

std::vector<int32_t> read_end_ids(const file_set& files, const tokenizer& tok) {
    std::vector<int32_t> ids;
    if (tok.special().eos >= 0) ids.push_back(tok.special().eos);
    if (files.has(kGenerationConfig)) {
        const json j = parse_json_strict(files.text(kGenerationConfig), kGenerationConfig, 1 << 20);
        if (!j.is_object()) throw error(std::string(kGenerationConfig) + ": must be a JSON object");
        if (j.contains("eos_token_id") && !j["eos_token_id"].is_null()) {
            const json& v = j["eos_token_id"];
            const json list = v.is_array() ? v : json::array({v});
            for (const json& e : list) {
                if (!e.is_number_integer() || e.get<int64_t>() < 0 || e.get<int64_t>() >= tok.vocab_size())
                    throw error(std::string(kGenerationConfig) + ": eos_token_id must be a token id or a list of token ids (0 … " +
                                std::to_string(tok.vocab_size() - 1) + "), got " + v.dump().substr(0, 60));
                ids.push_back(int32_t(e.get<int64_t>()));
            }
        }
    }
    return sorted_ids(ids);
}

std::vector<int32_t> read_end_ids(const gguf_file& g, const tokenizer& tok) {
    std::vector<int32_t> ids;
    if (tok.special().eos >= 0) ids.push_back(tok.special().eos);
    for (const char* k : {"tokenizer.ggml.eot_token_id", "tokenizer.ggml.eom_token_id"}) {
        if (!g.has(k)) continue;
        const uint64_t id = g.get_uint(k);
        if (id >= uint64_t(tok.vocab_size()))
            throw error(g.file_name + ": " + k + " = " + std::to_string(id) + " is not a token id (vocabulary of " + std::to_string(tok.vocab_size()) + ")");
        ids.push_back(int32_t(id));
    }
    // llama.cpp ends a generation at these texts too, whatever the file's ids say (llama-vocab.cpp's EOG list)
    for (const char* t : {"<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<|eom_id|>", "<EOT>", "_<EOT>"})
        if (const auto id = tok.token_id(t)) ids.push_back(*id);
    return sorted_ids(ids);
}

sentence_embedding_config read_sentence_embedding_config(const file_set& files) {
    sentence_embedding_config c;
    if (!files.has(kModules)) return c;
    const json m = parse_json_strict(files.text(kModules), kModules, 1 << 20);
    if (!m.is_array()) throw error(std::string(kModules) + ": must be a list of modules");
    for (const json& e : m) {
        if (!e.is_object() || !e.contains("type") || !e["type"].is_string()) throw error(std::string(kModules) + ": every module needs a type");
        const std::string type = e["type"].get<std::string>(), path = e.contains("path") && e["path"].is_string() ? e["path"].get<std::string>() : "";
        if (type == "sentence_transformers.models.Normalize") {
            c.normalize = true;
        } else if (type == "sentence_transformers.models.Pooling") {
            const std::string file = path + "/config.json";
            if (file != kPooling) throw error(std::string(kModules) + ": the Pooling module is at \"" + path + "\"; only 1_Pooling is read");
            if (!files.has(file)) throw error(std::string(kModules) + " names a Pooling module, but " + file + " is missing");
            const json p = parse_json_strict(files.text(file), file, 1 << 20);
            if (!p.is_object()) throw error(file + ": must be a JSON object");
            auto on = [&](const char* k) { return p.contains(k) && p[k] == true; };
            int modes = 0;
            for (auto [key, mode] : {std::pair{"pooling_mode_mean_tokens", pooling::mean}, {"pooling_mode_cls_token", pooling::cls},
                                     {"pooling_mode_max_tokens", pooling::max}})
                if (on(key)) c.pooling = mode, ++modes;
            for (const char* k : {"pooling_mode_mean_sqrt_len_tokens", "pooling_mode_weightedmean_tokens", "pooling_mode_lasttoken"})
                if (on(k)) throw error(file + ": " + k + " is not supported (mean, cls and max pooling are)");
            if (modes != 1) throw error(file + ": exactly one pooling mode must be on (mean, cls or max), found " + std::to_string(modes));
        } else if (type != "sentence_transformers.models.Transformer") {
            throw error(std::string(kModules) + ": module type \"" + type + "\" is not supported (Transformer, Pooling, Normalize are)");
        }
    }
    return c;
}

std::vector<std::string> select_files(const std::vector<std::string>& available, bool weights) {
    if (auto gguf = gguf_model_files(available); !gguf.empty()) return gguf;  // one file, or every part of a split one
    auto has = [&](const char* n) { return std::find(available.begin(), available.end(), n) != available.end(); };
    std::vector<std::string> out;
    if (has("config.json")) out.push_back("config.json");
    else if (weights) throw error("the model has no config.json (and no .gguf file)");
    if (weights) {
        if (has("model.safetensors.index.json")) out.push_back("model.safetensors.index.json");
        else if (has("model.safetensors")) out.push_back("model.safetensors");
        else throw error("the model has no model.safetensors or model.safetensors.index.json");
    }
    const auto tok = tokenizer_files(available);
    if (tok.empty()) throw error("the model has no tokenizer (tokenizer.json, vocab.txt, or vocab.json + merges.txt)");
    out.insert(out.end(), tok.begin(), tok.end());
    if (weights && has(kModules)) {
        out.push_back(kModules);
        if (has(kPooling)) out.push_back(kPooling);
    }
    if (has(kChatTemplate)) out.push_back(kChatTemplate);
    if (weights && has(kGenerationConfig)) out.push_back(kGenerationConfig);
    return out;
}

std::vector<std::string> candidate_files(bool weights) {
    std::vector<std::string> out = {"config.json"};
    if (weights) out.insert(out.end(), {"model.safetensors.index.json", "model.safetensors"});
    for (auto& n : tokenizer_candidates()) out.push_back(n);
    if (weights) out.insert(out.end(), {kModules, kPooling});
    out.push_back(kChatTemplate);
    if (weights) out.push_back(kGenerationConfig);
    return out;
}

std::vector<std::string> supported_tasks(const model& m) {
    std::vector<std::string> t;
    if (m.as_encoder()) t.push_back("feature-extraction");
    if (m.as_masked_lm()) t.push_back("fill-mask");
    if (m.head(head_kind::sequence)) {
        t.push_back("text-classification");
        if (entailment_label(m.hp()) >= 0) t.push_back("zero-shot-classification");
    }
    if (m.head(head_kind::token) && m.hp().head == "token_classification") t.push_back("token-classification");
    if (m.head(head_kind::span)) t.push_back("question-answering");
    if (m.as_causal_lm()) t.push_back("text-generation");
    if (m.as_seq2seq_lm()) {
        t.push_back("translation");
        t.push_back("text2text-generation");
        t.push_back("summarization");
    }
    return t;
}

namespace {
[[noreturn]] void unsupported(const pipeline_model& pm, const char* task, const char* needs) {
    std::string can;
    for (auto& t : supported_tasks(pm.m())) can += (can.empty() ? "" : ", ") + t;
    throw error(std::string(task) + " needs " + needs + "; this model (" + pm.hp().arch + ") supports: " + (can.empty() ? "no task" : can));
}
}  // namespace

std::string input_label(const char* what, size_t i, size_t n) {
    return n > 1 ? std::string(what) + " " + std::to_string(i + 1) + ": " : "";
}

int64_t entailment_label(const hparams& hp) {
    for (size_t i = 0; i < hp.labels.size(); ++i) {
        const std::string& l = hp.labels[i];
        if (l.size() >= 6 && std::equal(l.begin(), l.begin() + 6, "entail", [](char a, char b) { return std::tolower((unsigned char)a) == b; }))
            return int64_t(i);
    }
    return -1;
}

void check_text_size(std::string_view text, const std::string& which) {
    if (text.size() > task_max_text_bytes)
        throw error(which + "text is " + std::to_string(text.size()) + " bytes, over the limit of " + std::to_string(task_max_text_bytes) +
                    " bytes (1 MiB) for one input");
}

const masked_lm& need_masked_lm(const pipeline_model& pm, const char* task) {
    if (const masked_lm* m = pm.m().as_masked_lm()) return *m;
    unsupported(pm, task, "a masked language model");
}

const encoder& need_encoder(const pipeline_model& pm, const char* task) {
    if (const encoder* m = pm.m().as_encoder()) return *m;
    unsupported(pm, task, "an encoder");
}

const classifier_head& need_head(const pipeline_model& pm, head_kind k, const char* task) {
    if (const classifier_head* h = pm.m().head(k)) return *h;
    unsupported(pm, task, k == head_kind::sequence ? "a sequence classification head (…ForSequenceClassification)"
                          : k == head_kind::token  ? "a token classification head (…ForTokenClassification)"
                                                   : "a question answering head (…ForQuestionAnswering)");
}

const causal_lm& need_causal_lm(const pipeline_model& pm, const char* task) {
    if (const causal_lm* m = pm.m().as_causal_lm()) return *m;
    unsupported(pm, task, "a causal language model");
}

const seq2seq_lm& need_seq2seq_lm(const pipeline_model& pm, const char* task) {
    if (const seq2seq_lm* m = pm.m().as_seq2seq_lm()) return *m;
    unsupported(pm, task, "an encoder–decoder model (Marian, T5)");
}

}  // namespace wf
