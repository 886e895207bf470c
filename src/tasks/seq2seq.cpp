#include "tasks/seq2seq.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "kernels/kernels.h"
#include "nn/head-screen.h"
#include "tasks/sampling.h"

namespace wf {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kLarge = 1e9f;  // Hugging Face's beam search pushes excluded candidates down by this much

// Hugging Face's logits processors on one sequence's scores, in its order. seq: the decoder ids so far (start token
// first); max_length counts the start token. renormalize = false: only the ones that exclude tokens (for an arg-max).
void process(const seq2seq_params& p, std::span<const int32_t> seq, std::span<float> scores, int64_t max_length, bool renormalize = true) {
    const int64_t cur = int64_t(seq.size()), n = p.no_repeat_ngram_size, V = int64_t(scores.size());
    if (n > 0 && cur + 1 >= n)  // a token that would repeat an n-gram already in the sequence
        for (int64_t i = 0; i + n <= cur; ++i)
            if (std::equal(seq.begin() + i, seq.begin() + i + n - 1, seq.begin() + (cur + 1 - n))) {
                const int32_t banned = seq[size_t(i + n - 1)];
                if (banned < V) scores[size_t(banned)] = -kInf;
            }
    for (const auto& word : p.bad_words_ids) {
        const int32_t last = word.back();
        if (last >= V) continue;
        const int64_t k = int64_t(word.size()) - 1;  // the prefix that must end the sequence
        if (k <= cur && std::equal(word.begin(), word.end() - 1, seq.end() - k)) scores[size_t(last)] = -kInf;
    }
    if (p.forced_eos_token_id >= 0 && p.forced_eos_token_id < V && cur == max_length - 1) {
        std::fill(scores.begin(), scores.end(), -kInf);
        scores[size_t(p.forced_eos_token_id)] = 0.0f;
    }
    if (p.renormalize_logits && renormalize) {
        const float lse = float(log_sum_exp(scores));
        for (float& s : scores) s -= lse;
    }
}

void log_softmax(std::span<const float> logits, std::span<float> out) {
    const float lse = float(log_sum_exp(logits));
    for (size_t i = 0; i < logits.size(); ++i) out[i] = logits[i] - lse;
}

// The cross-attention of sequence b at this step, (n_layer, H, S), from a trace of one decoder step (T = 1).
std::vector<float> step_attention(const forward_trace& t, int64_t b, int64_t per_layer) {
    std::vector<float> out;
    out.reserve(t.cross_attention.size() * size_t(per_layer));
    for (const auto& layer : t.cross_attention) out.insert(out.end(), layer.begin() + b * per_layer, layer.begin() + (b + 1) * per_layer);
    return out;
}

// The indices of the k largest values of v, largest first (ties: the lower index first; NaN ranks as −inf). One pass
// that keeps the k best in order: a value enters only if it beats the k-th, so a vocabulary of tens of thousands per
// beam costs one comparison per entry (a partial sort of all the indices took 5 % of a 4-beam translation).
std::vector<int32_t> top(std::span<const float> v, int64_t k) {
    k = std::min<int64_t>(k, int64_t(v.size()));
    if (k <= 0) return {};
    const auto val = [&](int32_t i) { return std::isnan(v[size_t(i)]) ? -kInf : v[size_t(i)]; };
    const auto better = [&](int32_t a, int32_t b) { return val(a) > val(b) || (val(a) == val(b) && a < b); };
    std::vector<int32_t> best(static_cast<size_t>(k));
    std::iota(best.begin(), best.end(), 0);
    std::sort(best.begin(), best.end(), better);
    float worst = val(best.back());  // to beat (a later index wins no tie; NaN beats nothing)
    const float* d = v.data();
    for (int32_t i = int32_t(k); i < int32_t(v.size()); ++i) {
        if (!(d[i] > worst)) continue;
        auto at = std::upper_bound(best.begin(), best.end() - 1, i, better);
        std::move_backward(at, best.end() - 1, best.end());
        *at = i;
        worst = val(best.back());
    }
    return best;
}

struct beam {
    std::vector<int32_t> ids;
    float score = 0;
    bool done = false;
    std::vector<std::vector<float>> attention;
};

// max_length counts the start token; the decoder reads positions 0 … max_length − 2.
int64_t max_length_of(const seq2seq_params& p, const hparams& hp) { return std::min(p.max_new_tokens, hp.n_ctx) + 1; }

void check_start_token(const seq2seq_params& p, const hparams& hp) {
    if (p.decoder_start_token_id < 0 || p.decoder_start_token_id >= hp.n_vocab)
        throw error("generation: decoder_start_token_id " + std::to_string(p.decoder_start_token_id) + " is not a token of the model (its config.json must give one)");
}

void check_beams(const seq2seq_params& p) {
    if (p.num_beams < 1 || p.num_return_sequences < 1 || p.num_return_sequences > p.num_beams)
        throw error("generation: num_return_sequences (" + std::to_string(p.num_return_sequences) + ") must be in [1, num_beams = " + std::to_string(p.num_beams) + "]");
}

// The settings under which several sources are decoded side by side (greedy_batch, beam_batch).
bool side_by_side(const seq2seq_params& p) { return !p.sampling.do_sample && !p.output_attentions; }

// h's next token `id` (greedy's, sampling's): appended, finish_reason set.
void append(const seq2seq_params& p, seq2seq_hypothesis& h, int32_t id) {
    if (id < 0) throw error("generation: every token is excluded at step " + std::to_string(h.ids.size()));
    h.ids.push_back(id);
    h.finish_reason = id == p.eos_token_id ? "eos" : "length";
}

// h's next token from the decoder's logits for it: Hugging Face's processors, then `pick` (sampling) or the first of
// the largest (greedy); appended with its log-probability under the unprocessed logits, finish_reason set.
int32_t choose_next(const seq2seq_params& p, seq2seq_hypothesis& h, std::span<const float> logits, std::vector<float>& scores,
                    int64_t max_length, sampler* pick) {
    scores.assign(logits.begin(), logits.end());
    process(p, h.ids, scores, max_length);
    // the first of the largest, NaN as −inf
    const int32_t id = pick ? pick->pick(scores) : int32_t(argmax(scores.data(), int64_t(scores.size())));
    if (id >= 0) h.score += log_prob(logits, id);
    append(p, h, id);
    return id;
}

// The output layer's screen where greedy steps take it: no sampling, no score or cross-attention asked for, and a
// model whose output layer has one (nn/head-screen.h).
const head_screen* screen_for(const seq2seq_lm& lm, const seq2seq_params& p) {
    return p.sampling.do_sample || p.output_scores || p.output_attentions ? nullptr : lm.screen();
}

// The greedy choices for the rows x (n, E) of the decoder's output (decode_hidden) over the screened output layer:
// the tokens the full logits choose, without a score. hs[i]: row i's hypothesis.
void choose_screened(const head_screen& sc, const seq2seq_params& p, std::span<seq2seq_hypothesis* const> hs, std::span<const float> x,
                     int64_t max_length, seq2seq_state& st, std::vector<float>& scores) {
    const int64_t n = int64_t(hs.size()), E = int64_t(x.size()) / n, V = sc.copy().n_rows;
    sc.approximate(x.data(), n, st.logits);
    scores.resize(size_t(V));
    for (int64_t i = 0; i < n; ++i) {
        const std::span<float> a(st.logits.data() + i * V, size_t(V));
        sc.exact(x.data() + i * E, a, scores, [&](std::span<float> l) { process(p, hs[size_t(i)]->ids, l, max_length, false); });
        append(p, *hs[size_t(i)], int32_t(argmax(scores.data(), V)));
    }
}

}  // namespace

