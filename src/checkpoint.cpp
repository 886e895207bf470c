#include "checkpoint.h"

#include <algorithm>
#include <new>

namespace wf {

uint8_t* file_set::allocate(const std::string& name, int64_t size) {
    if (size < 0 || uint64_t(size) > uint64_t(SIZE_MAX / 2)) throw error(name + ": size " + std::to_string(size) + " is too large for this build");
    auto buf = std::make_unique<std::vector<uint8_t>>();
    try {
        buf->resize(size_t(size));
    } catch (const std::bad_alloc&) {
        throw error("out of memory: could not allocate " + std::to_string(size) + " bytes for " + name);
    }
    uint8_t* p = buf->data();
    files_[name] = std::move(buf);
    return p;
}

void file_set::add(const std::string& name, std::vector<uint8_t> bytes) { files_[name] = std::make_unique<std::vector<uint8_t>>(std::move(bytes)); }

const std::vector<uint8_t>* file_set::get(const std::string& name) const {
    auto it = files_.find(name);
    return it == files_.end() ? nullptr : it->second.get();
}

std::string_view file_set::text(const std::string& name) const {
    auto* f = get(name);
    if (!f) throw error("missing file " + name);
    return {reinterpret_cast<const char*>(f->data()), f->size()};
}

std::vector<std::string> file_set::names() const {
    std::vector<std::string> r;
    for (auto& [k, v] : files_) r.push_back(k);
    return r;
}

safetensors_source::safetensors_source(const file_set& files, const st_limits& lim) {
    std::vector<std::string> shards;
    std::map<std::string, std::string> index;
    if (files.has("model.safetensors.index.json")) {
        index = parse_safetensors_index(files.text("model.safetensors.index.json"), "model.safetensors.index.json");
        for (auto& [t, f] : index)
            if (std::find(shards.begin(), shards.end(), f) == shards.end()) shards.push_back(f);
    } else if (files.has("model.safetensors")) {
        shards.push_back("model.safetensors");
    } else {
        throw error("no weights: expected model.safetensors or model.safetensors.index.json");
    }
    for (auto& shard : shards) {
        const auto* bytes = files.get(shard);
        if (!bytes) throw error("model.safetensors.index.json names shard " + shard + ", which is missing");
        const safetensors_file f = parse_safetensors(bytes->data(), int64_t(bytes->size()), shard, lim);
        for (const st_tensor& t : f.tensors) {
            if (!index.empty() && (!index.count(t.name) || index[t.name] != shard)) continue;  // not this shard's per the index
            if (tensors_.count(t.name) || unsupported_.count(t.name)) throw error(shard + ": tensor \"" + t.name + "\" appears in two shards");
            raw_tensor r{t.name, shard, dtype::f32, t.shape, t.data, t.n_bytes};
            if (t.dtype_name == "F32") r.type = dtype::f32;
            else if (t.dtype_name == "F16") r.type = dtype::f16;
            else if (t.dtype_name == "BF16") r.type = dtype::bf16;
            else {
                unsupported_[t.name] = t.dtype_name;
                continue;
            }
            tensors_[t.name] = std::move(r);
        }
    }
    for (auto& [t, f] : index)
        if (!tensors_.count(t) && !unsupported_.count(t))
            throw error("model.safetensors.index.json: tensor \"" + t + "\" is not in " + f);
}

const raw_tensor* safetensors_source::find(const std::string& name) const {
    auto it = tensors_.find(name);
    if (it != tensors_.end()) return &it->second;
    auto u = unsupported_.find(name);
    if (u != unsupported_.end())
        throw error("tensor \"" + name + "\" has dtype " + u->second + ", which is not supported for weights (supported: F32, F16, BF16)");
    return nullptr;
}

std::vector<std::string> safetensors_source::names() const {
    std::vector<std::string> r;
    for (auto& [k, v] : tensors_) r.push_back(k);
    return r;
}

int64_t estimate_memory(const hparams& hp, weight_format fmt, double stored) {
    const double E = double(hp.n_embd), F = double(hp.n_ff), V = double(hp.n_vocab), L = double(hp.n_layer);
    const double matrices = V * E + L * (4 * E * E + 2 * E * F) + (hp.architecture == arch::bert ? E * E : 0);
    const double per = fmt == weight_format::f32 ? 4 : fmt == weight_format::f16 ? 2 : fmt == weight_format::q8_0 ? 34.0 / 32 : stored;
    const double owned = fmt == weight_format::as_stored ? 0 : matrices * per;  // as stored: views into the file
    const double small = (double(hp.n_ctx) + 2) * E * 4 + L * (10 * E + F) * 4 + V * 4;  // positions, biases, norms
    const double cache = hp.architecture == arch::gpt2 ? 2 * L * double(hp.n_ctx) * E * 4 : 0;
    const double scratch = double(hp.n_ctx) * (6 * E + F) * 4 + double(hp.n_head) * double(hp.n_ctx) * double(hp.n_ctx) * 4;
    return int64_t(owned + small + cache + scratch);
}

model build_model(const hparams& hp, const tensor_source& src, const load_options& opt, std::shared_ptr<const file_set> files) {
    if (opt.memory_budget > 0) {
        const int64_t need = estimate_memory(hp, opt.format, 4);
        if (need > opt.memory_budget)
            throw error("out of memory: this model needs about " + std::to_string(need >> 20) + " MiB beyond its file (weights in " +
                        weight_format_name(opt.format) + ", a full KV cache and scratch), over the budget of " +
                        std::to_string(opt.memory_budget >> 20) + " MiB");
    }
    model m;
    m.hp = hp;
    bool borrows;
    if (hp.architecture == arch::bert) {
        m.bert = std::make_unique<bert_model>(hp, src, opt.format);
        borrows = m.bert->borrows_file_bytes();
    } else {
        m.gpt2 = std::make_unique<gpt2_model>(hp, src, opt.format);
        borrows = m.gpt2->borrows_file_bytes();
    }
    if (borrows) m.files = std::move(files);
    return m;
}

model load_hf_model(std::shared_ptr<const file_set> files, const load_options& opt) {
    const hparams hp = parse_config(files->text("config.json"), "config.json");
    safetensors_source src(*files);
    return build_model(hp, src, opt, std::move(files));
}

}  // namespace wf
