#include "tasks/pipeline.h"

#include <algorithm>

#include "tokenizers/load.h"

namespace wf {

pipeline_model load_pipeline_model(std::shared_ptr<const file_set> files, const load_options& opt) {
    pipeline_model pm;
    if (const std::string gguf = gguf_file_name(*files); !gguf.empty()) {
        const auto* bytes = files->get(gguf);
        const gguf_file g = parse_gguf(bytes->data(), int64_t(bytes->size()), gguf);
        pm.loaded = load_gguf_model(g, files, opt);  // keeps the files only if the weights are views into them
        pm.tok = load_tokenizer(g, pm.hp().n_vocab);
    } else {
        pm.loaded = load_model(files, opt);
        pm.tok = load_tokenizer(*files);
    }
    if (pm.tok->vocab_size() > pm.hp().n_vocab)
        throw error("the tokenizer has " + std::to_string(pm.tok->vocab_size()) + " tokens but the model only " + std::to_string(pm.hp().n_vocab));
    return pm;
}

std::vector<std::string> select_files(const std::vector<std::string>& available, bool weights) {
    std::vector<std::string> gguf;
    for (const std::string& n : available)
        if (n.size() > 5 && n.compare(n.size() - 5, 5, ".gguf") == 0) gguf.push_back(n);
    if (gguf.size() > 1) throw error("several .gguf files (" + gguf[0] + ", " + gguf[1] + "): give one model file");
    if (gguf.size() == 1) return gguf;
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
    return out;
}

std::vector<std::string> candidate_files(bool weights) {
    std::vector<std::string> out = {"config.json"};
    if (weights) out.insert(out.end(), {"model.safetensors.index.json", "model.safetensors"});
    for (auto& n : tokenizer_candidates()) out.push_back(n);
    return out;
}

std::vector<std::string> supported_tasks(const model& m) {
    std::vector<std::string> t;
    if (m.as_masked_lm()) t.push_back("fill-mask");
    if (m.as_causal_lm()) t.push_back("text-generation");
    return t;
}

namespace {
[[noreturn]] void unsupported(const pipeline_model& pm, const char* task, const char* needs) {
    std::string can;
    for (auto& t : supported_tasks(pm.m())) can += (can.empty() ? "" : ", ") + t;
    throw error(std::string(task) + " needs " + needs + "; this model (" + pm.hp().arch + ") supports: " + (can.empty() ? "no task" : can));
}
}  // namespace

void check_text_size(std::string_view text, const std::string& which) {
    if (text.size() > task_max_text_bytes)
        throw error(which + "text is " + std::to_string(text.size()) + " bytes, over the limit of " + std::to_string(task_max_text_bytes) +
                    " bytes (1 MiB) for one input");
}

const masked_lm& need_masked_lm(const pipeline_model& pm, const char* task) {
    if (const masked_lm* m = pm.m().as_masked_lm()) return *m;
    unsupported(pm, task, "a masked language model");
}

const causal_lm& need_causal_lm(const pipeline_model& pm, const char* task) {
    if (const causal_lm* m = pm.m().as_causal_lm()) return *m;
    unsupported(pm, task, "a causal language model");
}

}  // namespace wf
