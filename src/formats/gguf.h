// GGUF reader (versions 2 and 3), validated as untrusted input (DESIGN.md §4, research/security.md G1–G36): every
// length is checked against the bytes left, in 64-bit arithmetic; counts, string and array sizes are capped;
// tensor data must be laid out exactly as ggml writes it (contiguous, aligned, in order). Tensors are views into
// the caller's buffer.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kernels/dtype.h"

namespace wf {

class file_set;

enum class gguf_type : uint32_t { u8 = 0, i8, u16, i16, u32, i32, f32, boolean, string, array, u64, i64, f64, count };
const char* gguf_type_name(gguf_type t);

struct gguf_value {
    gguf_type type = gguf_type::u8;
    gguf_type elem = gguf_type::u8;  // arrays: the element type
    uint64_t u = 0;                  // unsigned integers and bool
    int64_t i = 0;                   // signed integers
    double f = 0;                    // floats
    std::string s;                   // strings
    std::vector<std::string> strs;   // string arrays
    std::vector<double> nums;        // numeric arrays (integers are exact below 2^53)
    uint64_t count = 0;              // arrays: element count
};

struct gguf_tensor {
    std::string name;
    dtype type = dtype::f32;
    std::vector<int64_t> ne;  // ggml order: ne[0] is the innermost (contiguous) dimension
    const uint8_t* data = nullptr;
    int64_t n_bytes = 0;
    std::string file;  // the file it is in (a split model's part)
};

struct gguf_limits {
    uint64_t max_kv = 65536;
    uint64_t max_tensors = 4096;
    uint64_t max_string = 1 << 20;
    uint64_t max_array = 4u << 20;
};

class gguf_file {
public:
    std::string file_name;
    uint32_t version = 0;
    uint32_t alignment = 32;
    std::map<std::string, gguf_value> kv;
    std::vector<gguf_tensor> tensors;

    bool has(const std::string& key) const { return kv.count(key) != 0; }
    // Typed getters: an error names the key and both types on a mismatch, or the key when it is absent.
    uint64_t get_uint(const std::string& key) const;  // any unsigned integer type (or a non-negative signed one)
    double get_float(const std::string& key) const;   // f32 / f64
    const std::string& get_string(const std::string& key) const;
    const std::vector<std::string>& get_strings(const std::string& key) const;
    const std::vector<double>& get_numbers(const std::string& key) const;
    const gguf_tensor* find(const std::string& name) const;
};

gguf_file parse_gguf(const uint8_t* bytes, int64_t size, const std::string& file_name, const gguf_limits& lim = {});

// Split GGUF models, as llama.cpp's gguf-split writes them: "<prefix>-00001-of-00003.gguf" … "-00003-of-00003.gguf".
// The first part holds all the metadata; every part holds split.no (0-based), split.count and split.tensors.count
// (the whole model's) and some of the tensors (the first part may hold none).
//
// The GGUF files among `names`: the one .gguf file, or every part of one split model in order; none when there is no
// .gguf. An error names what is wrong: several models, a part missing, parts of different splits.
std::vector<std::string> gguf_model_files(const std::vector<std::string>& names);
// The parts of a split model (parsed, in order) as one file: the first part's metadata without the split.* keys,
// and every part's tensors, after checking each part's split.no and split.count, the total tensor count and that no
// tensor is in two parts. Tensors stay views into the parts' bytes.
gguf_file join_gguf_parts(std::vector<gguf_file> parts);
// The model's GGUF among `files`: its .gguf file, or its parts joined; none when there is no .gguf file.
std::optional<gguf_file> read_gguf(const file_set& files, const gguf_limits& lim = {});

}  // namespace wf
