// safetensors reader: 8-byte little-endian header length N, an N-byte JSON header, then the tensor data.
// Everything is validated against the bytes at hand (DESIGN.md §4, research/security.md S1–S31); tensors are
// views into the caller's buffer, which must outlive the result.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "formats/file-set.h"
#include "formats/tensor-source.h"

namespace wf {

struct st_limits {
    int64_t max_header_bytes = 16ll << 20;
    int64_t max_tensors = 100000;
};

struct st_tensor {
    std::string name;
    std::string dtype_name;       // as written: "F32", "F16", "BF16", "I64", …
    std::vector<int64_t> shape;
    const uint8_t* data = nullptr;  // may be unaligned
    int64_t n_bytes = 0;
    int64_t n_elements = 0;
};

struct safetensors_file {
    std::string file_name;
    std::vector<st_tensor> tensors;
    std::map<std::string, std::string> metadata;
    const st_tensor* find(const std::string& name) const;
};

safetensors_file parse_safetensors(const uint8_t* bytes, int64_t size, const std::string& file_name, const st_limits& lim = {});

// model.safetensors.index.json → (tensor name → shard file name); shard names must be plain file names.
std::map<std::string, std::string> parse_safetensors_index(std::string_view text, const std::string& file_name);

// Bytes per element of a safetensors dtype name, 0 if the name is unknown; bit-packed types are rejected.
int64_t st_dtype_size(const std::string& dtype);

// The tensors of a folder's model.safetensors, or of the shards its model.safetensors.index.json lists.
class safetensors_source : public tensor_source {
public:
    explicit safetensors_source(const file_set& files, const st_limits& lim = {});
    const raw_tensor* find(const std::string& name) const override;
    std::vector<const raw_tensor*> tensors() const override;
    // True when the files hold safetensors weights (model.safetensors or an index).
    static bool present(const file_set& files);

private:
    std::map<std::string, raw_tensor> tensors_;
    std::map<std::string, std::string> unsupported_;  // name → dtype, for a clear error if a model asks for it
};

}  // namespace wf
