#include "nn/weights.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <new>

#include "core/checked.h"
#include "kernels/kernels.h"
#include "kernels/parallel.h"

namespace wf {

dtype_option dtype_option::parse(std::string_view n) {
    std::string s(n);
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    if (s == "auto") return {};
    if (s == "as_stored") return {mode::as_stored};
    if (s == "fp32") s = "f32";
    if (s == "fp16") s = "f16";
    if (s == "q8") s = "q8_0";
    if (s == "q4") s = "q4_0";  // transformers.js's 4-bit name
    // Every type of the table is a conversion target: each has its quantizer (ggml's quantize_row_*_ref) and matmul
    // computes it. storage_plan::convert_all keeps the vocabulary matrices at 6 bits or more (as llama.cpp does).
    if (const auto t = dtype_from_name(s)) return {mode::convert, *t};
    throw error("dtype \"" + std::string(n) +
                "\" is not supported (use auto, as_stored, f32, f16, bf16, q8_0, q6_k, q5_k, q5_1, q5_0, q4_k, q4_1, q4_0, iq4_nl, q3_k "
                "or q2_k)");
}

std::string dtype_option::name() const {
    if (how == mode::automatic) return "auto";
    if (how == mode::as_stored) return "as_stored";
    std::string s = dtype_name(to);
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    return s;
}

storage_plan storage_plan::convert_all(dtype t, int64_t n_vocab) {
    storage_plan p;
    p.as_stored = false;
    for (dtype s : all_dtypes) p.to[size_t(s)] = t;
    // As llama.cpp's 2- to 5-bit files keep the output layer (the token embeddings where they are tied to it) at 6
    // bits or more — every token's score goes through it, and 4-bit error there shows in the choice of tokens — but
    // at q8_0, not llama.cpp's q6_K: here q8_0's integer GEMV runs that matrix about twice as fast as q6_K's (GPT-2
    // small at q4_0, Node, one thread: 32 tokens in 394 ms against 810 ms with a q6_K output layer, 471 ms at q8_0
    // throughout), its quantizer is 3× faster at load, and it is closer to f32 (8.5 bits against 6.56)
    if (n_vocab > 0 && traits(t).block_bytes * 8.0 / traits(t).block < 6.5) p.vocab_rows = n_vocab;
    return p;
}

storage_plan storage_plan::widen_halves() {
    storage_plan p;
    p.as_stored = false;
    for (dtype s : all_dtypes) p.to[size_t(s)] = s == dtype::f16 || s == dtype::bf16 ? dtype::f32 : s;
    return p;
}

// Every type in the table is computed (q4_0 … q6_K and iq4_nl by kernels/quants.h's integer GEMV), so a matrix
// keeps the type it asks for and costs its own size: Q4_K 4.5 bits per weight, Q6_K 6.56, Q4_0 and IQ4_NL 4.5,
// Q8_0 8.5 (a view into the file under as_stored: nothing copied). A row that is not a whole number of the asked
// type's blocks (a K-quant's 256 in a 64-wide model, q8_0's 32 in a 48-wide one) gets llama.cpp's fallback for
// it (q2_K, q3_K → iq4_nl; q4_K → q5_0; q5_K → q5_1; q6_K → q8_0), else the stored type if matmul computes it,
// else f32 (4× a q8_0 row; never reached by the types the engine loads today).
dtype storage_plan::target(dtype stored, int64_t cols, int64_t rows) const {
    dtype t = as_stored ? stored : to[size_t(stored)];
    if (!as_stored && vocab_rows > 0 && rows == vocab_rows) t = kVocabType;
    if (cols % traits(t).block != 0) switch (t) {
        case dtype::q2_k:
        case dtype::q3_k: t = dtype::iq4_nl; break;
        case dtype::q4_k: t = dtype::q5_0; break;
        case dtype::q5_k: t = dtype::q5_1; break;
        case dtype::q6_k: t = dtype::q8_0; break;
        default: break;
        }
    if (cols % traits(t).block != 0) t = traits(stored).computed && cols % traits(stored).block == 0 ? stored : dtype::f32;
    if (!traits(t).computed) t = traits(t).to_q8_0 && cols % q8_block == 0 ? dtype::q8_0 : dtype::f32;
    return t;
}

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

bool weight_store::same(const raw_tensor& a, const raw_tensor& b) {
    return a.data == b.data || (a.n_bytes == b.n_bytes && a.type == b.type && std::memcmp(a.data, b.data, size_t(a.n_bytes)) == 0);
}

uint8_t* weight_store::alloc(int64_t n_bytes, const std::string& what) {
    if (n_bytes > int64_t(SIZE_MAX / 2)) throw error("out of memory: " + what + " needs " + std::to_string(n_bytes) + " bytes");
    uint8_t* p = new (std::nothrow) uint8_t[size_t(std::max<int64_t>(n_bytes, 1))];
    if (!p) throw error("out of memory: could not allocate " + std::to_string(n_bytes) + " bytes for " + what);
    owned_.emplace_back(p);
    owned_bytes_ += n_bytes;
    return p;
}

matrix_view weight_store::matrix(const raw_tensor& t, int64_t rows, int64_t cols, bool transposed, bool convertible, bool groupable) {
    const auto key = std::make_tuple(&t, rows, cols, transposed, uint8_t(convertible | groupable << 1));
    if (auto it = matrices_.find(key); it != matrices_.end()) return it->second;
    matrix_view m = convert(t, rows, cols, transposed, convertible);
    const bool pays = group_rows_pays(m.type) && m.n_rows >= row_group;
    // a q8_0, q4_0, q5_0, iq4_nl or q4_K matrix of the store's own grouped by 4 rows where that reads faster (dtype.h)
    if (m.data != t.data) {
        if (groupable && pays) m.grouped = group_rows(m.type, static_cast<uint8_t*>(const_cast<void*>(m.data)), m.n_rows, m.n_cols);
        return matrices_[key] = m;
    }
    // A view into the file: grouped in place when the plan may rewrite the file's bytes, unless a view of them as stored
    // went out before (groupable = false: a matrix that rows_of splits mid-group); once they are grouped, a view asked
    // for as stored gets a copy of its own (the rows gathered back).
    auto [it, first] = borrowed_grouped_.try_emplace(&t, false);
    if (first && groupable && pays && plan_.rewrite_file_bytes)
        it->second = group_rows(m.type, const_cast<uint8_t*>(t.data), m.n_rows, m.n_cols);  // the file's bytes are writable (load_options)
    if (it->second && groupable) {
        m.grouped = true;
    } else if (it->second) {
        const int64_t rb = row_bytes(m.type, m.n_cols);
        uint8_t* copy = alloc(t.n_bytes, "tensor \"" + t.name + "\"");
        matrix_view g = m;
        g.grouped = true;
        for (int64_t r = 0; r < m.n_rows; ++r)
            if (const uint8_t* row = row_as_stored(g, r, copy + r * rb); row != copy + r * rb) std::memcpy(copy + r * rb, row, size_t(rb));
        m.data = copy;
    }
    return matrices_[key] = m;
}

matrix_view weight_store::convert(const raw_tensor& t, int64_t rows, int64_t cols, bool transposed, bool convertible) {
    if (t.out_in) transposed = false;
    const std::vector<int64_t> want = transposed ? std::vector<int64_t>{cols, rows} : std::vector<int64_t>{rows, cols};
    if (t.shape != want)
        throw error(t.file + ": tensor \"" + t.name + "\" has shape " + shape_str(t.shape) + ", expected " + shape_str(want));
    const dtype target = convertible ? plan_.target(t.type, cols, rows) : storage_plan::keep().target(t.type, cols);
    const std::string what = "tensor \"" + t.name + "\"";
    const int64_t bytes = checked_mul(rows, row_bytes(target, cols), what + " is too large");
    if (!transposed && target == t.type) {
        if (plan_.as_stored) {  // the file's bytes, as they are
            borrows_ = true;
            return {t.type, rows, cols, t.data};
        }
        uint8_t* copy = alloc(t.n_bytes, what);  // own a copy, so the file can be freed
        std::memcpy(copy, t.data, size_t(t.n_bytes));
        return {t.type, rows, cols, copy};
    }
    uint8_t* out = alloc(bytes, what);
    if (!transposed && target == dtype::q8_0 && traits(t.type).to_q8_0) {  // exact re-blocking (q4_0, q5_0, iq4_nl → q8_0)
        for (int64_t r = 0; r < rows; ++r) traits(t.type).to_q8_0(t.data + r * row_bytes(t.type, cols), out + r * row_bytes(target, cols), cols);
        return {target, rows, cols, out};
    }
    // Widen the stored rows to f32 and narrow each result row to the target type: one row at a time; transposed, a
    // band of stored rows at a time into a whole f32 matrix (the transpose kernel), each result row getting the
    // band's values as one run. (Column by column, 4 bytes per cache line, GPT-2 small's f32 load spent 0.67 s
    // transposing; and the buffers are not cleared first: std::vector's resize did that a float at a time in wasm.)
    const matrix_view stored{t.type, transposed ? cols : rows, transposed ? rows : cols, t.data};
    if (!transposed && target == dtype::f32) {
        for (int64_t r = 0; r < rows; ++r) dequantize_row(stored, r, reinterpret_cast<float*>(out) + r * cols);
        return {target, rows, cols, out};
    }
    std::unique_ptr<float[]> all;
    float* f32_rows = nullptr;  // transposed: the whole matrix in f32
    if (transposed) {
        f32_rows = reinterpret_cast<float*>(out);
        if (target != dtype::f32) {
            const size_t n_all = size_t(checked_mul(rows, cols, what + " is too large"));
            all.reset(new (std::nothrow) float[n_all]);
            if (!all) throw error("out of memory: could not allocate " + std::to_string(n_all * 4) + " bytes to convert " + what);
            f32_rows = all.get();
        }
        constexpr int64_t band = 16;
        std::vector<float> lines(size_t(band * rows));  // band stored rows of `rows` values
        for (int64_t r0 = 0; r0 < stored.n_rows; r0 += band) {
            const int64_t nb = std::min(band, stored.n_rows - r0);
            for (int64_t j = 0; j < nb; ++j) dequantize_row(stored, r0 + j, lines.data() + j * rows);
            transpose(lines.data(), nb, rows, rows, f32_rows + r0, cols);
        }
        if (target == dtype::f32) return {target, rows, cols, out};
    }
    // The narrowing, each result row by one thread of the engine's pool (the same bytes whatever their number): ggml's
    // quantizers are slow (q4_K's scale search: GPT-2 small took 12–14 s on one thread in Node, 7.4–8.9 on two).
    parallel_for(rows, std::max<int64_t>(1, 16384 / std::max<int64_t>(cols, 1)), [&](int64_t r0, int64_t r1) {
        std::vector<float> line(f32_rows ? 0 : static_cast<size_t>(cols));  // a stored row widened, one line per thread
        for (int64_t r = r0; r < r1; ++r) {
            const float* src = f32_rows ? f32_rows + r * cols : nullptr;
            if (!src && stored.type == dtype::f32 && reinterpret_cast<uintptr_t>(stored.row(r)) % alignof(float) == 0)
                src = reinterpret_cast<const float*>(stored.row(r));  // an aligned F32 row is read where it is
            if (!src) {
                dequantize_row(stored, r, line.data());
                src = line.data();
            }
            traits(target).from_f32(src, out + r * row_bytes(target, cols), cols);
        }
    });
    return {target, rows, cols, out};
}

const float* weight_store::vector(const raw_tensor& t, int64_t n, bool row_shaped) {
    if (auto it = vectors_.find({&t, n}); it != vectors_.end()) return it->second;
    if (t.shape != std::vector<int64_t>{n} && !(row_shaped && t.shape == std::vector<int64_t>{1, n}))
        throw error(t.file + ": tensor \"" + t.name + "\" has shape " + shape_str(t.shape) + ", expected [" + std::to_string(n) + "]" + (row_shaped ? " or [1, " + std::to_string(n) + "]" : std::string()));
    float* out = reinterpret_cast<float*>(alloc(n * 4, "tensor \"" + t.name + "\""));
    dequantize_row({t.type, 1, n, t.data}, 0, out);
    return vectors_[{&t, n}] = out;
}

linear weight_store::lin(const std::vector<std::string>& w, const std::vector<std::string>& b, int64_t out, int64_t in, bool transposed,
                         bool groupable) {
    linear l;
    l.w = matrix(get(w), out, in, transposed, true, groupable);
    if (!b.empty()) l.b = vector(get(b), out);
    return l;
}

linear rows_of(const linear& l, int64_t first, int64_t n) {
    if (l.w.grouped && (first % row_group != 0 || (n % row_group != 0 && first + n != l.w.n_rows)))
        throw error("internal: a part of a matrix grouped by 4 rows that cuts a group");
    linear part{{l.w.type, n, l.w.n_cols, l.w.row(first)}, l.b ? l.b + first : nullptr};
    part.w.grouped = l.w.grouped;
    return part;
}

norm weight_store::ln(const std::vector<std::string>& g, const std::vector<std::string>& b, int64_t n) {
    return {vector(get(g), n), b.empty() ? nullptr : vector(get(b), n)};
}

}  // namespace wf
