#include "tasks/fill-mask.h"

#include <algorithm>
#include <cmath>

#include "kernels/kernels.h"

namespace wf {

std::vector<std::vector<fill_mask_candidate>> fill_mask(const pipeline_model& pm, std::string_view text, const fill_mask_options& opt,
                                                        forward_trace* trace, const cancel_fn* cancel) {
    const masked_lm& mlm = need_masked_lm(pm, "fill-mask");
    const tokenizer& tok = *pm.tok;
    const int32_t mask = tok.special().mask;
    if (mask < 0) throw error("fill-mask: the tokenizer has no mask token");
    if (opt.top_k < 1) throw error("top_k must be ≥ 1, got " + std::to_string(opt.top_k));
    const std::vector<int32_t> ids = tok.encode(text, true);
    std::vector<int64_t> at;
    for (size_t i = 0; i < ids.size(); ++i)
        if (ids[i] == mask) at.push_back(int64_t(i));
    if (at.empty()) throw error("no " + tok.token(mask) + " token in the input");
    if (int64_t(ids.size()) > pm.hp().n_ctx)
        throw error("input is " + std::to_string(ids.size()) + " tokens, the model takes at most " + std::to_string(pm.hp().n_ctx));
    std::vector<int32_t> target_ids;
    for (const std::string& t : opt.targets) {
        const auto tid = tok.encode(t, false);
        if (tid.empty()) throw error("target \"" + t + "\" is no token");
        target_ids.push_back(tid[0]);  // as transformers does: a word of several tokens is scored by its first
    }
    const int64_t E = pm.hp().n_embd, V = pm.hp().n_vocab, T = int64_t(ids.size()), n = int64_t(at.size());
    arena scratch;
    std::vector<float> h(size_t(T * E)), rows(size_t(n * E)), logits(size_t(n * V));
    mlm.encode(token_batch::one(ids), h.data(), scratch, trace, cancel);
    for (int64_t m = 0; m < n; ++m) std::copy_n(h.begin() + at[size_t(m)] * E, E, rows.begin() + m * E);
    mlm.mlm_logits(rows.data(), n, logits.data(), scratch);  // the head at the masks only

    std::vector<std::vector<fill_mask_candidate>> out;
    for (int64_t m = 0; m < n; ++m) {
        float* l = logits.data() + m * V;
        for (int64_t i = tok.vocab_size(); i < V; ++i) l[i] = -INFINITY;  // rows the tokenizer cannot name
        for (int64_t i = 0; i < V; ++i)
            if (std::isnan(l[i])) l[i] = -INFINITY;
        softmax(l, V);
        std::vector<int32_t> cand = target_ids;
        if (cand.empty()) {
            cand.resize(size_t(V));
            for (int64_t i = 0; i < V; ++i) cand[size_t(i)] = int32_t(i);
        }
        const size_t k = std::min(size_t(opt.top_k), cand.size());
        std::partial_sort(cand.begin(), cand.begin() + long(k), cand.end(), [&](int32_t a, int32_t b) { return l[a] != l[b] ? l[a] > l[b] : a < b; });
        std::vector<fill_mask_candidate> list;
        for (size_t i = 0; i < k; ++i) {
            std::vector<int32_t> filled = ids;
            filled[size_t(at[size_t(m)])] = cand[i];
            // as transformers does: special tokens are kept in the sequence when the input has several masks
            list.push_back({double(l[cand[i]]), cand[i], tok.decode({cand[i]}), tok.decode(filled, n == 1)});
        }
        out.push_back(std::move(list));
    }
    return out;
}

}  // namespace wf