// One greedy or sampled step: the decoder on the last token, the processors, the choice.
struct seq2seq_session::greedy_state {
    seq2seq_hypothesis h;
    sampler pick;
    std::vector<float> scores;
    forward_trace trace;
    explicit greedy_state(const sampling_params& s) : pick(s) {}
};

namespace {

// Appends the next token to g.h; false once the hypothesis has ended (EOS or max_length) before this call.
bool greedy_step(const seq2seq_lm& lm, seq2seq_state& st, seq2seq_session::greedy_state& g, const seq2seq_params& p, int64_t max_length,
                 int64_t per_layer, const cancel_fn* cancel) {
    seq2seq_hypothesis& h = g.h;
    if (int64_t(h.ids.size()) >= max_length || (h.ids.size() > 1 && h.ids.back() == p.eos_token_id)) return false;
    check_cancel(cancel);
    if (const head_screen* sc = screen_for(lm, p)) {
        seq2seq_hypothesis* const row[1] = {&h};
        choose_screened(*sc, p, row, lm.decode_hidden(st, std::span<const int32_t>(&h.ids.back(), 1), cancel), max_length, st, g.scores);
        return true;
    }
    g.trace.want_cross = p.output_attentions;
    g.trace.cross_attention.clear();
    const std::span<const float> logits = lm.decode(st, std::span<const int32_t>(&h.ids.back(), 1), false, p.output_attentions ? &g.trace : nullptr, cancel);
    choose_next(p, h, logits, g.scores, max_length, p.sampling.do_sample ? &g.pick : nullptr);
    if (p.output_attentions) h.cross_attention.push_back(step_attention(g.trace, 0, per_layer));
    return true;
}

// The vectorized beam search of transformers ≥ 4.50 (GenerationMixin._beam_search), for one source: its num_beams
// rows of the decoder's batch. tokens() gives the rows' last tokens; advance() takes the decoder's logits for them and
// returns each new row's parent row (for the decoder cache's reorder), until done.
class beam_searcher {
public:
    beam_searcher(const seq2seq_params& p, int64_t V, int64_t max_length)
        : p_(p), V_(V), L_(max_length), nb_(p.num_beams), running_(size_t(nb_)), fin_(size_t(nb_)), acc_(size_t(nb_ * V)), logp_(size_t(V)) {
        for (int64_t b = 0; b < nb_; ++b) {
            running_[size_t(b)].ids = {p.decoder_start_token_id};
            running_[size_t(b)].score = b == 0 ? 0.0f : -kLarge;  // the copies of the first beam start out of the running
            fin_[size_t(b)] = {running_[size_t(b)].ids, -kLarge, false, {}};
        }
    }
    bool done() const { return done_; }
    void tokens(std::vector<int32_t>& out) const {
        for (const beam& r : running_) out.push_back(r.ids.back());
    }
    // logits: (num_beams, V) for this searcher's rows; trace (output_attentions): the step's, with these rows from row0
    std::vector<int32_t> advance(std::span<const float> logits, const forward_trace* trace, int64_t row0, int64_t per_layer) {
        const int64_t nb = nb_, V = V_, L = L_, keep = 2 * nb;
        const float lp = p_.length_penalty;
        for (int64_t b = 0; b < nb; ++b) {
            log_softmax(logits.subspan(size_t(b * V), size_t(V)), logp_);
            process(p_, running_[size_t(b)].ids, logp_, L);
            for (int64_t t = 0; t < V; ++t) acc_[size_t(b * V + t)] = logp_[size_t(t)] + running_[size_t(b)].score;
        }
        // the 2·num_beams best continuations over (beam, token)
        const std::vector<int32_t> best = top(acc_, keep);
        std::vector<beam> cand(best.size());
        std::vector<float> run_lp(best.size()), fin_lp(best.size());
        std::vector<int32_t> parent(best.size());
        std::vector<bool> hit(best.size());
        for (size_t i = 0; i < best.size(); ++i) {
            const int32_t src = int32_t(best[i] / V), tok = int32_t(best[i] % V);
            const float s = acc_[size_t(best[i])];
            parent[i] = src;
            cand[i].ids = running_[size_t(src)].ids;
            cand[i].ids.push_back(tok);
            if (trace) {
                cand[i].attention = running_[size_t(src)].attention;
                cand[i].attention.push_back(step_attention(*trace, row0 + src, per_layer));
            }
            hit[i] = tok == p_.eos_token_id || cur_ + 1 >= L;  // ends here: EOS, or the length limit
            run_lp[i] = s + (hit[i] ? -kLarge : 0.0f);
            // a candidate enters the finished list only if it ends here and ranks among the first num_beams
            const bool just = hit[i] && int64_t(i) < nb;
            float f = s / float(std::pow(double(cur_), double(lp)));
            const bool all_done = std::all_of(fin_.begin(), fin_.end(), [](const beam& x) { return x.done; });
            if (all_done && p_.early_stopping == seq2seq_params::stopping::early) f -= kLarge;
            if (!unsatisfied_) f -= kLarge;
            if (!just) f -= kLarge;
            fin_lp[i] = f;
            cand[i].done = just;
        }
        // the running beams: the best num_beams candidates that did not end
        const std::vector<int32_t> next = top(run_lp, nb);
        std::vector<beam> new_running(static_cast<size_t>(nb));
        std::vector<int32_t> parents(static_cast<size_t>(nb));
        for (int64_t b = 0; b < nb; ++b) {
            const size_t i = size_t(next[size_t(b)]);
            new_running[size_t(b)] = {cand[i].ids, run_lp[i], false, cand[i].attention};
            parents[size_t(b)] = parent[i];
        }
        // the finished list: the best num_beams of the old list and the new entries
        std::vector<float> merged_scores;
        for (const beam& f : fin_) merged_scores.push_back(f.score);
        merged_scores.insert(merged_scores.end(), fin_lp.begin(), fin_lp.end());
        std::vector<beam> new_fin(static_cast<size_t>(nb));
        const std::vector<int32_t> order = top(merged_scores, nb);
        for (int64_t k = 0; k < nb; ++k) {
            const size_t i = size_t(order[size_t(k)]);
            if (i < size_t(nb)) new_fin[size_t(k)] = fin_[i];
            else new_fin[size_t(k)] = {cand[i - size_t(nb)].ids, merged_scores[i], cand[i - size_t(nb)].done, cand[i - size_t(nb)].attention};
        }
        fin_ = std::move(new_fin);
        running_ = std::move(new_running);
        ++cur_;
        // can a running beam still beat the worst finished hypothesis?
        const bool all_done = std::all_of(fin_.begin(), fin_.end(), [](const beam& x) { return x.done; });
        const double length = p_.early_stopping == seq2seq_params::stopping::never && lp > 0 ? double(L - 1) : double(cur_ - 1);
        const float best_running = running_[0].score / float(std::pow(length, double(lp)));
        float worst = kInf;
        for (const beam& f : fin_) worst = std::min(worst, f.score);
        bool can_improve = false;
        for (const beam& f : fin_) can_improve = can_improve || best_running > (f.done ? worst : -kLarge);
        unsatisfied_ = unsatisfied_ && can_improve;
        const bool all_hit = std::all_of(hit.begin(), hit.end(), [](bool h) { return h; });
        done_ = !unsatisfied_ || (all_done && p_.early_stopping == seq2seq_params::stopping::early) || all_hit || cur_ >= L;
        return parents;
    }
    // the num_return_sequences best finished hypotheses
    std::vector<seq2seq_hypothesis> results() {
        std::vector<seq2seq_hypothesis> out;
        for (int64_t k = 0; k < p_.num_return_sequences; ++k) {
            beam& f = fin_[size_t(k)];
            seq2seq_hypothesis h;
            h.ids = std::move(f.ids);
            const bool eos = h.ids.size() > 1 && h.ids.back() == p_.eos_token_id;
            if (!eos)  // Hugging Face's rows are padded after their end: trailing padding is not generated text
                while (h.ids.size() > 1 && h.ids.back() == p_.pad_token_id) h.ids.pop_back(), f.attention.pop_back();
            h.score = f.score;
            h.finish_reason = eos ? "eos" : "length";
            h.cross_attention = std::move(f.attention);
            out.push_back(std::move(h));
        }
        return out;
    }

private:
    const seq2seq_params& p_;
    int64_t V_, L_, nb_, cur_ = 1;
    bool unsatisfied_ = true, done_ = false;
    std::vector<beam> running_, fin_;
    std::vector<float> acc_, logp_;
};

std::vector<seq2seq_hypothesis> beam_search(const seq2seq_lm& lm, int64_t V, seq2seq_state& st, const seq2seq_params& p, int64_t max_length,
                                            int64_t per_layer, const cancel_fn* cancel) {
    beam_searcher search(p, V, max_length);
    std::vector<int32_t> step;
    forward_trace trace;
    trace.want_cross = p.output_attentions;
    while (!search.done()) {
        check_cancel(cancel);
        step.clear();
        search.tokens(step);
        trace.cross_attention.clear();
        const std::span<const float> logits = lm.decode(st, step, false, p.output_attentions ? &trace : nullptr, cancel);
        st.self.reorder(search.advance(logits, p.output_attentions ? &trace : nullptr, 0, per_layer));
    }
    return search.results();
}

// Beam search over several sources side by side: each source's num_beams rows in one decoder batch, so each weight
// matrix is read once per step for all of them. A source whose search has ended leaves the batch.
std::vector<std::vector<seq2seq_hypothesis>> beam_batch(const seq2seq_lm& lm, int64_t V, seq2seq_state& st, size_t n, const seq2seq_params& p,
                                                        int64_t max_length, const cancel_fn* cancel) {
    const int64_t nb = p.num_beams;
    std::vector<beam_searcher> search;
    for (size_t i = 0; i < n; ++i) search.emplace_back(p, V, max_length);
    std::vector<int32_t> live(n), step;  // live[k]: the source of the batch's rows [k·nb, (k + 1)·nb)
    std::iota(live.begin(), live.end(), 0);
    while (!live.empty()) {
        check_cancel(cancel);
        step.clear();
        for (int32_t i : live) search[size_t(i)].tokens(step);
        const std::span<const float> logits = lm.decode(st, step, false, nullptr, cancel);
        std::vector<int32_t> parents, rows, sources, keep_live;  // the rows' new parents; the rows kept, their sources
        for (size_t k = 0; k < live.size(); ++k) {
            beam_searcher& s = search[size_t(live[k])];
            const int32_t row0 = int32_t(k * size_t(nb));
            for (int32_t parent : s.advance(logits.subspan(size_t(row0) * size_t(V), size_t(nb * V)), nullptr, 0, 0)) parents.push_back(row0 + parent);
            if (s.done()) continue;
            keep_live.push_back(live[k]);
            for (int64_t b = 0; b < nb; ++b) rows.push_back(row0 + int32_t(b)), sources.push_back(live[k]);
        }
        st.self.reorder(parents);
        if (keep_live.size() < live.size() && !keep_live.empty()) {  // drop the rows of the searches that ended
            st.self.keep_sequences(rows);
            st.seq_sources = std::move(sources);
        }
        live = std::move(keep_live);
    }
    std::vector<std::vector<seq2seq_hypothesis>> out;
    for (beam_searcher& s : search) out.push_back(s.results());
    return out;
}

// Greedy decoding of several sources side by side: one decoder pass per step for all of them, so each weight matrix
// is read once per step for the whole batch instead of once per source. Each source gets the tokens it gets alone
// (seq2seq_generate), up to the float rounding of products over more rows (tests/test-seq2seq.cpp compares them).
// A source that has ended leaves the batch (its rows of the decoder's cache dropped), so the batch shrinks as they end.
std::vector<seq2seq_hypothesis> greedy_batch(const seq2seq_lm& lm, const hparams& hp, seq2seq_state& st, size_t n, const seq2seq_params& p,
                                             int64_t max_length, const cancel_fn* cancel) {
    const int64_t V = hp.n_vocab;
    std::vector<seq2seq_hypothesis> hs(n);
    for (auto& h : hs) h = {{p.decoder_start_token_id}, 0.0, "length", {}};
    std::vector<int32_t> live(n), step;  // live[r]: the source of the batch's row r
    std::iota(live.begin(), live.end(), 0);
    std::vector<float> scores;
    std::vector<seq2seq_hypothesis*> rows;
    while (!live.empty()) {
        check_cancel(cancel);
        step.clear();
        rows.clear();
        for (int32_t i : live) step.push_back(hs[size_t(i)].ids.back()), rows.push_back(&hs[size_t(i)]);
        if (const head_screen* sc = screen_for(lm, p)) {
            choose_screened(*sc, p, rows, lm.decode_hidden(st, step, cancel), max_length, st, scores);
        } else {
            const std::span<const float> logits = lm.decode(st, step, false, nullptr, cancel);
            for (size_t r = 0; r < live.size(); ++r) choose_next(p, *rows[r], logits.subspan(r * size_t(V), size_t(V)), scores, max_length, nullptr);
        }
        std::vector<int32_t> keep_rows, keep_live;
        for (size_t r = 0; r < live.size(); ++r) {
            const seq2seq_hypothesis& h = *rows[r];
            const int32_t id = h.ids.back();
            if (id != p.eos_token_id && int64_t(h.ids.size()) < max_length) keep_rows.push_back(int32_t(r)), keep_live.push_back(live[r]);
        }
        if (keep_rows.size() < live.size() && !keep_rows.empty()) {  // drop the rows that ended
            st.self.keep_sequences(keep_rows);
            st.seq_sources = keep_live;  // row r reads source live[r]
        }
        live = std::move(keep_live);
    }
    return hs;
}

}  // namespace

