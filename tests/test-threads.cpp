// The thread pool: every range covered once, errors carried back, and results bit-identical to one thread —
// for the kernels it splits (matmul columns, attention heads, GELU ranges) and for whole models.
#include <catch2/catch.hpp>
#include <atomic>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <thread>

#include "helpers.h"
#include "nn/ops.h"
#include "nn/weights.h"
#include "tasks/fill-mask.h"
#include "tasks/generation.h"

namespace {

// WF_TEST_THREADS: 1 where threads can start (native, the pthreads wasm build), 0 in the single-thread wasm build,
// where the pool keeps to the caller and every test below still runs, on one thread.
constexpr bool threads_here = WF_TEST_THREADS;

// Restores one thread when a test ends, whatever happens in it.
struct with_threads {
    int got;
    explicit with_threads(int n) : got(wf::set_thread_count(n)) {}
    ~with_threads() { wf::set_thread_count(1); }
};

}  // namespace

TEST_CASE("parallel_for covers [0, n) exactly once in grain-sized ranges", "[threads]") {
    for (int t : {1, 2, 3, 5}) {
        with_threads w(t);
        REQUIRE(w.got == (threads_here ? t : 1));
        REQUIRE(wf::thread_count() == w.got);
        for (int64_t n : {1, 2, 7, 8, 9, 63, 64, 65, 1000, 4099})
            for (int64_t grain : {1, 4, 8, 64}) {
                std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
                std::atomic<int> bad{0};
                wf::parallel_for(n, grain, [&](int64_t b, int64_t e) {
                    if (b < 0 || e > n || b >= e || (b % grain != 0) || ((e - b) % grain != 0 && e != n)) ++bad;
                    for (int64_t i = b; i < e; ++i) ++hits[size_t(i)];
                });
                REQUIRE(bad == 0);
                for (auto& h : hits) REQUIRE(h == 1);
            }
    }
}

TEST_CASE("parallel_for rethrows the first error and the pool stays usable", "[threads]") {
    with_threads w(3);
    for (int round = 0; round < 3; ++round) {
        std::atomic<int64_t> done{0};
        REQUIRE_THROWS_WITH(wf::parallel_for(1000, 10, [&](int64_t b, int64_t e) {
                                done += e - b;
                                if (b <= 500 && 500 < e) throw std::runtime_error("range with 500 failed");
                            }),
                            "range with 500 failed");
        REQUIRE(done == 1000);  // every range ran before the error came back
        std::atomic<int64_t> sum{0};
        wf::parallel_for(100, 1, [&](int64_t b, int64_t e) {
            for (int64_t i = b; i < e; ++i) sum += i;
        });
        REQUIRE(sum == 4950);
    }
}

TEST_CASE("parallel_for wakes sleeping threads and waits for slow ones", "[threads]") {
    // The pool's threads spin a while (~0.1–0.3 ms) and then sleep: here the workers fall asleep between operations
    // (the caller pauses longer than the spin) and the caller falls asleep waiting for a range that takes longer, in
    // turn with operations back to back (no one sleeps); every operation must return only after all its ranges ran.
    with_threads w(3);
    for (int round = 0; round < 40; ++round) {
        if (round % 4 == 1) std::this_thread::sleep_for(std::chrono::milliseconds(3));
        std::atomic<int64_t> sum{0};
        wf::parallel_for(64, 1, [&](int64_t b, int64_t e) {
            if (round % 4 == 2 && b <= 63 && 63 < e) std::this_thread::sleep_for(std::chrono::milliseconds(3));
            for (int64_t i = b; i < e; ++i) sum += i;
        });
        REQUIRE(sum == 2016);
    }
}

