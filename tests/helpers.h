// Test helpers: seeded random data and weight matrices in every storage type.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "kernels.h"
#include "threads.h"

namespace wft {

inline std::vector<float> random_floats(size_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(lo, hi);
    std::vector<float> v(n);
    for (auto& x : v) x = u(rng);
    return v;
}

// A weight matrix (rows × cols) stored as `type`, built from f32 values; owns its bytes.
struct stored_matrix {
    std::vector<uint8_t> bytes;
    wf::matrix_view view;
    stored_matrix(const std::vector<float>& w, int64_t rows, int64_t cols, wf::dtype type) {
        bytes.resize(size_t(wf::row_bytes(type, cols) * rows));
        for (int64_t r = 0; r < rows; ++r) {
            const float* src = w.data() + r * cols;
            uint8_t* dst = bytes.data() + r * wf::row_bytes(type, cols);
            switch (type) {
            case wf::dtype::f32: std::memcpy(dst, src, size_t(cols) * 4); break;
            case wf::dtype::f16:
                for (int64_t c = 0; c < cols; ++c) {
                    const uint16_t h = wf::f32_to_f16(src[c]);
                    std::memcpy(dst + 2 * c, &h, 2);
                }
                break;
            case wf::dtype::bf16:
                for (int64_t c = 0; c < cols; ++c) {
                    uint32_t bits;
                    std::memcpy(&bits, &src[c], 4);
                    const uint16_t h = uint16_t((bits + 0x7fff + ((bits >> 16) & 1)) >> 16);
                    std::memcpy(dst + 2 * c, &h, 2);
                }
                break;
            case wf::dtype::q8_0: wf::quantize_q8_0(src, cols, reinterpret_cast<wf::block_q8_0*>(dst)); break;
            case wf::dtype::q4_0: throw std::runtime_error("stored_matrix: Q4_0 is written by the GGUF tests directly");
            }
        }
        view = {type, rows, cols, bytes.data()};
    }
};

}  // namespace wft

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "checkpoint.h"
#include "safetensors.h"

namespace wft {

inline std::string data_path(const std::string& rel) { return std::string(WF_SOURCE_DIR) + "/tests/data/" + rel; }

inline std::vector<uint8_t> read_file(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) throw std::runtime_error("cannot open " + path);
    return std::vector<uint8_t>(std::istreambuf_iterator<char>(f), {});
}

// Every regular file of a folder, by file name.
inline std::shared_ptr<wf::file_set> read_dir(const std::string& dir) {
    auto fs = std::make_shared<wf::file_set>();
    for (auto& e : std::filesystem::directory_iterator(dir))
        if (e.is_regular_file()) fs->add(e.path().filename().string(), read_file(e.path().string()));
    return fs;
}

// golden.safetensors written by tools/reference/make_fixtures.py
struct golden {
    std::vector<uint8_t> bytes;
    wf::safetensors_file file;
    explicit golden(const std::string& path) : bytes(read_file(path)) {
        file = wf::parse_safetensors(bytes.data(), int64_t(bytes.size()), path);
    }
    const wf::st_tensor& t(const std::string& name) const {
        auto* p = file.find(name);
        if (!p) throw std::runtime_error("golden has no " + name);
        return *p;
    }
    std::vector<float> f32(const std::string& name) const {
        auto& x = t(name);
        std::vector<float> v(size_t(x.n_elements));
        std::memcpy(v.data(), x.data, size_t(x.n_bytes));
        return v;
    }
    std::vector<int32_t> i32(const std::string& name) const {
        auto& x = t(name);
        std::vector<int32_t> v(size_t(x.n_elements));
        std::memcpy(v.data(), x.data, size_t(x.n_bytes));
        return v;
    }
};

inline double max_abs_diff(const float* a, const float* b, size_t n) {
    double m = 0;
    for (size_t i = 0; i < n; ++i) m = std::max(m, double(std::fabs(a[i] - b[i])));
    return m;
}

}  // namespace wft