seq2seq_state join_sources(std::vector<seq2seq_state>&& parts, int64_t per_source) {
    if (parts.empty()) throw error("seq2seq: no sources to join");
    const kv_cache& first = parts[0].cross;
    const int64_t L = first.n_layer(), row = first.row(), capacity = parts[0].self.capacity(), n = int64_t(parts.size());
    int64_t S = 0;
    for (const seq2seq_state& p : parts) {
        if (p.cross.n_layer() != L || p.cross.row() != row || p.cross.n_seq() != 1 || p.self.capacity() != capacity || p.self.n_past != 0 ||
            p.self.n_seq() != 1 || !p.source_lengths.empty())
            throw error("seq2seq: the states to join differ in shape or have decoded already");
        S = std::max(S, p.cross.n_past);
    }
    seq2seq_state st;
    if (per_source < 1) throw error("seq2seq: each source needs a sequence");
    st.self = kv_cache(parts[0].self.n_layer(), n * per_source, capacity, parts[0].self.row());
    st.cross = kv_cache(L, n, S, row);
    for (int64_t i = 0; i < n; ++i) {
        const kv_cache& c = parts[size_t(i)].cross;
        st.source_lengths.push_back(c.n_past);
        for (int64_t b = 0; b < per_source; ++b) st.seq_sources.push_back(int32_t(i));
        for (int64_t l = 0; l < L; ++l) {
            std::copy_n(c.k(l, 0, 0), size_t(c.n_past * row), st.cross.k(l, i, 0));
            std::copy_n(c.v(l, 0, 0), size_t(c.n_past * row), st.cross.v(l, i, 0));
        }
        parts[size_t(i)] = {};  // each part's memory goes as soon as it is copied
    }
    st.cross.n_past = S;
    return st;
}

