#include "tasks.h"

#include <algorithm>
#include <cmath>

#include "gguf-model.h"
#include "json-util.h"
#include "kernels.h"

namespace wf {

std::unique_ptr<tokenizer> load_tokenizer(const file_set& files, arch a) {
    if (files.has("tokenizer.json")) return load_tokenizer_json(files.text("tokenizer.json"));
    if (a == arch::bert) {
        if (!files.has("vocab.txt")) throw error("no tokenizer: expected tokenizer.json or vocab.txt");
        wordpiece_options opt;
        if (files.has("tokenizer_config.json")) {
            const json c = parse_json_strict(files.text("tokenizer_config.json"), "tokenizer_config.json", 1 << 20);
            if (c.is_object() && c.contains("do_lower_case") && c["do_lower_case"].is_boolean()) opt.lowercase = c["do_lower_case"].get<bool>();
            if (c.is_object() && c.contains("strip_accents") && c["strip_accents"].is_boolean()) opt.strip_accents = c["strip_accents"].get<bool>();
        }
        return load_vocab_txt(files.text("vocab.txt"), opt);
    }
    if (!files.has("vocab.json") || !files.has("merges.txt")) throw error("no tokenizer: expected tokenizer.json or vocab.json + merges.txt");
    return load_gpt2_files(files.text("vocab.json"), files.text("merges.txt"));
}

pipeline_model load_pipeline_model(std::shared_ptr<const file_set> files, const load_options& opt) {
    pipeline_model pm;
    std::string gguf_name;
    for (const std::string& n : files->names())
        if (n.size() > 5 && n.compare(n.size() - 5, 5, ".gguf") == 0) {
            if (!gguf_name.empty()) throw error("several .gguf files (" + gguf_name + ", " + n + "): give one model file");
            gguf_name = n;
        }
    if (!gguf_name.empty()) {  // a GGUF file holds weights, hyper-parameters and tokenizer
        const auto* bytes = files->get(gguf_name);
        const gguf_file g = parse_gguf(bytes->data(), int64_t(bytes->size()), gguf_name);
        const hparams hp = gguf_hparams(g);
        pm.tok = gguf_tokenizer(g, hp.n_vocab);
        pm.m = build_model(hp, gguf_source(g, hp.architecture), opt, std::move(files));
        return pm;
    }
    const std::shared_ptr<const file_set> keep = files;  // the model keeps the files only if it borrows them
    pm.m = load_hf_model(std::move(files), opt);
    pm.tok = load_tokenizer(*keep, pm.m.hp.architecture);
    if (pm.tok->vocab_size() > pm.m.hp.n_vocab)
        throw error("the tokenizer has " + std::to_string(pm.tok->vocab_size()) + " tokens but the model only " + std::to_string(pm.m.hp.n_vocab));
    return pm;
}

// ------------------------------------------------------------------------------------------------- fill-mask
std::vector<std::vector<fill_mask_candidate>> fill_mask(const pipeline_model& pm, std::string_view text, const fill_mask_options& opt) {
    if (!pm.m.bert) throw error("fill-mask needs a BERT model");
    const tokenizer& tok = *pm.tok;
    const int32_t mask = tok.special().mask;
    if (opt.top_k < 1) throw error("top_k must be ≥ 1, got " + std::to_string(opt.top_k));
    const std::vector<int32_t> ids = tok.encode(text, true);
    std::vector<int64_t> at;
    for (size_t i = 0; i < ids.size(); ++i)
        if (ids[i] == mask) at.push_back(int64_t(i));
    if (at.empty()) throw error("no " + tok.token(mask) + " token in the input");
    if (int64_t(ids.size()) > pm.m.hp.n_ctx)
        throw error("input is " + std::to_string(ids.size()) + " tokens, the model takes at most " + std::to_string(pm.m.hp.n_ctx));
    std::vector<int32_t> target_ids;
    for (const std::string& t : opt.targets) {
        const auto tid = tok.encode(t, false);
        if (tid.empty()) throw error("target \"" + t + "\" is no token");
        target_ids.push_back(tid[0]);
    }
    const int64_t E = pm.m.hp.n_embd, V = pm.m.hp.n_vocab;
    const auto h = pm.m.bert->encode(ids, {}, opt.trace, opt.cancel);
    std::vector<float> rows;
    for (int64_t p : at) rows.insert(rows.end(), h.begin() + p * E, h.begin() + (p + 1) * E);
    auto logits = pm.m.bert->mlm_logits(rows.data(), int64_t(at.size()));  // the head at the masks only

    std::vector<std::vector<fill_mask_candidate>> out;
    for (size_t m = 0; m < at.size(); ++m) {
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
            filled[size_t(at[m])] = cand[i];
            // as transformers does: special tokens are kept in the sequence when the input has several masks
            list.push_back({double(l[cand[i]]), cand[i], tok.decode({cand[i]}), tok.decode(filled, at.size() == 1)});
        }
        out.push_back(std::move(list));
    }
    return out;
}

// ------------------------------------------------------------------------------------------------ generation
generation::generation(const pipeline_model& pm, std::string_view prompt, const generation_params& p) : pm_(pm), p_(p), rng_(p.sampling.seed) {
    if (!pm.m.gpt2) throw error("text generation needs a GPT-2 model");
    validate(p.sampling);
    if (p.max_new_tokens < 0) throw error("max_new_tokens must be ≥ 0, got " + std::to_string(p.max_new_tokens));
    for (auto& s : p.stop)
        if (s.empty()) throw error("stop strings must not be empty");
    prompt_ = pm.tok->encode(prompt, true);
    if (prompt_.empty()) {  // an empty prompt starts from <|endoftext|>, as GPT-2 was trained to begin documents
        if (pm.tok->special().bos < 0) throw error("empty prompt, and the tokenizer has no beginning-of-text token");
        prompt_.push_back(pm.tok->special().bos);
    }
    const int64_t n_ctx = pm.m.hp.n_ctx;
    if (int64_t(prompt_.size()) >= n_ctx)
        throw error("prompt is " + std::to_string(prompt_.size()) + " tokens; the model has " + std::to_string(n_ctx) +
                    " positions, so at most " + std::to_string(n_ctx - 1) + " fit with room for one new token");
    history_ = prompt_;
    cache_ = pm.m.gpt2->new_cache(std::min<int64_t>(n_ctx, int64_t(prompt_.size()) + std::max<int64_t>(p.max_new_tokens, 1)));
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
    const gpt2_model& g = *pm_.m.gpt2;
    if (!prefilled_) {
        logits_ = g.forward(cache_, prompt_.data(), int64_t(prompt_.size()), false, trace, cancel);
        prefilled_ = true;
    }
    std::vector<float> l = logits_;
    for (int64_t i = pm_.tok->vocab_size(); i < int64_t(l.size()); ++i) l[size_t(i)] = -INFINITY;  // ids the tokenizer cannot name
    apply_penalties(l, history_, p_.sampling);
    const int32_t id = pick_token(l, p_.sampling, rng_);
    generated_token t{id, "", log_prob(logits_, id)};
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
        else if (cache_.n_past >= cache_.capacity) finish_reason_ = "length";
    }
    if (finished()) {
        if (finish_reason_ != "stop") pending_ += utf8_.finish();
        t.text = release_text(true);
        return t;
    }
    t.text = release_text(false);
    logits_ = g.forward(cache_, &ids_.back(), 1, false, nullptr, cancel);
    return t;
}

}  // namespace wf
