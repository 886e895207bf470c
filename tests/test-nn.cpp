// The shared pieces models are built from: batched encoding (padding never leaks into a sequence), sequences
// decoded side by side (beams), the KV cache's beam reordering, the scratch arena, and decode steps that allocate
// nothing once warm.
#include <catch2/catch.hpp>

#include <atomic>
#include <cstdlib>
#include <new>

#include "helpers.h"
#include "models/registry.h"

// Every allocation in this test program is counted (the counter is read around the code under test only).
namespace {
std::atomic<int64_t> g_allocations{0};
}
void* operator new(size_t n) {
    ++g_allocations;
    if (void* p = std::malloc(n ? n : 1)) return p;
    throw std::bad_alloc();
}
void* operator new(size_t n, const std::nothrow_t&) noexcept {
    ++g_allocations;
    return std::malloc(n ? n : 1);
}
void* operator new[](size_t n) { return operator new(n); }
void* operator new[](size_t n, const std::nothrow_t& t) noexcept { return operator new(n, t); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete[](void* p, size_t) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }

namespace {
wf::loaded_model load(const char* fixture) { return wf::load_model(wft::read_dir(wft::data_path(fixture))); }

// A cache whose every key row is 100·layer + 10·sequence + position (the value rows the same, negated).
wf::kv_cache numbered_cache(int64_t layers, int64_t seqs, int64_t capacity, int64_t row) {
    wf::kv_cache c(layers, seqs, capacity, row);
    for (int64_t l = 0; l < layers; ++l)
        for (int64_t s = 0; s < seqs; ++s)
            for (int64_t p = 0; p < capacity; ++p)
                for (int64_t e = 0; e < row; ++e) c.k(l, s, p)[e] = float(100 * l + 10 * s + p), c.v(l, s, p)[e] = -float(100 * l + 10 * s + p);
    return c;
}
}  // namespace

TEST_CASE("a padded batch encodes each sequence as if it were alone", "[nn][bert]") {
    const wf::loaded_model lm = load("fixtures/bert-tiny");
    const wf::encoder& enc = *lm.m->as_encoder();
    const int64_t E = lm.m->hp().n_embd;
    const std::vector<std::vector<int32_t>> seqs = {{101, 7592, 2088, 102}, {101, 2023, 2003, 1037, 2936, 6251, 2007, 2062, 102}, {101, 102}};
    const int64_t T = 9;
    wf::token_batch b;
    b.n_seq = int64_t(seqs.size());
    b.n_tokens = T;
    for (auto& s : seqs) {
        b.lengths.push_back(int64_t(s.size()));
        for (int64_t t = 0; t < T; ++t) b.ids.push_back(t < int64_t(s.size()) ? s[size_t(t)] : 0);
    }
    wf::arena scratch;
    std::vector<float> all(size_t(b.n_seq * T * E));
    enc.encode(b, all.data(), scratch);
    for (size_t i = 0; i < seqs.size(); ++i) {
        std::vector<float> one(seqs[i].size() * size_t(E));
        enc.encode(wf::token_batch::one(seqs[i]), one.data(), scratch);
        INFO("sequence " << i);
        REQUIRE(wft::max_abs_diff(one.data(), all.data() + i * size_t(T * E), one.size()) < 1e-5);
    }
    b.lengths[1] = 10;
    REQUIRE_THROWS_WITH(enc.encode(b, all.data(), scratch), Catch::Contains("sequence length 10 is outside [1, 9]"));
}

TEST_CASE("sequences decoded side by side equal each decoded alone, and beams reorder", "[nn][gpt2]") {
    const wf::loaded_model lm = load("fixtures/gpt2-tiny");
    const wf::causal_lm& m = *lm.m->as_causal_lm();
    const int64_t V = lm.m->hp().n_vocab;
    const std::vector<int32_t> a = {464, 3290, 373, 1043}, b = {40, 1842, 262, 3797};
    auto both = m.new_state(16, 2);
    std::vector<int32_t> ab(a);
    ab.insert(ab.end(), b.begin(), b.end());
    const auto lb = m.forward(both, ab);
    REQUIRE(lb.size() == size_t(2 * V));
    const std::vector<float> first(lb.begin(), lb.end());
    for (int s = 0; s < 2; ++s) {
        auto one = m.new_state(16);
        const auto l1 = m.forward(one, s == 0 ? a : b);
        REQUIRE(wft::max_abs_diff(l1.data(), first.data() + s * V, size_t(V)) < 1e-5);
    }
    // swap the beams, then step both: each continues the other's history
    const int32_t parents[] = {1, 0};
    both.cache.reorder(parents);
    const int32_t next[] = {11, 13};
    const auto l2 = m.forward(both, next);
    for (int s = 0; s < 2; ++s) {
        auto one = m.new_state(16);
        m.forward(one, s == 0 ? b : a);  // sequence 0 now holds b's history
        const auto l1 = m.forward(one, std::span<const int32_t>(next + s, 1));
        REQUIRE(wft::max_abs_diff(l1.data(), l2.data() + s * V, size_t(V)) < 1e-5);
    }
    REQUIRE_THROWS_WITH(m.forward(both, std::span<const int32_t>(next, 1)), Catch::Contains("do not split into 2 sequences"));
}