std::vector<std::vector<seq2seq_hypothesis>> seq2seq_batch(const seq2seq_lm& lm, const hparams& hp, const std::vector<std::span<const int32_t>>& sources,
                                                           const seq2seq_params& p, const cancel_fn* cancel) {
    if (!side_by_side(p)) throw error("generation: decoding sources side by side is greedy or beam search only (no sampling, no output_attentions)");
    check_beams(p);
    check_start_token(p, hp);
    if (sources.empty()) return {};
    const int64_t max_length = max_length_of(p, hp);
    if (max_length < 2) return std::vector<std::vector<seq2seq_hypothesis>>(sources.size(), {seq2seq_hypothesis{{p.decoder_start_token_id}, 0.0, "length", {}}});
    std::vector<seq2seq_state> parts;
    for (const auto& src : sources) parts.push_back(lm.encode_source(src, max_length - 1, 1, nullptr, cancel));
    seq2seq_state st = join_sources(std::move(parts), p.num_beams);
    if (p.num_beams > 1) return beam_batch(lm, hp.n_vocab, st, sources.size(), p, max_length, cancel);
    std::vector<std::vector<seq2seq_hypothesis>> out;
    for (seq2seq_hypothesis& h : greedy_batch(lm, hp, st, sources.size(), p, max_length, cancel)) out.push_back({std::move(h)});
    return out;
}

