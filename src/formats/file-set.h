// A model's files, by name: the bytes of a Hugging Face folder or a GGUF file, however they arrived (a folder,
// a download streamed into wasm memory, dropped files).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace wf {

// Buffers are allocated first and filled afterwards (JavaScript streams downloads straight into them), and never
// move once allocated.
class file_set {
public:
    uint8_t* allocate(const std::string& name, int64_t size);
    void add(const std::string& name, std::vector<uint8_t> bytes);
    const std::vector<uint8_t>* get(const std::string& name) const;
    std::string_view text(const std::string& name) const;  // error if absent
    bool has(const std::string& name) const { return files_.count(name) != 0; }
    std::vector<std::string> names() const;
    void remove(const std::string& name) { files_.erase(name); }

private:
    std::map<std::string, std::unique_ptr<std::vector<uint8_t>>> files_;
};

}  // namespace wf
