#include "tasks/generation.h"

#include <algorithm>
#include <cmath>

namespace wf {

generation::generation(const pipeline_model& pm, std::string_view prompt, const generation_params& p)
    : pm_(pm), lm_(need_causal_lm(pm, "text-generation")), p_(p), sampler_(p.sampling) {
    if (p.max_new_tokens < 0) throw error("max_new_tokens must be ≥ 0, got " + std::to_string(p.max_new_tokens));
    for (auto& s : p.stop)
        if (s.empty()) throw error("stop strings must not be empty");
    check_text_size(prompt, "prompt: ");
    prompt_ = pm.tok->encode(prompt, true);
    if (prompt_.empty()) {  // an empty prompt starts from the beginning-of-text token, as GPT-2 was trained to begin documents
        if (pm.tok->special().bos < 0) throw error("empty prompt, and the tokenizer has no beginning-of-text token");
        prompt_.push_back(pm.tok->special().bos);
    }
    const int64_t n_ctx = pm.hp().n_ctx;
    if (int64_t(prompt_.size()) >= n_ctx)
        throw error("prompt is " + std::to_string(prompt_.size()) + " tokens; the model has " + std::to_string(n_ctx) +
                    " positions, so at most " + std::to_string(n_ctx - 1) + " fit with room for one new token");
    history_ = prompt_;
    history_.reserve(prompt_.size() + size_t(std::min<int64_t>(p.max_new_tokens, n_ctx)));
    state_ = lm_.new_state(std::min<int64_t>(n_ctx, int64_t(prompt_.size()) + std::max<int64_t>(p.max_new_tokens, 1)));
    if (p.max_new_tokens == 0) finish_reason_ = "max_new_tokens";
}

std::string generation::release_text(bool final) {
    // hold back the longest tail that could still grow into a stop string
    size_t hold = 0;
    if (!final)
        for (const std::string& s : p_.stop)
            for (size_t n = std::min(s.size() - 1, pending_.size()); n > hold; --n)
                if (pending_.compare(pending_.size() - n, n, s, 0, n) == 0) {
                    hold = n;
                    break;
                }
    std::string out = pending_.substr(0, pending_.size() - hold);
    // never cut a character in two
    while (!out.empty() && hold > 0 && (uint8_t(pending_[out.size()]) & 0xC0) == 0x80) out.pop_back();
    pending_.erase(0, out.size());
    emitted_ += out;
    return out;
}

std::optional<generated_token> generation::step(const cancel_fn* cancel, forward_trace* trace) {
    if (finished()) return std::nullopt;
    check_cancel(cancel);
    // run what the model has not seen: the prompt, or the token the last step chose (a cancel leaves it unrun)
    if (!prefilled_) {
        logits_ = lm_.forward(state_, prompt_, false, trace, cancel);
        prefilled_ = true;
    } else if (unrun_) {
        logits_ = lm_.forward(state_, std::span<const int32_t>(&ids_.back(), 1), false, nullptr, cancel);
    }
    unrun_ = false;
    // the state's logits, changed in place: ids the tokenizer cannot name, then penalties; the log-probability
    // is the model's own, read before the changes
    std::span<float> l(state_.logits.data(), logits_.size());
    const double lse = log_sum_exp(l);
    for (int64_t i = pm_.tok->vocab_size(); i < int64_t(l.size()); ++i) l[size_t(i)] = -INFINITY;
    sampler_.apply_penalties(l, history_);
    const int32_t id = sampler_.pick(l);
    const float raw = sampler_.original_logit(l, id);
    generated_token t{id, "", double(std::isnan(raw) ? -INFINITY : raw) - lse};
    ids_.push_back(id);
    history_.push_back(id);
    const bool eos = p_.stop_at_eos && id == pm_.tok->special().eos;
    if (!eos) pending_ += utf8_.push(pm_.tok->token_bytes(id));
    // stop strings
    for (const std::string& s : p_.stop) {
        const size_t hit = pending_.find(s);
        if (hit != std::string::npos) {
            pending_.erase(hit);
            finish_reason_ = "stop";
        }
    }
    if (finish_reason_.empty()) {
        if (eos) finish_reason_ = "eos";
        else if (int64_t(ids_.size()) >= p_.max_new_tokens) finish_reason_ = "max_new_tokens";
        else if (state_.cache.n_past >= state_.cache.capacity()) finish_reason_ = "length";
    }
    if (finished()) {
        if (finish_reason_ != "stop") pending_ += utf8_.finish();
        t.text = release_text(true);
        return t;
    }
    t.text = release_text(false);
    unrun_ = true;
    return t;
}

}  // namespace wf