std::vector<seq2seq_hypothesis> seq2seq_generate(const seq2seq_lm& lm, const hparams& hp, std::span<const int32_t> source, const seq2seq_params& p,
                                                 const seq2seq_stream& on_token, const cancel_fn* cancel) {
    check_start_token(p, hp);
    check_beams(p);
    const int64_t max_length = max_length_of(p, hp);
    if (max_length < 2) return {seq2seq_hypothesis{{p.decoder_start_token_id}, 0.0, "length", {}}};
    seq2seq_state st = lm.encode_source(source, max_length - 1, p.num_beams, nullptr, cancel);
    const int64_t per_layer = hp.n_dec_head * st.n_source();
    if (p.num_beams > 1) return beam_search(lm, hp.n_vocab, st, p, max_length, per_layer, cancel);
    seq2seq_session::greedy_state g(p.sampling);
    g.h.ids = {p.decoder_start_token_id};
    g.h.finish_reason = "length";
    while (greedy_step(lm, st, g, p, max_length, per_layer, cancel))
        if (on_token) on_token(g.h.ids.back());
    return {std::move(g.h)};
}

seq2seq_session::seq2seq_session(const pipeline_model& pm, const std::string& task, std::string_view text, const json& options)
    : pm_(pm), task_(task), lm_(&need_seq2seq_lm(pm, task.c_str())), p_(parse_seq2seq_options(options, pm.seq2seq, task.c_str())) {
    check_text_size(text);
    source_ = pm.tok->encode(text, true);
    if (source_.empty()) throw error(task + ": the text has no tokens");
    if (int64_t(source_.size()) > pm.hp().n_ctx)
        throw error(task + ": the text is " + std::to_string(source_.size()) + " tokens, the model reads at most " + std::to_string(pm.hp().n_ctx));
    max_length_ = max_length_of(p_, pm.hp());
}

