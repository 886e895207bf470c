// Builds GGUF files byte by byte for tests: valid ones (from a fixture's tensors) and deliberately broken ones.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace wft {

struct gguf_builder {
    std::vector<uint8_t> kv_bytes, info_bytes, data;
    uint64_t n_kv = 0, n_tensors = 0;
    uint32_t version = 3, alignment = 32;

    template <class T>
    static void put(std::vector<uint8_t>& b, T v) {
        const auto* p = reinterpret_cast<const uint8_t*>(&v);
        b.insert(b.end(), p, p + sizeof(T));
    }
    static void put_str(std::vector<uint8_t>& b, const std::string& s) {
        put<uint64_t>(b, s.size());
        b.insert(b.end(), s.begin(), s.end());
    }
    void key(const std::string& k, uint32_t type) {
        put_str(kv_bytes, k);
        put<uint32_t>(kv_bytes, type);
        ++n_kv;
    }
    void u32(const std::string& k, uint32_t v) { key(k, 4), put(kv_bytes, v); }
    void f32(const std::string& k, float v) { key(k, 6), put(kv_bytes, v); }
    void str(const std::string& k, const std::string& v) { key(k, 8), put_str(kv_bytes, v); }
    void strs(const std::string& k, const std::vector<std::string>& v) {
        key(k, 9);
        put<uint32_t>(kv_bytes, 8);
        put<uint64_t>(kv_bytes, v.size());
        for (auto& s : v) put_str(kv_bytes, s);
    }
    void boolean(const std::string& k, bool v) { key(k, 7), put<uint8_t>(kv_bytes, v ? 1 : 0); }
    void f32s(const std::string& k, const std::vector<float>& v) {
        key(k, 9);
        put<uint32_t>(kv_bytes, 6);
        put<uint64_t>(kv_bytes, v.size());
        for (auto x : v) put(kv_bytes, x);
    }
    void u8s(const std::string& k, const std::string& bytes) {
        key(k, 9);
        put<uint32_t>(kv_bytes, 0);
        put<uint64_t>(kv_bytes, bytes.size());
        kv_bytes.insert(kv_bytes.end(), bytes.begin(), bytes.end());
    }
    void i32s(const std::string& k, const std::vector<int32_t>& v) {
        key(k, 9);
        put<uint32_t>(kv_bytes, 5);
        put<uint64_t>(kv_bytes, v.size());
        for (auto x : v) put(kv_bytes, x);
    }
    // ne in ggml order (innermost first); bytes already in the ggml type's layout
    void tensor(const std::string& name, std::vector<int64_t> ne, uint32_t ggml_type, const std::vector<uint8_t>& bytes) {
        put_str(info_bytes, name);
        put<uint32_t>(info_bytes, uint32_t(ne.size()));
        for (auto n : ne) put<int64_t>(info_bytes, n);
        put<uint32_t>(info_bytes, ggml_type);
        put<uint64_t>(info_bytes, data.size());
        data.insert(data.end(), bytes.begin(), bytes.end());
        while (data.size() % alignment) data.push_back(0);
        ++n_tensors;
    }
    std::vector<uint8_t> bytes() const {
        std::vector<uint8_t> b = {'G', 'G', 'U', 'F'};
        put<uint32_t>(b, version);
        put<uint64_t>(b, n_tensors);
        put<uint64_t>(b, n_kv);
        b.insert(b.end(), kv_bytes.begin(), kv_bytes.end());
        b.insert(b.end(), info_bytes.begin(), info_bytes.end());
        while (b.size() % alignment) b.push_back(0);
        b.insert(b.end(), data.begin(), data.end());
        return b;
    }
};

}  // namespace wft
