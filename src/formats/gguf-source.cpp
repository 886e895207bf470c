#include "formats/gguf-source.h"

#include "core/error.h"

namespace wf {
namespace {

std::string hf_name(const std::string& g, const gguf_name_table& t) {
    for (auto& [gguf, hf] : t.global)
        if (g == gguf) return hf;
    if (g.rfind("blk.", 0) == 0) {
        const size_t dot = g.find('.', 4);
        if (dot != std::string::npos) {
            const std::string layer = g.substr(4, dot - 4), rest = g.substr(dot + 1);
            for (auto& [gguf, hf] : t.layer)
                if (rest == gguf) return t.layer_prefix + layer + "." + hf;
        }
    }
    return g;
}

}  // namespace

gguf_source::gguf_source(const gguf_file& g, const gguf_name_table& names) {
    for (const gguf_tensor& t : g.tensors) {
        raw_tensor r;
        r.name = hf_name(t.name, names);
        r.file = (t.file.empty() ? g.file_name : t.file) + " (tensor \"" + t.name + "\")";
        r.type = t.type;
        r.shape.assign(t.ne.rbegin(), t.ne.rend());  // ggml's ne[0] is the innermost: PyTorch order is reversed
        r.data = t.data;
        r.n_bytes = t.n_bytes;
        r.out_in = true;
        if (!tensors_.emplace(r.name, r).second) throw error(g.file_name + ": two tensors map to \"" + r.name + "\"");
    }
}

const raw_tensor* gguf_source::find(const std::string& name) const {
    auto it = tensors_.find(name);
    return it == tensors_.end() ? nullptr : &it->second;
}

std::vector<const raw_tensor*> gguf_source::tensors() const {
    std::vector<const raw_tensor*> r;
    for (auto& [k, v] : tensors_) r.push_back(&v);
    return r;
}

}  // namespace wf
