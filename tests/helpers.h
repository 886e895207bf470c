// Test helpers: seeded random data and weight matrices in every storage type.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "kernels/kernels.h"
#include "kernels/parallel.h"

namespace wft {

inline std::vector<float> random_floats(size_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(lo, hi);
    std::vector<float> v(n);
    for (auto& x : v) x = u(rng);
    return v;
}

// A weight matrix (rows × cols) stored as `type`, built from f32 values by the type's own converter; owns its bytes.
struct stored_matrix {
    std::vector<uint8_t> bytes;
    wf::matrix_view view;
    stored_matrix(const std::vector<float>& w, int64_t rows, int64_t cols, wf::dtype type) {
        bytes.resize(size_t(wf::row_bytes(type, cols) * rows));
        for (int64_t r = 0; r < rows; ++r) wf::traits(type).from_f32(w.data() + r * cols, bytes.data() + r * wf::row_bytes(type, cols), cols);
        view = {type, rows, cols, bytes.data()};
    }
};

}  // namespace wft

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>

#include <catch2/catch.hpp>

#include "formats/safetensors.h"
#include "tasks/pipeline.h"

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
    for (auto& e : std::filesystem::recursive_directory_iterator(dir))  // subfolders as "1_Pooling/config.json"
        if (e.is_regular_file()) fs->add(std::filesystem::relative(e.path(), dir).generic_string(), read_file(e.path().string()));
    return fs;
}

// Tensors held in memory as a tensor_source: names, types, shapes and views of bytes the test keeps alive.
struct memory_source : wf::tensor_source {
    std::vector<wf::raw_tensor> ts;
    const wf::raw_tensor* find(const std::string& name) const override {
        for (const auto& t : ts)
            if (t.name == name) return &t;
        return nullptr;
    }
    std::vector<const wf::raw_tensor*> tensors() const override {
        std::vector<const wf::raw_tensor*> r;
        for (const auto& t : ts) r.push_back(&t);
        return r;
    }
};

// A fixture (tests/data/fixtures/<name>) as a pipeline model, loaded once per test run.
inline const wf::pipeline_model& fixture_model(const std::string& name) {
    static std::map<std::string, std::unique_ptr<wf::pipeline_model>> loaded;
    auto& m = loaded[name];
    if (!m) m = std::make_unique<wf::pipeline_model>(wf::load_pipeline_model(read_dir(data_path("fixtures/" + name))));
    return *m;
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

// A nested JSON list of numbers, flattened in order (expected.json's tensors).
inline std::vector<float> flat(const wf::json& nested) {
    std::vector<float> out;
    auto walk = [&](const wf::json& j, auto& self) -> void {
        if (j.is_array())
            for (const auto& x : j) self(x, self);
        else
            out.push_back(j.get<float>());
    };
    walk(nested, walk);
    return out;
}

// The largest |a − b|; infinite when either side has a NaN or an infinity the other lacks, so that no tolerance
// passes a broken output.
inline double max_abs_diff(const float* a, const float* b, size_t n) {
    double m = 0;
    for (size_t i = 0; i < n; ++i) {
        if (std::isnan(a[i]) || std::isnan(b[i])) return INFINITY;
        if (a[i] == b[i]) continue;  // equal infinities included
        m = std::max(m, std::fabs(double(a[i]) - double(b[i])));
    }
    return m;
}

// max |a − b| relative to the reference's scale (its largest |b|, at least 1); the sizes must match
inline double rel_diff(const std::vector<float>& a, const std::vector<float>& b) {
    if (a.size() != b.size()) return INFINITY;
    double scale = 1;
    for (float x : b) scale = std::max(scale, double(std::fabs(x)));
    return max_abs_diff(a.data(), b.data(), a.size()) / scale;
}

// tests/data/quants/<type>.bin, written by tools/reference/make_quant_vectors.py from the independent Python
// reference of ggml's block types (tools/reference/ggml_quants.py); format in tests/data/quants/README.md.
struct quant_vectors {
    std::vector<uint8_t> file;
    uint32_t ggml_type = 0, block = 0, type_size = 0, rows = 0, n = 0;
    std::vector<std::string> labels;
    std::vector<float> input, dequantized;
    const uint8_t* quantized = nullptr;
    explicit quant_vectors(const std::string& name) : file(wft::read_file(wft::data_path("quants/" + name + ".bin"))) {
        auto u32 = [&](size_t at) {
            uint32_t v;
            std::memcpy(&v, file.data() + at, 4);
            return v;
        };
        REQUIRE(file.size() >= 32);
        REQUIRE(std::memcmp(file.data(), "WFQV", 4) == 0);
        REQUIRE(u32(4) == 1);
        ggml_type = u32(8), block = u32(12), type_size = u32(16), rows = u32(20), n = u32(24);
        const size_t labels_at = 32, input_at = labels_at + 16 * rows, deq_at = input_at + 4 * size_t(rows) * n, q_at = deq_at + 4 * size_t(rows) * n;
        REQUIRE(file.size() == q_at + size_t(rows) * (n / block) * type_size);
        for (uint32_t r = 0; r < rows; ++r)
            labels.emplace_back(reinterpret_cast<const char*>(file.data() + labels_at + 16 * r), strnlen(reinterpret_cast<const char*>(file.data() + labels_at + 16 * r), 16));
        input.resize(size_t(rows) * n);
        dequantized.resize(size_t(rows) * n);
        std::memcpy(input.data(), file.data() + input_at, input.size() * 4);
        std::memcpy(dequantized.data(), file.data() + deq_at, dequantized.size() * 4);
        quantized = file.data() + q_at;
    }
    int64_t row_bytes() const { return int64_t(n / block) * type_size; }
};

}  // namespace wft