TEST_CASE("threaded matmul, attention, GELU and layer norm are bit-identical to one thread", "[threads]") {
    uint32_t seed = 7;
    for (wf::dtype type : {wf::dtype::f32, wf::dtype::f16, wf::dtype::bf16, wf::dtype::q8_0})
        for (int64_t M : {1, 3, 4, 17})
            for (int64_t N : {33, 769}) {
                const int64_t K = 96;
                const auto wv = wft::random_floats(size_t(N * K), seed++);
                const auto x = wft::random_floats(size_t(M * K), seed++);
                const auto bias = wft::random_floats(size_t(N), seed++);
                wft::stored_matrix W(wv, N, K, type);
                std::vector<float> y1(size_t(M * N)), y3(size_t(M * N), -1.0f);
                wf::apply(wf::linear{W.view, bias.data()}, x.data(), M, y1.data());
                with_threads w(3);
                wf::apply(wf::linear{W.view, bias.data()}, x.data(), M, y3.data());
                INFO(wf::dtype_name(type) << " M=" << M << " N=" << N);
                REQUIRE(std::memcmp(y1.data(), y3.data(), y1.size() * 4) == 0);
            }
    const int64_t T = 37, H = 5, D = 24, E = H * D;
    const auto q = wft::random_floats(size_t(T * E), seed++), k = wft::random_floats(size_t(T * E), seed++),
               v = wft::random_floats(size_t(T * E), seed++);
    for (bool causal : {false, true}) {
        std::vector<float> o1(size_t(T * E)), o3(size_t(T * E), -1.0f), p1(size_t(H * T * T)), p3(size_t(H * T * T), -1.0f);
        wf::attention_args a{q.data(), E, k.data(), E, v.data(), E, o1.data(), E, T, T, int(H), int(D), 0.2f};
        a.causal = causal;
        a.probs = p1.data();
        wf::attend(a, nullptr, 0);
        with_threads w(3);
        a.out = o3.data();
        a.probs = p3.data();
        wf::attend(a, nullptr, 0);
        REQUIRE(std::memcmp(o1.data(), o3.data(), o1.size() * 4) == 0);
        REQUIRE(std::memcmp(p1.data(), p3.data(), p1.size() * 4) == 0);
    }
    auto g1 = wft::random_floats(100003, seed++), g3 = g1;
    wf::activate(wf::activation::gelu_tanh, g1.data(), int64_t(g1.size()));
    {
        with_threads w(4);
        wf::activate(wf::activation::gelu_tanh, g3.data(), int64_t(g3.size()));
    }
    REQUIRE(std::memcmp(g1.data(), g3.data(), g1.size() * 4) == 0);
    // layer norm, rows split (97 × 771: above the size that splits), with and without a bias, and in place
    const int64_t R = 97, C = 771;
    const auto ln_x = wft::random_floats(size_t(R * C), seed++), gamma = wft::random_floats(size_t(C), seed++),
               beta = wft::random_floats(size_t(C), seed++);
    for (const float* b : {beta.data(), static_cast<const float*>(nullptr)}) {
        const wf::norm n{gamma.data(), b};
        std::vector<float> l1(ln_x.size()), l3(ln_x.size(), -1.0f), in_place = ln_x;
        wf::apply(n, 1e-5f, ln_x.data(), R, C, l1.data());
        with_threads w(3);
        wf::apply(n, 1e-5f, ln_x.data(), R, C, l3.data());
        wf::apply(n, 1e-5f, in_place.data(), R, C, in_place.data());
        REQUIRE(std::memcmp(l1.data(), l3.data(), l1.size() * 4) == 0);
        REQUIRE(std::memcmp(l1.data(), in_place.data(), l1.size() * 4) == 0);
    }
}

TEST_CASE("load-time conversion gives the same bytes on one and on three threads", "[threads]") {
    // each result row is narrowed by one thread: from f32 and f16, straight and transposed (GPT-2's Conv1D), to
    // q4_K (ggml's scale search), q8_0 and q4_0 (rows grouped in wasm), 150 rows of 256 in ranges of 64 rows (the
    // grain); f32 results, widened on the caller alone, are there to show that path unchanged by the pool
    struct source : wft::memory_source {
        std::vector<float> a;
        std::vector<uint16_t> b;
    } src;
    src.a = wft::random_floats(size_t(150 * 256), 21, -2.0f, 2.0f);
    for (float v : src.a) src.b.push_back(wf::f32_to_f16(v));
    src.ts.push_back({"a", "m.safetensors", wf::dtype::f32, {150, 256}, reinterpret_cast<const uint8_t*>(src.a.data()), int64_t(src.a.size() * 4)});
    src.ts.push_back({"b", "m.safetensors", wf::dtype::f16, {150, 256}, reinterpret_cast<const uint8_t*>(src.b.data()), int64_t(src.b.size() * 2)});
    src.ts.push_back({"t", "m.safetensors", wf::dtype::f32, {256, 150}, reinterpret_cast<const uint8_t*>(src.a.data()), int64_t(src.a.size() * 4)});
    for (wf::dtype t : {wf::dtype::q4_k, wf::dtype::q8_0, wf::dtype::q4_0, wf::dtype::f32})
        for (int i = 0; i < 3; ++i) {
            INFO(wf::dtype_name(t) << ", tensor " << src.ts[size_t(i)].name);
            // both stores alive at once: the second's memory is never the first's, freed and taken again
            wf::weight_store s1(src, wf::storage_plan::convert_all(t, 100000)), s3(src, wf::storage_plan::convert_all(t, 100000));
            const wf::matrix_view one = s1.matrix(src.ts[size_t(i)], 150, 256, i == 2);
            with_threads w(3);
            REQUIRE(w.got == (threads_here ? 3 : 1));
            const wf::matrix_view three = s3.matrix(src.ts[size_t(i)], 150, 256, i == 2);
            REQUIRE((one.type == t && three.type == t));
            REQUIRE(std::memcmp(one.data, three.data, size_t(150 * wf::row_bytes(t, 256))) == 0);
        }
}

TEST_CASE("whole models give the same results on one and on three threads", "[threads]") {
    // the bundled models: large enough that every operation is split
    const auto bert = wf::load_pipeline_model(wft::read_dir(std::string(WF_SOURCE_DIR) + "/models/wasmformer-bert-mini"));
    const auto gpt2 = wf::load_pipeline_model(wft::read_dir(std::string(WF_SOURCE_DIR) + "/models/wasmformer-gpt2-mini"));
    auto run = [&] {
        wf::fill_mask_options fo;
        fo.top_k = 5;
        std::string out;
        for (auto& list : wf::fill_mask(bert, "And God said, Let there be [MASK]: and there was light.", fo))
            for (auto& c : list) out += c.token_str + "=" + std::to_string(c.score) + " ";
        wf::generation_params p;
        p.max_new_tokens = 24;
        p.sampling.do_sample = true;
        p.sampling.seed = 11;
        wf::generation g(gpt2, "It is a truth universally acknowledged", p);
        while (auto t = g.step()) out += t->text;
        return out;
    };
    const std::string one = run();
    with_threads w(3);
    REQUIRE(run() == one);
}