seq2seq_session::~seq2seq_session() = default;

std::optional<int32_t> seq2seq_session::step(const cancel_fn* cancel) {
    if (finished()) return std::nullopt;
    if (p_.num_beams > 1 || max_length_ < 2) {  // beam search has no token until it ends: all of it in one step
        results_ = seq2seq_generate(*lm_, pm_.hp(), source_, p_, {}, cancel);
        return std::nullopt;
    }
    if (!greedy_) {  // the encoder, once (a cancel here leaves nothing to go on from: the next step starts again)
        seq2seq_state st = lm_->encode_source(source_, max_length_ - 1, 1, nullptr, cancel);
        state_ = std::make_unique<seq2seq_state>(std::move(st));
        greedy_ = std::make_unique<greedy_state>(p_.sampling);
        greedy_->h.ids = {p_.decoder_start_token_id};
        greedy_->h.finish_reason = "length";
    }
    const int64_t per_layer = pm_.hp().n_dec_head * state_->n_source();
    if (greedy_step(*lm_, *state_, *greedy_, p_, max_length_, per_layer, cancel)) {
        const int32_t id = greedy_->h.ids.back();
        const bool ended = id == p_.eos_token_id || int64_t(greedy_->h.ids.size()) >= max_length_;
        if (ended) results_ = {greedy_->h};
        return id;
    }
    results_ = {greedy_->h};
    return std::nullopt;
}