TEST_CASE("kv_cache::reorder copies whole sequences from their parents", "[nn]") {
    wf::kv_cache c = numbered_cache(2, 3, 4, 5);
    c.n_past = 3;
    const int32_t parents[] = {2, 0, 0};
    c.reorder(parents);
    for (int64_t l = 0; l < 2; ++l)
        for (int64_t s = 0; s < 3; ++s)
            for (int64_t p = 0; p < 3; ++p) {
                REQUIRE(c.k(l, s, p)[4] == float(100 * l + 10 * parents[s] + p));
                REQUIRE(c.v(l, s, p)[0] == -float(100 * l + 10 * parents[s] + p));
            }
    const int32_t bad[] = {0, 3, 1};
    REQUIRE_THROWS_WITH(c.reorder(bad), Catch::Contains("parent 3 is not a sequence"));
}

TEST_CASE("kv_cache::keep_sequences keeps the rows asked for, in order, and the cache stays writable", "[nn]") {
    wf::kv_cache c = numbered_cache(3, 4, 5, 2);
    c.n_past = 4;
    const int32_t rows[] = {1, 3};
    c.keep_sequences(rows);
    REQUIRE(c.n_seq() == 2);
    REQUIRE(c.n_past == 4);
    for (int64_t l = 0; l < 3; ++l)
        for (int64_t i = 0; i < 2; ++i)
            for (int64_t p = 0; p < 4; ++p) {
                REQUIRE(c.k(l, i, p)[1] == float(100 * l + 10 * rows[i] + p));
                REQUIRE(c.v(l, i, p)[0] == -float(100 * l + 10 * rows[i] + p));
            }
    c.k(2, 1, 4)[1] = 7.0f;  // the last position of the last row: inside the smaller cache
    REQUIRE(c.k(2, 1, 4)[1] == 7.0f);
    const int32_t unordered[] = {1, 0}, outside[] = {2};
    REQUIRE_THROWS_WITH(c.keep_sequences(unordered), Catch::Contains("increasing sequences"));
    REQUIRE_THROWS_WITH(c.keep_sequences(outside), Catch::Contains("increasing sequences"));
    REQUIRE(c.n_seq() == 2);  // a refused call changes nothing
}

TEST_CASE("the arena hands out aligned, disjoint memory and settles into one block", "[nn]") {
    wf::arena a;
    float* x = a.alloc<float>(10);
    float* y = a.alloc<float>(1000);
    REQUIRE(reinterpret_cast<uintptr_t>(x) % 64 == 0);
    REQUIRE(reinterpret_cast<uintptr_t>(y) % 64 == 0);
    REQUIRE((y >= x + 10 || y + 1000 <= x));
    for (int i = 0; i < 1000; ++i) y[i] = float(i);
    a.reset();
    REQUIRE(a.block_count() == 1);
    const auto before = g_allocations.load();
    for (int round = 0; round < 3; ++round) {
        a.reset();
        a.alloc<float>(10);
        a.alloc<float>(1000);
    }
    REQUIRE(g_allocations.load() == before);
}

TEST_CASE("decode steps allocate nothing once the state is warm", "[nn][gpt2]") {
    const wf::loaded_model lm = load("fixtures/gpt2-tiny");
    const wf::causal_lm& m = *lm.m->as_causal_lm();
    auto s = m.new_state(32);
    const int32_t prompt[] = {464, 3290, 373};
    m.forward(s, prompt);
    int32_t id = 11;
    m.forward(s, std::span<const int32_t>(&id, 1));  // the first step at this size
    const auto probe = g_allocations.load();
    REQUIRE(std::make_unique<std::vector<float>>(100) != nullptr);
    REQUIRE(g_allocations.load() > probe);  // the counter sees allocations
    const auto before = g_allocations.load();
    for (int i = 0; i < 8; ++i) m.forward(s, std::span<const int32_t>(&id, 1));
    REQUIRE(g_allocations.load() - before == 0);
}
