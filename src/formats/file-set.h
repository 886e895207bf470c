// A model's files, by name: the bytes of a Hugging Face folder or a GGUF file, however they arrived (a folder,
// a download streamed into wasm memory, dropped files).
#pragma once

#include <cstdint>
#include <cstddef>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace wf {

// One file's bytes, allocated once and not cleared: whoever allocates them fills them all (JavaScript streams a
// download straight in). Not std::vector<uint8_t>: its resize cleared a buffer one byte at a time in Emscripten
// 3.1.6's wasm (libc++'s construct loop, not turned into a memory.fill there), 1.0 s of a 283 MB model's load.
class file_bytes {
public:
    explicit file_bytes(size_t n) : p_(new uint8_t[n]), n_(n) {}
    uint8_t* data() { return p_.get(); }
    const uint8_t* data() const { return p_.get(); }
    size_t size() const { return n_; }
    bool empty() const { return n_ == 0; }
    const uint8_t* begin() const { return p_.get(); }
    const uint8_t* end() const { return p_.get() + n_; }

private:
    std::unique_ptr<uint8_t[]> p_;
    size_t n_;
};

// Buffers are allocated first and filled afterwards (JavaScript streams downloads straight into them), and never
// move once allocated.
class file_set {
public:
    uint8_t* allocate(const std::string& name, int64_t size);  // size bytes, not cleared
    void add(const std::string& name, std::span<const uint8_t> bytes);  // a copy of bytes
    const file_bytes* get(const std::string& name) const;
    std::string_view text(const std::string& name) const;  // error if absent
    bool has(const std::string& name) const { return files_.count(name) != 0; }
    std::vector<std::string> names() const;
    void remove(const std::string& name) { files_.erase(name); }

private:
    std::map<std::string, std::unique_ptr<file_bytes>> files_;
};

}  // namespace wf
