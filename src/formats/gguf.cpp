#include "formats/gguf.h"

#include <algorithm>
#include <cstring>
#include <set>

#include "core/checked.h"

namespace wf {

const char* gguf_type_name(gguf_type t) {
    static const char* names[] = {"UINT8", "INT8", "UINT16", "INT16", "UINT32", "INT32", "FLOAT32", "BOOL", "STRING", "ARRAY", "UINT64", "INT64", "FLOAT64"};
    return uint32_t(t) < uint32_t(gguf_type::count) ? names[uint32_t(t)] : "?";
}

namespace {

// A cursor over the file that checks every read against the bytes left.
struct reader {
    const uint8_t* p;
    int64_t size, pos = 0;
    const std::string& file;
    void need(uint64_t n, const std::string& what) const {
        if (n > uint64_t(size - pos))
            throw error(file + ": " + what + " needs " + std::to_string(n) + " bytes at offset " + std::to_string(pos) + ", but only " +
                        std::to_string(size - pos) + " remain");
    }
    template <class T>
    T get(const std::string& what) {
        need(sizeof(T), what);
        T v;
        std::memcpy(&v, p + pos, sizeof(T));
        pos += int64_t(sizeof(T));
        return v;
    }
    std::string str(const std::string& what, uint64_t max) {
        const uint64_t n = get<uint64_t>(what + " length");
        if (n > max) throw error(file + ": " + what + " of " + std::to_string(n) + " bytes is over the limit of " + std::to_string(max));
        need(n, what);
        std::string s(reinterpret_cast<const char*>(p + pos), size_t(n));
        pos += int64_t(n);
        return s;
    }
};

size_t scalar_size(gguf_type t) {
    switch (t) {
    case gguf_type::u8: case gguf_type::i8: case gguf_type::boolean: return 1;
    case gguf_type::u16: case gguf_type::i16: return 2;
    case gguf_type::u32: case gguf_type::i32: case gguf_type::f32: return 4;
    case gguf_type::u64: case gguf_type::i64: case gguf_type::f64: return 8;
    default: return 0;
    }
}

void read_scalar(reader& r, gguf_type t, gguf_value& v, const std::string& what) {
    switch (t) {
    case gguf_type::u8: v.u = r.get<uint8_t>(what); break;
    case gguf_type::i8: v.i = r.get<int8_t>(what); break;
    case gguf_type::u16: v.u = r.get<uint16_t>(what); break;
    case gguf_type::i16: v.i = r.get<int16_t>(what); break;
    case gguf_type::u32: v.u = r.get<uint32_t>(what); break;
    case gguf_type::i32: v.i = r.get<int32_t>(what); break;
    case gguf_type::u64: v.u = r.get<uint64_t>(what); break;
    case gguf_type::i64: v.i = r.get<int64_t>(what); break;
    case gguf_type::f32: v.f = r.get<float>(what); break;
    case gguf_type::f64: v.f = r.get<double>(what); break;
    case gguf_type::boolean: {
        const uint8_t b = r.get<uint8_t>(what);
        if (b > 1) throw error(r.file + ": " + what + " is a BOOL with value " + std::to_string(b) + " (must be 0 or 1)");
        v.u = b;
        break;
    }
    default: throw error(r.file + ": " + what + " has type " + std::to_string(uint32_t(t)));
    }
}

double as_number(const gguf_value& v) {
    switch (v.type) {
    case gguf_type::i8: case gguf_type::i16: case gguf_type::i32: case gguf_type::i64: return double(v.i);
    case gguf_type::f32: case gguf_type::f64: return v.f;
    default: return double(v.u);
    }
}

}  // namespace

gguf_file parse_gguf(const uint8_t* bytes, int64_t size, const std::string& file, const gguf_limits& lim) {
    reader r{bytes, size, 0, file};
    gguf_file g;
    g.file_name = file;
    if (size < 4 || std::memcmp(bytes, "GGUF", 4) != 0) {
        std::string shown;
        for (int i = 0; i < 4 && i < size; ++i) {
            char buf[5];
            std::snprintf(buf, sizeof buf, "\\x%02x", bytes[i]);
            shown += buf;
        }
        throw error(file + ": not a GGUF file (magic " + shown + ")");
    }
    r.pos = 4;
    g.version = r.get<uint32_t>("version");
    if (g.version == 1) throw error(file + ": GGUF version 1 is not supported (versions 2 and 3 are)");
    if (g.version == 0x02000000 || g.version == 0x03000000) throw error(file + ": GGUF written big-endian, which is not supported");
    if (g.version != 2 && g.version != 3) throw error(file + ": GGUF version " + std::to_string(g.version) + " is not supported (versions 2 and 3 are)");
    const uint64_t n_tensors = r.get<uint64_t>("tensor count");
    const uint64_t n_kv = r.get<uint64_t>("metadata count");
    if (n_tensors > lim.max_tensors) throw error(file + ": tensor count " + std::to_string(n_tensors) + " is over the limit of " + std::to_string(lim.max_tensors));
    if (n_kv > lim.max_kv) throw error(file + ": metadata count " + std::to_string(n_kv) + " is over the limit of " + std::to_string(lim.max_kv));

    for (uint64_t k = 0; k < n_kv; ++k) {
        const std::string key = r.str("metadata key " + std::to_string(k), 65535);
        if (key.empty()) throw error(file + ": metadata key " + std::to_string(k) + " is empty");
        const std::string what = "metadata \"" + key + "\"";
        const uint32_t t = r.get<uint32_t>(what + " type");
        if (t >= uint32_t(gguf_type::count)) throw error(file + ": " + what + " has unknown type " + std::to_string(t));
        gguf_value v;
        v.type = gguf_type(t);
        if (v.type == gguf_type::string) {
            v.s = r.str(what, lim.max_string);
        } else if (v.type == gguf_type::array) {
            const uint32_t et = r.get<uint32_t>(what + " element type");
            if (et >= uint32_t(gguf_type::count)) throw error(file + ": " + what + " has unknown element type " + std::to_string(et));
            v.elem = gguf_type(et);
            if (v.elem == gguf_type::array) throw error(file + ": " + what + " is an array of arrays, which is not supported");
            v.count = r.get<uint64_t>(what + " count");
            if (v.count > lim.max_array)
                throw error(file + ": " + what + " has " + std::to_string(v.count) + " elements, over the limit of " + std::to_string(lim.max_array));
            if (v.elem == gguf_type::string) {
                r.need(checked_mul(int64_t(v.count), 8, file + ": " + what + " count overflows"), what);  // each string has at least its length
                v.strs.reserve(size_t(v.count));
                for (uint64_t i = 0; i < v.count; ++i) v.strs.push_back(r.str(what + "[" + std::to_string(i) + "]", lim.max_string));
            } else {
                r.need(checked_mul(int64_t(v.count), int64_t(scalar_size(v.elem)), file + ": " + what + " size overflows"), what);
                v.nums.reserve(size_t(v.count));
                for (uint64_t i = 0; i < v.count; ++i) {
                    gguf_value e;
                    e.type = v.elem;
                    read_scalar(r, v.elem, e, what);
                    v.nums.push_back(as_number(e));
                }
            }
        } else {
            read_scalar(r, v.type, v, what);
        }
        if (!g.kv.emplace(key, std::move(v)).second) throw error(file + ": duplicate metadata key \"" + key + "\"");
    }
    if (g.has("general.alignment")) {
        const gguf_value& a = g.kv.at("general.alignment");
        if (a.type != gguf_type::u32) throw error(file + ": general.alignment has type " + std::string(gguf_type_name(a.type)) + ", expected UINT32");
        if (a.u == 0 || (a.u & (a.u - 1)) != 0 || a.u > 65536)
            throw error(file + ": general.alignment = " + std::to_string(a.u) + " is not a power of two up to 65536");
        g.alignment = uint32_t(a.u);
    }

    std::set<std::string> names;
    std::vector<uint64_t> offsets;
    for (uint64_t t = 0; t < n_tensors; ++t) {
        gguf_tensor ti;
        ti.name = r.str("tensor " + std::to_string(t) + " name", 63);
        const std::string what = "tensor \"" + ti.name + "\"";
        if (ti.name.empty()) throw error(file + ": tensor " + std::to_string(t) + " has an empty name");
        if (!names.insert(ti.name).second) throw error(file + ": duplicate " + what);
        const uint32_t n_dims = r.get<uint32_t>(what + " dimension count");
        if (n_dims < 1 || n_dims > 4) throw error(file + ": " + what + " has " + std::to_string(n_dims) + " dimensions (1 to 4 allowed)");
        int64_t count = 1;
        for (uint32_t d = 0; d < n_dims; ++d) {
            const int64_t n = r.get<int64_t>(what + " dimension");
            if (n < 0) throw error(file + ": " + what + " has a negative dimension " + std::to_string(n));
            ti.ne.push_back(n);
            count = checked_mul(count, n, file + ": " + what + " element count overflows");
        }
        const uint32_t ggml_type = r.get<uint32_t>(what + " type");
        const auto type = dtype_from_ggml(ggml_type);
        if (!type) {
            if (std::string_view(ggml_type_name(ggml_type)) == "unknown")
                throw error(file + ": " + what + " has unknown ggml type " + std::to_string(ggml_type));
            std::string known;
            for (dtype t : all_dtypes) known += (known.empty() ? "" : ", ") + std::string(dtype_name(t));
            throw error(file + ": " + what + " has type " + ggml_type_name(ggml_type) + ", which is not supported (supported: " + known + ")");
        }
        ti.type = *type;
        const dtype_traits& k = traits(*type);
        if (ti.ne[0] % k.block != 0)
            throw error(file + ": " + what + " has " + std::to_string(ti.ne[0]) + " columns, not a multiple of the " + k.name + " block of " +
                        std::to_string(k.block));
        ti.n_bytes = checked_mul(count / k.block, k.block_bytes, file + ": " + what + " byte size overflows");
        offsets.push_back(r.get<uint64_t>(what + " offset"));
        g.tensors.push_back(std::move(ti));
    }
    // data section: aligned after the tensor infos; tensors in order, each at the aligned end of the previous
    const int64_t align = g.alignment;
    const int64_t data_start = checked_add(r.pos, align - 1, file + ": offset overflows") / align * align;
    if (data_start > size && n_tensors > 0) throw error(file + ": the tensor data section starts past the end of the file");
    uint64_t expect = 0;
    for (size_t t = 0; t < g.tensors.size(); ++t) {
        gguf_tensor& ti = g.tensors[t];
        if (offsets[t] != expect)
            throw error(file + ": tensor \"" + ti.name + "\" is at data offset " + std::to_string(offsets[t]) + ", expected " + std::to_string(expect) +
                        " (tensors must be contiguous, aligned and in order)");
        const int64_t end = checked_add(int64_t(offsets[t]), ti.n_bytes, file + ": tensor \"" + ti.name + "\" size overflows");
        if (end > size - data_start)
            throw error(file + ": tensor \"" + ti.name + "\" data (" + std::to_string(ti.n_bytes) + " bytes at " + std::to_string(offsets[t]) +
                        ") is not within the file");
        ti.data = bytes + data_start + offsets[t];
        ti.file = file;
        expect = uint64_t(checked_add(end, align - 1, file + ": offset overflows") / align * align);
    }
    return g;
}

namespace {
const gguf_value& need_kv(const gguf_file& g, const std::string& key) {
    auto it = g.kv.find(key);
    if (it == g.kv.end()) throw error(g.file_name + ": missing metadata \"" + key + "\"");
    return it->second;
}
[[noreturn]] void mismatch(const gguf_file& g, const std::string& key, gguf_type got, const char* want) {
    throw error(g.file_name + ": metadata \"" + key + "\" has type " + gguf_type_name(got) + ", expected " + want);
}
}  // namespace

uint64_t gguf_file::get_uint(const std::string& key) const {
    const gguf_value& v = need_kv(*this, key);
    switch (v.type) {
    case gguf_type::u8: case gguf_type::u16: case gguf_type::u32: case gguf_type::u64: return v.u;
    case gguf_type::i8: case gguf_type::i16: case gguf_type::i32: case gguf_type::i64:
        if (v.i < 0) throw error(file_name + ": metadata \"" + key + "\" = " + std::to_string(v.i) + " is negative");
        return uint64_t(v.i);
    default: mismatch(*this, key, v.type, "an integer");
    }
}

double gguf_file::get_float(const std::string& key) const {
    const gguf_value& v = need_kv(*this, key);
    if (v.type != gguf_type::f32 && v.type != gguf_type::f64) mismatch(*this, key, v.type, "FLOAT32");
    return v.f;
}

const std::string& gguf_file::get_string(const std::string& key) const {
    const gguf_value& v = need_kv(*this, key);
    if (v.type != gguf_type::string) mismatch(*this, key, v.type, "STRING");
    return v.s;
}

const std::vector<std::string>& gguf_file::get_strings(const std::string& key) const {
    const gguf_value& v = need_kv(*this, key);
    if (v.type != gguf_type::array || v.elem != gguf_type::string) mismatch(*this, key, v.type == gguf_type::array ? v.elem : v.type, "an array of STRING");
    return v.strs;
}

const std::vector<double>& gguf_file::get_numbers(const std::string& key) const {
    const gguf_value& v = need_kv(*this, key);
    if (v.type != gguf_type::array || v.elem == gguf_type::string || v.elem == gguf_type::boolean)
        mismatch(*this, key, v.type == gguf_type::array ? v.elem : v.type, "a numeric array");
    return v.nums;
}

const gguf_tensor* gguf_file::find(const std::string& name) const {
    for (auto& t : tensors)
        if (t.name == name) return &t;
    return nullptr;
}

}  // namespace wf
