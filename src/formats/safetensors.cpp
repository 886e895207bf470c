#include "formats/safetensors.h"

#include <algorithm>

#include "core/checked.h"
#include "core/json.h"

namespace wf {

int64_t st_dtype_size(const std::string& t) {
    static const std::pair<const char*, int> sizes[] = {
        {"F64", 8}, {"F32", 4}, {"F16", 2}, {"BF16", 2}, {"I64", 8}, {"I32", 4}, {"I16", 2}, {"I8", 1},
        {"U64", 8}, {"U32", 4}, {"U16", 2}, {"U8", 1}, {"BOOL", 1}, {"F8_E4M3", 1}, {"F8_E5M2", 1}, {"C64", 8}};
    for (auto& [n, s] : sizes)
        if (t == n) return s;
    return 0;
}

const st_tensor* safetensors_file::find(const std::string& name) const {
    for (auto& t : tensors)
        if (t.name == name) return &t;
    return nullptr;
}

safetensors_file parse_safetensors(const uint8_t* bytes, int64_t size, const std::string& file, const st_limits& lim) {
    if (size < 8) throw error(file + ": file of " + std::to_string(size) + " bytes is too small for a safetensors header");
    uint64_t n = 0;
    for (int i = 7; i >= 0; --i) n = n << 8 | bytes[i];
    if (n > uint64_t(lim.max_header_bytes))
        throw error(file + ": header length " + std::to_string(n) + " is over the limit of " + std::to_string(lim.max_header_bytes));
    if (int64_t(n) > size - 8)
        throw error(file + ": header length " + std::to_string(n) + " runs past the end of the file (" + std::to_string(size) + " bytes)");
    const std::string what = file + " header";
    const json h = parse_json_strict(std::string_view(reinterpret_cast<const char*>(bytes + 8), size_t(n)), what, lim.max_header_bytes);
    if (!h.is_object()) throw error(what + ": must be a JSON object");
    const int64_t data_size = size - 8 - int64_t(n);
    const uint8_t* data = bytes + 8 + n;

    safetensors_file out;
    out.file_name = file;
    if (int64_t(h.size()) > lim.max_tensors + 1)
        throw error(what + ": " + std::to_string(h.size()) + " entries is over the limit of " + std::to_string(lim.max_tensors));
    for (auto it = h.begin(); it != h.end(); ++it) {
        const std::string& name = it.key();
        const json& v = it.value();
        if (name == "__metadata__") {
            if (!v.is_object()) throw error(what + ": __metadata__ must be an object of strings");
            for (auto m = v.begin(); m != v.end(); ++m) {
                if (!m.value().is_string()) throw error(what + ": __metadata__ value of \"" + m.key() + "\" is not a string");
                out.metadata[m.key()] = m.value().get<std::string>();
            }
            continue;
        }
        const std::string tw = what + ", tensor \"" + name + "\"";
        if (!v.is_object()) throw error(tw + ": entry must be an object");
        st_tensor t;
        t.name = name;
        t.dtype_name = json_string(v, "dtype", tw);
        const int64_t esize = st_dtype_size(t.dtype_name);
        if (esize == 0) throw error(tw + ": unknown dtype \"" + t.dtype_name + "\"");
        const json& shape = json_field(v, "shape", tw);
        if (!shape.is_array() || shape.size() > 8) throw error(tw + ": shape must be an array of at most 8 sizes");
        int64_t count = 1;
        for (const json& d : shape) {
            if (!d.is_number_unsigned()) throw error(tw + ": shape entries must be non-negative integers, got " + d.dump());
            const uint64_t dim = d.get<uint64_t>();
            if (dim > uint64_t(INT64_MAX)) throw error(tw + ": shape entry " + d.dump() + " is too large");
            t.shape.push_back(int64_t(dim));
            count = checked_mul(count, int64_t(dim), tw + ": element count overflows");
        }
        t.n_elements = count;
        const json& off = json_field(v, "data_offsets", tw);
        if (!off.is_array() || off.size() != 2 || !off[0].is_number_unsigned() || !off[1].is_number_unsigned())
            throw error(tw + ": data_offsets must be two non-negative integers, got " + off.dump().substr(0, 60));
        const uint64_t b = off[0].get<uint64_t>(), e = off[1].get<uint64_t>();
        if (e < b || e > uint64_t(data_size))
            throw error(tw + ": data_offsets [" + std::to_string(b) + ", " + std::to_string(e) + "] outside the " +
                        std::to_string(data_size) + " data bytes");
        const int64_t want = checked_mul(count, esize, tw + ": byte size overflows");
        if (int64_t(e - b) != want)
            throw error(tw + ": shape × " + t.dtype_name + " needs " + std::to_string(want) + " bytes but data_offsets span " +
                        std::to_string(e - b));
        t.data = data + b;
        t.n_bytes = want;
        out.tensors.push_back(std::move(t));
    }
    // Offsets must tile the data exactly: sorted by start, each begins where the previous ended, no trailing bytes.
    std::vector<const st_tensor*> order;
    for (auto& t : out.tensors) order.push_back(&t);
    std::sort(order.begin(), order.end(), [](auto* a, auto* b) { return a->data != b->data ? a->data < b->data : a->n_bytes < b->n_bytes; });
    const uint8_t* expect = data;
    for (auto* t : order) {
        if (t->data != expect)
            throw error(what + ", tensor \"" + t->name + "\": data starts at " + std::to_string(t->data - data) + ", expected " +
                        std::to_string(expect - data) + " (tensors must be contiguous and must not overlap)");
        expect += t->n_bytes;
    }
    if (expect != data + data_size)
        throw error(file + ": " + std::to_string(data + data_size - expect) + " bytes after the last tensor (truncated header or appended data)");
    return out;
}

std::map<std::string, std::string> parse_safetensors_index(std::string_view text, const std::string& file) {
    const json j = parse_json_strict(text, file);
    if (!j.is_object()) throw error(file + ": must be a JSON object");
    const json& map = json_field(j, "weight_map", file);
    if (!map.is_object()) throw error(file + ": weight_map must be an object");
    std::map<std::string, std::string> out;
    for (auto it = map.begin(); it != map.end(); ++it) {
        if (!it.value().is_string()) throw error(file + ": weight_map entry \"" + it.key() + "\" is not a file name");
        const std::string shard = it.value().get<std::string>();
        if (shard.empty() || shard.find('/') != std::string::npos || shard.find('\\') != std::string::npos || shard == "." ||
            shard == ".." || shard.find(':') != std::string::npos)
            throw error(file + ": weight_map entry \"" + it.key() + "\" names \"" + shard + "\", which is not a plain file name");
        out[it.key()] = shard;
    }
    return out;
}

bool safetensors_source::present(const file_set& files) { return files.has("model.safetensors.index.json") || files.has("model.safetensors"); }

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
            const auto type = dtype_from_name(t.dtype_name);
            if (!type || traits(*type).block != 1) {  // safetensors holds plain floats only; integers are not weights
                unsupported_[t.name] = t.dtype_name;
                continue;
            }
            tensors_[t.name] = raw_tensor{t.name, shard, *type, t.shape, t.data, t.n_bytes};
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

std::vector<const raw_tensor*> safetensors_source::tensors() const {
    std::vector<const raw_tensor*> r;
    for (auto& [k, v] : tensors_) r.push_back(&v);
    return r;
}

}  // namespace wf