json seq2seq_session::step_json(const cancel_fn* cancel) {
    const auto id = step(cancel);
    json r = {{"done", finished()}};
    if (id) {
        r["id"] = *id;
        const std::vector<int32_t>& ids = finished() ? results_[0].ids : greedy_->h.ids;  // start token first
        const std::string now = pm_.tok->decode(std::vector<int32_t>(ids.begin() + 1, ids.end()), p_.skip_special_tokens);
        if (now.compare(0, sent_.size(), sent_) == 0) r["text"] = now.substr(sent_.size()), sent_ = now;
    }
    if (finished()) {
        json list = json::array();
        for (const auto& h : results_) list.push_back(seq2seq_hypothesis_json(pm_, task_, source_, h, p_));
        r["results"] = std::move(list);
    }
    return r;
}

json seq2seq_hypothesis_json(const pipeline_model& pm, const std::string& task, std::span<const int32_t> source, const seq2seq_hypothesis& h,
                             const seq2seq_params& p) {
    const tokenizer& tok = *pm.tok;
    const std::vector<int32_t> generated(h.ids.begin() + 1, h.ids.end());
    const char* key = task == "translation" ? "translation_text" : task == "summarization" ? "summary_text" : "generated_text";
    json r = {{key, tok.decode(generated, p.skip_special_tokens)},
              {"finish_reason", h.finish_reason}, {"token_ids", generated}};
    if (p.num_beams > 1 || p.output_scores) r["score"] = h.score;
    if (p.output_attentions) {
        const int64_t L = pm.hp().n_dec_layer, H = pm.hp().n_dec_head, S = int64_t(source.size());
        json src = json::array(), tgt = json::array(), weights = json::array();
        for (int32_t id : source) src.push_back(tok.token_bytes(id));
        for (int32_t id : generated) tgt.push_back(tok.token_bytes(id));
        for (const auto& step : h.cross_attention) {
            json layers = json::array();
            for (int64_t l = 0; l < L; ++l) {
                json heads = json::array();
                for (int64_t hd = 0; hd < H; ++hd) {
                    const float* row = step.data() + (l * H + hd) * S;
                    heads.push_back(std::vector<float>(row, row + S));
                }
                layers.push_back(std::move(heads));
            }
            weights.push_back(std::move(layers));
        }
        r["cross_attentions"] = {{"source_tokens", src}, {"target_tokens", tgt}, {"layers", L}, {"heads", H}, {"weights", weights}};
    }
    return r;
}

