#include "tasks/generation.h"

#include <algorithm>
#include <cmath>

#include "nn/head-screen.h"

namespace wf {

// ------------------------------------------------------------------------------------------------------- chat
namespace {
const char* json_kind(const json& v) {
    switch (v.type()) {
    case json::value_t::string: return "a string";
    case json::value_t::boolean: return "a boolean";
    case json::value_t::array: return "a list";
    case json::value_t::object: return "an object";
    case json::value_t::null: return "null";
    case json::value_t::number_float: return "a number";
    default: return "an integer";
    }
}
std::string shown(const json& v) { return v.dump(-1, ' ', false, json::error_handler_t::replace).substr(0, 40) + " (" + json_kind(v) + ")"; }
bool is_template_text(const std::string& s) { return s.find("{{") != std::string::npos || s.find("{%") != std::string::npos; }
}  // namespace

void check_chat_messages(const json& messages) {
    if (!messages.is_array()) throw error("messages must be a list of {role, content} objects, got " + shown(messages));
    if (messages.empty()) throw error("messages: the conversation is empty (give at least one {role, content} message)");
    for (size_t i = 0; i < messages.size(); ++i) {
        const json& m = messages[i];
        const std::string at = "messages[" + std::to_string(i) + "]";
        if (!m.is_object()) throw error(at + " must be an object {role, content}, got " + shown(m));
        if (!m.contains("role")) throw error(at + " has no role (give {role: 'user', content: '…'})");
        if (!m["role"].is_string()) throw error(at + ".role must be a string such as 'user', got " + shown(m["role"]));
        if (m["role"].get<std::string>().empty()) throw error(at + ".role is empty");
        const bool tool_calls = m.contains("tool_calls") && !m["tool_calls"].is_null();
        if (!m.contains("content")) {
            if (!tool_calls) throw error(at + " has no content (give content, or tool_calls for a tool call)");
        } else if (const json& c = m["content"]; !(c.is_string() || c.is_array() || (c.is_null() && tool_calls))) {
            throw error(at + ".content must be a string or a list of parts ({type: 'text', text}), got " + shown(c));
        }
    }
}

chat_template_choice chat_template_for(const chat_config& c, const chat_options& o) {
    auto named = [&](const std::string& n) -> const std::string* {
        for (auto& [name, t] : c.templates)
            if (name == n) return &t;
        return nullptr;
    };
    std::string names;
    for (auto& [name, t] : c.templates) names += (names.empty() ? "" : ", ") + name;
    if (!o.chat_template.empty()) {
        if (const std::string* t = named(o.chat_template)) return {o.chat_template, *t, c.special_tokens};
        if (is_template_text(o.chat_template)) return {"", o.chat_template, c.special_tokens};
        throw error("chat_template \"" + o.chat_template.substr(0, 60) + "\" is neither a template (no {{ or {%) nor the name of one of the model's (" +
                    (names.empty() ? "it has none" : "it has: " + names) + ")");
    }
    if (c.templates.empty())
        throw error("chat messages need a chat template, and this model has none (no chat_template in tokenizer_config.json, no chat_template.jinja, "
                    "no tokenizer.chat_template in its GGUF): give one with the chat_template option");
    if (o.tools)
        if (const std::string* t = named("tool_use")) return {"tool_use", *t, c.special_tokens};
    if (const std::string* t = named("default")) return {"default", *t, c.special_tokens};
    if (c.templates.size() == 1) return {c.templates[0].first, c.templates[0].second, c.special_tokens};
    throw error("this model has several chat templates and none named \"default\": choose one with the chat_template option (" + names + ")");
}

json chat_template_json(const chat_config& c, const json& messages, const json& options) {
    const chat_options o = parse_chat_options(options);
    check_chat_messages(messages);
    const chat_template_choice t = chat_template_for(c, o);
    return {{"template", t.source}, {"template_name", t.name}, {"special_tokens", t.special_tokens}};
}

generation::generation(const pipeline_model& pm, std::string_view prompt, const generation_params& p, generation_cache prior)
    : pm_(pm), lm_(need_causal_lm(pm, "text-generation")), p_(p), sampler_(p.sampling) {
    if (p.max_new_tokens < 0) throw error("max_new_tokens must be ≥ 0, got " + std::to_string(p.max_new_tokens));
    for (auto& s : p.stop)
        if (s.empty()) throw error("stop strings must not be empty");
    for (const int32_t id : p.stop_token_ids)
        if (id < 0 || id >= pm.tok->vocab_size())
            throw error("stop_token_ids: " + std::to_string(id) + " is not a token id (vocabulary of " + std::to_string(pm.tok->vocab_size()) + ")");
    check_text_size(prompt, "prompt: ");
    prompt_ = pm.tok->encode(prompt, p.add_special_tokens);
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
    const int64_t capacity = std::min<int64_t>(n_ctx, int64_t(prompt_.size()) + std::max<int64_t>(p.max_new_tokens, 1));
    // the prior cache's common prefix with this prompt (its last token runs again, for its logits)
    size_t common = 0;
    if (p.reuse_cache && p.attention_layer == -2 && prior.state.cache.n_seq() == 1)
        while (common < prior.ids.size() && common + 1 < prompt_.size() && int64_t(common) < prior.state.cache.n_past && prior.ids[common] == prompt_[common]) ++common;
    if (common > 0 && prior.state.cache.capacity() >= capacity) {
        state_ = std::move(prior.state);  // big enough: used as it is, the positions after the prefix overwritten
        state_.cache.n_past = int64_t(common);
    } else {
        state_ = lm_.new_state(capacity);
        if (common > 0) state_.cache.copy_prefix(prior.state.cache, int64_t(common));
    }
    reused_ = int64_t(common);
    if (p.max_new_tokens == 0) finish_reason_ = "max_new_tokens";
    // greedy, unscored, and no penalty that changes logits (no_repeat_ngram_size only bans): the screen may choose
    screenable_ = !p.output_scores && (!p.sampling.do_sample || p.sampling.temperature == 0.0f) && p.sampling.repetition_penalty == 1.0f;
}

generation_cache generation::release_cache() {
    generation_cache c;
    const int64_t n = state_.cache.n_past;
    c.ids.assign(history_.begin(), history_.begin() + std::min<int64_t>(n, int64_t(history_.size())));
    c.state = std::move(state_);
    finish_reason_ = finish_reason_.empty() ? "released" : finish_reason_;
    return c;
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

void generation::exclude(std::span<float> l) {
    for (int64_t i = pm_.tok->vocab_size(); i < int64_t(l.size()); ++i) l[size_t(i)] = -INFINITY;
    sampler_.apply_penalties(l, history_);
}

bool generation::is_end(int32_t id) const {
    return id == pm_.tok->special().eos || std::binary_search(pm_.end_ids.begin(), pm_.end_ids.end(), id);
}

std::optional<generated_token> generation::step(const cancel_fn* cancel, forward_trace* trace) {
    if (finished()) return std::nullopt;
    check_cancel(cancel);
    // run what the model has not seen: the prompt, or the token the last step chose (a cancel leaves it unrun)
    if (!prefilled_ || unrun_) {
        const std::span<const int32_t> ids = prefilled_ ? std::span<const int32_t>(&ids_.back(), 1) : std::span<const int32_t>(prompt_).subspan(size_t(reused_));
        forward_trace* const tr = prefilled_ ? nullptr : trace;  // what the prompt's pass records
        const bool traced = tr && (tr->want_hidden || tr->attention_layer != -2);
        screen_ = screenable_ && !traced ? lm_.screen() : nullptr;
        if (screen_) hidden_ = lm_.forward_hidden(state_, ids, cancel);
        else logits_ = lm_.forward(state_, ids, false, tr, cancel);
        prefilled_ = true;
    }
    unrun_ = false;
    // the state's logits, changed in place: ids the tokenizer cannot name, then penalties; the log-probability
    // (output_scores) is the model's own, read before the changes
    generated_token t{0, "", std::nullopt};
    if (screen_) {  // the screen's approximate logits and bounds, then in full those that can hold the maximum
        const int64_t V = screen_->copy().n_rows;
        screen_->approximate(hidden_.data(), 1, approx_);
        if (state_.logits.size() < size_t(V)) state_.logits.resize(size_t(V));
        const std::span<float> l(state_.logits.data(), size_t(V));
        screen_->exact(hidden_.data(), std::span<float>(approx_.data(), size_t(V)), l, [&](std::span<float> v) { exclude(v); });
        t.id = sampler_.pick(l);
    } else {
        std::span<float> l(state_.logits.data(), logits_.size());
        const double lse = p_.output_scores ? log_sum_exp(l) : 0.0;
        exclude(l);
        t.id = sampler_.pick(l);
        if (p_.output_scores) {
            const float raw = sampler_.original_logit(l, t.id);
            t.logprob = double(std::isnan(raw) ? -INFINITY : raw) - lse;
        }
    }
    const int32_t id = t.id;
    ids_.push_back(id);
    history_.push_back(id);
    const bool eos = p_.stop_at_eos && is_end(id);
    const bool stop_id = !eos && std::find(p_.stop_token_ids.begin(), p_.stop_token_ids.end(), id) != p_.stop_token_ids.end();
    if (!eos && !stop_id && !(p_.skip_special_tokens && pm_.tok->is_special(id))) pending_ += utf8_.push(pm_.tok->token_bytes(id));
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
        else if (stop_id) finish_reason_ = "stop";
        else if (int64_t(ids_.size()) >= p_.max_new_tokens) finish_reason_ = "max_new_tokens";
        else if (state_.cache.n_past >= state_.cache.capacity()) finish_reason_ = "length";
    }
    if (finished()) {
        if (finish_reason_ != "stop" || stop_id) pending_ += utf8_.finish();  // a stop string's cut keeps no partial character
        t.text = release_text(true);
        return t;
    }
    t.text = release_text(false);
    unrun_ = true;
    return t;
}

}  // namespace wf
