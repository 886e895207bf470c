#include "tasks/fill-mask.h"

#include <algorithm>
#include <cmath>

#include "kernels/kernels.h"

namespace wf {

std::vector<std::vector<std::vector<fill_mask_candidate>>> fill_mask(const pipeline_model& pm, const std::vector<std::string>& texts,
                                                                     const fill_mask_options& opt, forward_trace* trace, const cancel_fn* cancel) {
    const masked_lm& mlm = need_masked_lm(pm, "fill-mask");
    const tokenizer& tok = *pm.tok;
    const int32_t mask = tok.special().mask;
    if (mask < 0) throw error("fill-mask: the tokenizer has no mask token");
    if (opt.top_k < 1) throw error("top_k must be ≥ 1, got " + std::to_string(opt.top_k));
    if (texts.empty()) return {};
    // each text's ids and mask positions; one batch, padded to the longest
    const int64_t B = int64_t(texts.size());
    std::vector<std::vector<int32_t>> ids(texts.size());
    std::vector<std::vector<int64_t>> at(texts.size());
    int64_t T = 0;
    for (size_t b = 0; b < texts.size(); ++b) {
        const std::string which = input_label("text", b, texts.size());
        check_text_size(texts[b], which);
        ids[b] = tok.encode(texts[b], true);
        for (size_t i = 0; i < ids[b].size(); ++i)
            if (ids[b][i] == mask) at[b].push_back(int64_t(i));
        if (at[b].empty()) throw error(which + "no " + tok.token(mask) + " token in the input");
        if (int64_t(ids[b].size()) > pm.hp().max_tokens())
            throw error(which + "input is " + std::to_string(ids[b].size()) + " tokens, the model takes at most " + std::to_string(pm.hp().max_tokens()));
        T = std::max<int64_t>(T, int64_t(ids[b].size()));
    }
    std::vector<int32_t> target_ids;
    for (const std::string& t : opt.targets) {
        const auto tid = tok.encode(t, false);
        if (tid.empty()) throw error("target \"" + t + "\" is no token");
        target_ids.push_back(tid[0]);  // as transformers does: a word of several tokens is scored by its first
    }
    token_batch batch;
    batch.n_seq = B;
    batch.n_tokens = T;
    const int32_t pad = std::max(tok.special().pad, 0);
    for (auto& v : ids) {
        batch.lengths.push_back(int64_t(v.size()));
        batch.ids.insert(batch.ids.end(), v.begin(), v.end());
        batch.ids.insert(batch.ids.end(), size_t(T) - v.size(), pad);
    }
    for (int64_t b = 0; b < B; ++b)  // the last layer at the masks only
        for (int64_t p : at[size_t(b)]) batch.out_rows.push_back(b * T + p);
    const int64_t E = pm.hp().n_embd, V = pm.hp().n_vocab;
    int64_t n = 0;
    for (auto& a : at) n += int64_t(a.size());
    arena scratch;
    std::vector<float> h(size_t(B * T * E)), rows(size_t(n * E)), logits(size_t(n * V));
    mlm.encode(batch, h.data(), scratch, trace, cancel);
    int64_t r = 0;
    for (int64_t b = 0; b < B; ++b)
        for (int64_t p : at[size_t(b)]) std::copy_n(h.begin() + (b * T + p) * E, E, rows.begin() + r++ * E);
    mlm.mlm_logits(rows.data(), n, logits.data(), scratch);  // the head at the masks only

    std::vector<std::vector<std::vector<fill_mask_candidate>>> out(texts.size());
    r = 0;
    for (size_t b = 0; b < texts.size(); ++b)
        for (size_t m = 0; m < at[b].size(); ++m, ++r) {
            float* l = logits.data() + r * V;
            for (int64_t i = 0; i < V; ++i)
                if (std::isnan(l[i])) l[i] = -INFINITY;
            // probabilities over all V rows, as Hugging Face's pipeline computes them (ModernBERT's embedding has
            // rows past its tokenizer's last id); the candidates are the ids the tokenizer can name
            softmax(l, V);
            std::vector<int32_t> cand = target_ids;
            if (cand.empty()) {
                cand.resize(size_t(std::min(V, tok.vocab_size())));
                for (size_t i = 0; i < cand.size(); ++i) cand[i] = int32_t(i);
            }
            const size_t k = std::min(size_t(opt.top_k), cand.size());
            std::partial_sort(cand.begin(), cand.begin() + long(k), cand.end(), [&](int32_t a, int32_t c) { return l[a] != l[c] ? l[a] > l[c] : a < c; });
            std::vector<fill_mask_candidate> list;
            for (size_t i = 0; i < k; ++i) {
                std::vector<int32_t> filled = ids[b];
                filled[size_t(at[b][m])] = cand[i];
                // as transformers does: special tokens are kept in the sequence when the input has several masks
                list.push_back({double(l[cand[i]]), cand[i], tok.decode({cand[i]}), tok.decode(filled, at[b].size() == 1)});
            }
            out[b].push_back(std::move(list));
        }
    return out;
}

std::vector<std::vector<fill_mask_candidate>> fill_mask(const pipeline_model& pm, std::string_view text, const fill_mask_options& opt,
                                                        forward_trace* trace, const cancel_fn* cancel) {
    return std::move(fill_mask(pm, std::vector<std::string>{std::string(text)}, opt, trace, cancel)[0]);
}

}  // namespace wf