json run_seq2seq_task(const pipeline_model& pm, const std::string& task, const std::vector<std::string>& texts, const json& options,
                      const cancel_fn* cancel, bool batch_sources) {
    const seq2seq_lm* lm = &need_seq2seq_lm(pm, task.c_str());
    const seq2seq_params p = parse_seq2seq_options(options, pm.seq2seq, task.c_str());
    const tokenizer& tok = *pm.tok;
    std::vector<std::vector<int32_t>> sources;
    for (size_t i = 0; i < texts.size(); ++i) {
        const std::string which = input_label("text", i, texts.size());
        check_text_size(texts[i], which);
        sources.push_back(tok.encode(texts[i], true));
        if (sources.back().empty()) throw error(which + task + ": the text has no tokens");
        if (int64_t(sources.back().size()) > pm.hp().n_ctx)
            throw error(which + task + ": the text is " + std::to_string(sources.back().size()) + " tokens, the model reads at most " + std::to_string(pm.hp().n_ctx));
    }
    std::vector<std::vector<seq2seq_hypothesis>> out(texts.size());
    if (texts.size() > 1 && side_by_side(p) && (p.num_beams == 1 || pm.loaded.quantized) && batch_sources) {
        // greedy or beam search over a list: the texts decoded side by side, in batches of similar lengths (sorted by
        // source length, as the encoder tasks sort theirs), of kSeq2seqRows decoder rows at most (num_beams a text)
        std::vector<size_t> order(texts.size());
        std::iota(order.begin(), order.end(), size_t(0));
        std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return sources[a].size() < sources[b].size(); });
        const size_t per_batch = std::max<size_t>(1, kSeq2seqRows / size_t(std::max<int64_t>(1, p.num_beams)));
        for (size_t b0 = 0; b0 < order.size(); b0 += per_batch) {
            const size_t b1 = std::min(order.size(), b0 + per_batch);
            std::vector<std::span<const int32_t>> batch;
            for (size_t k = b0; k < b1; ++k) batch.emplace_back(sources[order[k]]);
            auto hs = seq2seq_batch(*lm, pm.hp(), batch, p, cancel);
            for (size_t k = b0; k < b1; ++k) out[order[k]] = std::move(hs[k - b0]);
        }
    } else {
        for (size_t i = 0; i < texts.size(); ++i) out[i] = seq2seq_generate(*lm, pm.hp(), sources[i], p, {}, cancel);
    }
    json results = json::array();
    for (size_t i = 0; i < texts.size(); ++i) {
        json list = json::array();
        for (const seq2seq_hypothesis& h : out[i]) list.push_back(seq2seq_hypothesis_json(pm, task, sources[i], h, p));
        results.push_back(std::move(list));
    }
    return {{"results", results}};
}

}  // namespace wf
