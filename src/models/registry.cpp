#include "models/registry.h"

#include <algorithm>

#include "formats/safetensors.h"

namespace wf {

namespace models {
extern const architecture bert_architecture, albert_architecture, distilbert_architecture, roberta_architecture, electra_architecture, gpt2_architecture,
    llama_architecture, qwen2_architecture, mistral_architecture, gemma_architecture,
    gemma2_architecture, phi3_architecture, modernbert_architecture, marian_architecture, openai_gpt_architecture, t5_architecture;
}

namespace {
// The table. One line per family.
constexpr const architecture* kArchitectures[] = {
    &models::bert_architecture,
    &models::distilbert_architecture,
    &models::albert_architecture,
    &models::roberta_architecture,
    &models::electra_architecture,
    &models::modernbert_architecture,
    &models::openai_gpt_architecture,
    &models::gpt2_architecture,
    &models::llama_architecture,
    &models::qwen2_architecture,
    &models::mistral_architecture,
    &models::gemma_architecture,
    &models::gemma2_architecture,
    &models::phi3_architecture,
    &models::marian_architecture,
    &models::t5_architecture,
};

template <class Field>
std::string list_names(Field field) {
    std::string out;
    for (const architecture* a : kArchitectures)
        for (std::string_view n : a->*field) out += (out.empty() ? "" : ", ") + std::string(n);
    return out;
}

bool has(std::span<const std::string_view> names, std::string_view n) { return std::find(names.begin(), names.end(), n) != names.end(); }
}  // namespace

std::span<const architecture* const> architectures() { return kArchitectures; }

const architecture& architecture_for_config(const json& j, const std::string& file) {
    if (!j.is_object()) throw error(file + ": must be a JSON object");
    const std::string type = j.contains("model_type") ? json_string(j, "model_type", file) : "";
    const architecture* by_arch = nullptr;
    if (j.contains("architectures")) {
        const json& a = j["architectures"];
        if (!a.is_array() || a.empty() || !a[0].is_string()) throw error(file + ": architectures must be a list of names");
        const std::string name = a[0].get<std::string>();
        for (const architecture* x : kArchitectures)
            if (has(x->hf_architectures, name)) by_arch = x;
        if (!by_arch)
            throw error(file + ": architecture \"" + name + "\" is not supported (supported: " + list_names(&architecture::hf_architectures) + ")");
    }
    if (type.empty()) {
        if (!by_arch) throw error(file + ": neither model_type nor architectures says which model this is");
        return *by_arch;
    }
    for (const architecture* x : kArchitectures)
        if (has(x->hf_model_types, type)) {
            if (by_arch && by_arch != x)
                throw error(file + ": model_type \"" + type + "\" contradicts architectures[0] (a " + std::string(by_arch->name) + " model)");
            return *x;
        }
    throw error(file + ": model_type \"" + type + "\" is not supported (supported: " + list_names(&architecture::hf_model_types) + ")");
}

const architecture& architecture_for_gguf(const gguf_file& g) {
    const std::string a = g.get_string("general.architecture");
    for (const architecture* x : kArchitectures)
        if (has(x->gguf_architectures, a)) return *x;
    throw error(g.file_name + ": architecture \"" + a + "\" is not supported (supported: " + list_names(&architecture::gguf_architectures) + ")");
}

hparams parse_config(std::string_view text, const std::string& file) {
    const json j = parse_json_strict(text, file, 1 << 20);
    const architecture& a = architecture_for_config(j, file);
    hparams hp = a.from_config(j, file);
    hp.arch = a.name;
    validate_hparams(hp, file);
    return hp;
}

int64_t estimate_memory(const hparams& hp, uint32_t caps, const tensor_source& src, const storage_plan& plan) {
    double owned = 0;
    for (const raw_tensor* t : src.tensors()) {
        if (t->shape.size() == 2) {
            const int64_t rows = t->shape[0], cols = t->shape[1];  // (a Conv1D matrix is transposed at load: the same bytes)
            const dtype to = plan.target(t->type, cols, rows);
            if (plan.as_stored && to == t->type) continue;  // a view into the file
            owned += double(rows) * double(row_bytes(to, cols));
        } else {
            double n = 1;
            for (int64_t d : t->shape) n *= double(d);
            owned += n * 4;  // vectors become f32 copies
        }
    }
    const double E = double(hp.n_embd), F = double(std::max(hp.n_ff, hp.n_dec_ff)), T = double(hp.n_ctx), L = double(hp.n_layer);
    const bool causal = caps & (cap_causal_lm | cap_seq2seq);
    // a seq2seq decoder: its own cache and the cross-attention keys and values of a full-length source
    const double kv = caps & cap_seq2seq ? 4 * double(hp.n_dec_layer) * T * double(hp.n_dec_head * hp.head_dim()) * 4 : causal ? 2 * L * T * double(hp.n_head_kv * hp.head_dim()) * 4 : 0;
    // activations of a full-length pass; an encoder's attention weights (T × T per head) are kept for the trace,
    // a decoder's scores are one row per thread
    const double scratch = T * (6 * E + 2 * F) * 4 + (causal ? 0 : double(hp.n_head) * T * T * 4) + double(hp.n_vocab) * 4;
    return int64_t(owned + kv + scratch);
}

namespace {
// The storage plan the dtype option asks for: auto widens half-precision matrices to f32 when the f32 model fits
// in 1 GiB (and keeps the stored types otherwise).
storage_plan plan_for(const dtype_option& d, const hparams& hp, const architecture& a, const tensor_source& src) {
    switch (d.how) {
    case dtype_option::mode::as_stored: return storage_plan::keep();
    case dtype_option::mode::convert: return storage_plan::convert_all(d.to, hp.n_vocab);
    case dtype_option::mode::automatic: break;
    }
    const auto tensors = src.tensors();
    const bool halves = std::any_of(tensors.begin(), tensors.end(), [](const raw_tensor* t) { return t->type == dtype::f16 || t->type == dtype::bf16; });
    const storage_plan wide = storage_plan::widen_halves();
    return halves && estimate_memory(hp, a.capabilities, src, wide) <= (int64_t(1) << 30) ? wide : storage_plan::keep();
}

loaded_model build(const architecture& a, hparams hp, const tensor_source& src, std::shared_ptr<const file_set> files, const load_options& opt,
                   const std::string& what) {
    hp.arch = a.name;
    validate_hparams(hp, what);
    storage_plan plan = plan_for(opt.dtype, hp, a, src);
    plan.rewrite_file_bytes = opt.files_writable;
    loaded_model out;
    out.arch = &a;
    out.dtype = opt.dtype.how != dtype_option::mode::automatic ? opt.dtype.name() : plan.as_stored ? "auto (as stored)" : "auto (f16/bf16 widened to f32)";
    out.quantized = opt.dtype.how == dtype_option::mode::convert && traits(opt.dtype.to).block > 1;
    if (plan.vocab_rows > 0)  // q8_0 (f32 when n_embd is not whole 32-value blocks)
        out.dtype += " (vocabulary matrices " + dtype_option{dtype_option::mode::convert, plan.target(dtype::f32, hp.n_embd, plan.vocab_rows)}.name() + ")";
    if (opt.memory_budget > 0) {
        const int64_t need = estimate_memory(hp, a.capabilities, src, plan);
        if (need > opt.memory_budget)
            throw error("out of memory: this model needs about " + std::to_string(need >> 20) + " MiB beyond its file (weights as " + out.dtype +
                        ", a full KV cache and scratch), over the budget of " + std::to_string(opt.memory_budget >> 20) + " MiB");
    }
    out.m = a.build(hp, src, plan);
    if (out.m->borrows_file_bytes()) out.files = std::move(files);
    return out;
}
}  // namespace

loaded_model load_gguf_model(const gguf_file& g, std::shared_ptr<const file_set> files, const load_options& opt) {
    const architecture& a = architecture_for_gguf(g);
    return build(a, a.from_gguf(g), gguf_source(g, a.gguf_names), std::move(files), opt, g.file_name);
}

loaded_model load_model(std::shared_ptr<const file_set> files, const load_options& opt) {
    if (auto g = read_gguf(*files)) return load_gguf_model(*g, std::move(files), opt);  // weights, hyper-parameters, tokenizer in one file (or its parts)
    if (!files->has("config.json")) throw error("no config.json (and no .gguf file) among the model's files");
    const json config = parse_json_strict(files->text("config.json"), "config.json", 1 << 20);
    const architecture& a = architecture_for_config(config, "config.json");
    const safetensors_source src(*files);
    return build(a, a.from_config(config, "config.json"), src, std::move(files), opt, "config.json");
}

}  // namespace wf
