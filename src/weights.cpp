#include "weights.h"

#include <cstring>
#include <new>

#include "checked.h"

namespace wf {

const char* weight_format_name(weight_format f) {
    switch (f) {
    case weight_format::as_stored: return "as stored";
    case weight_format::f32: return "f32";
    case weight_format::f16: return "f16";
    case weight_format::q8_0: return "q8_0";
    }
    return "?";
}

int64_t matrix_bytes(int64_t rows, int64_t cols, dtype t) { return checked_mul(rows, row_bytes(t, cols), "matrix size overflows"); }

namespace {
std::string shape_str(const std::vector<int64_t>& s) {
    std::string r = "[";
    for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
    return r + "]";
}
}  // namespace

const raw_tensor* weight_store::try_get(const std::vector<std::string>& names) const {
    for (auto& n : names)
        if (auto* t = src_.find(n)) return t;
    return nullptr;
}

const raw_tensor& weight_store::get(const std::vector<std::string>& names) const {
    if (auto* t = try_get(names)) return *t;
    std::string all;
    for (auto& n : names) all += (all.empty() ? "\"" : " or \"") + n + "\"";
    throw error("missing tensor " + all);
}

uint8_t* weight_store::alloc(int64_t n_bytes, const std::string& what) {
    if (n_bytes > int64_t(SIZE_MAX / 2)) throw error("out of memory: " + what + " needs " + std::to_string(n_bytes) + " bytes");
    uint8_t* p = new (std::nothrow) uint8_t[size_t(std::max<int64_t>(n_bytes, 1))];
    if (!p) throw error("out of memory: could not allocate " + std::to_string(n_bytes) + " bytes for " + what);
    owned_.emplace_back(p);
    owned_bytes_ += n_bytes;
    return p;
}

matrix_view weight_store::matrix(const raw_tensor& t, int64_t rows, int64_t cols, bool transposed, bool convertible) {
    if (t.out_in) transposed = false;
    const std::vector<int64_t> want = transposed ? std::vector<int64_t>{cols, rows} : std::vector<int64_t>{rows, cols};
    if (t.shape != want)
        throw error(t.file + ": tensor \"" + t.name + "\" has shape " + shape_str(t.shape) + ", expected " + shape_str(want));
    dtype target = t.type;
    if (convertible) {
        if (fmt_ == weight_format::f32) target = dtype::f32;
        if (fmt_ == weight_format::f16) target = dtype::f16;
        if (fmt_ == weight_format::q8_0) target = cols % q8_block == 0 ? dtype::q8_0 : (t.type == dtype::q8_0 ? dtype::f32 : t.type);
    }
    if (target == dtype::q4_0) target = dtype::q8_0;  // exact: q4_0's values d·(q − 8) are q8_0 values with the same d
    if (target == dtype::q8_0 && cols % q8_block != 0) target = dtype::f32;
    if (t.type == dtype::q4_0 && target == dtype::q8_0 && !transposed) {  // block by block, keeping each scale: exact
        uint8_t* out = alloc(matrix_bytes(rows, cols, dtype::q8_0), "tensor \"" + t.name + "\"");
        for (int64_t b = 0; b < rows * (cols / q8_block); ++b) {
            const uint8_t* src = t.data + b * 18;
            block_q8_0 blk;
            std::memcpy(&blk.d, src, 2);
            for (int i = 0; i < 16; ++i) {
                blk.q[i] = int8_t(int(src[2 + i] & 0x0F) - 8);
                blk.q[16 + i] = int8_t(int(src[2 + i] >> 4) - 8);
            }
            std::memcpy(out + b * int64_t(sizeof blk), &blk, sizeof blk);
        }
        return {dtype::q8_0, rows, cols, out};
    }
    if (!transposed && target == t.type) {
        if (fmt_ == weight_format::as_stored) {  // the file's bytes, as they are
            borrows_ = true;
            return {t.type, rows, cols, t.data};
        }
        uint8_t* copy = alloc(t.n_bytes, "tensor \"" + t.name + "\"");  // own a copy, so the file can be freed
        std::memcpy(copy, t.data, size_t(t.n_bytes));
        return {t.type, rows, cols, copy};
    }
    // Widen every source row (as stored: (rows, cols), or (cols, rows) when transposed) into f32 rows of the result.
    const std::string what = "tensor \"" + t.name + "\"";
    std::vector<float> src_row(static_cast<size_t>(transposed ? rows : cols));
    std::vector<float> out_f32;
    float* f32_rows = nullptr;
    uint8_t* out = alloc(matrix_bytes(rows, cols, target), what);
    if (target == dtype::f32) f32_rows = reinterpret_cast<float*>(out);
    else {
        out_f32.resize(static_cast<size_t>(checked_mul(rows, cols, what + " is too large")));
        f32_rows = out_f32.data();
    }
    const matrix_view stored{t.type, transposed ? cols : rows, transposed ? rows : cols, t.data};
    for (int64_t r = 0; r < stored.n_rows; ++r) {
        dequantize_row(stored, r, src_row.data());
        if (!transposed) std::memcpy(f32_rows + r * cols, src_row.data(), size_t(cols) * 4);
        else
            for (int64_t c = 0; c < rows; ++c) f32_rows[c * cols + r] = src_row[size_t(c)];
    }
    if (target != dtype::f32) {
        for (int64_t r = 0; r < rows; ++r) {
            uint8_t* dst = out + r * row_bytes(target, cols);
            const float* src = f32_rows + r * cols;
            if (target == dtype::q8_0) quantize_q8_0(src, cols, reinterpret_cast<block_q8_0*>(dst));
            else if (target == dtype::f16)
                for (int64_t c = 0; c < cols; ++c) {
                    const uint16_t h = f32_to_f16(src[c]);
                    std::memcpy(dst + 2 * c, &h, 2);
                }
            else
                for (int64_t c = 0; c < cols; ++c) {  // bf16, round to nearest even
                    uint32_t bits;
                    std::memcpy(&bits, &src[c], 4);
                    const uint16_t h = uint16_t((bits + 0x7fff + ((bits >> 16) & 1)) >> 16);
                    std::memcpy(dst + 2 * c, &h, 2);
                }
        }
    }
    return {target, rows, cols, out};
}

const float* weight_store::vector(const raw_tensor& t, int64_t n) {
    if (t.shape != std::vector<int64_t>{n})
        throw error(t.file + ": tensor \"" + t.name + "\" has shape " + shape_str(t.shape) + ", expected [" + std::to_string(n) + "]");
    float* out = reinterpret_cast<float*>(alloc(n * 4, "tensor \"" + t.name + "\""));
    dequantize_row({t.type, 1, n, t.data}, 0, out);
    return out;
}

linear weight_store::lin(const std::vector<std::string>& w, const std::vector<std::string>& b, int64_t out, int64_t in, bool transposed) {
    linear l;
    l.w = matrix(get(w), out, in, transposed);
    if (!b.empty()) l.b = vector(get(b), out);
    return l;
}

norm weight_store::ln(const std::vector<std::string>& g, const std::vector<std::string>& b, int64_t n) {
    return {vector(get(g), n), vector(get(b), n)};
}

}  // namespace wf
