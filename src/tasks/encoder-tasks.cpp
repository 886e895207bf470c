// The encoder tasks (encoder-tasks.h). The post-processing follows Hugging Face's pipelines (feature_extraction.py,
// text_classification.py, token_classification.py, question_answering.py, zero_shot_classification.py); their
// results are compared with tools/reference/pipelines.py on the fixtures.
#include "tasks/encoder-tasks.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>

#include "core/unicode.h"
#include "kernels/kernels.h"
#include "nn/ops.h"
#include "tokenizers/bpe.h"
#include "tokenizers/wordpiece.h"

namespace wf {
namespace {

// ------------------------------------------------------------------------------------------------ batching
// Inputs sorted by length and run in padded batches of at most kMaxBatch sequences and kMaxBatchTokens positions;
// `each(i, rows)` sees input i's last hidden states (its length × E), in input order of completion — with
// first_only, only the first row holds them (the last layer runs at each sequence's first token only).
constexpr int64_t kMaxBatch = 32, kMaxBatchTokens = 8192;

// (Not a template on `each`: one copy of the batching and its stable sort, where each caller's lambda made its own.)
void run_encoder(const pipeline_model& pm, const encoder& enc, const std::vector<model_input>& inputs, bool first_only, const cancel_fn* cancel,
                 const std::function<void(size_t, const float*)>& each) {
    const int64_t E = pm.hp().n_embd;
    const bool types = pm.hp().n_type_vocab >= 2;  // RoBERTa's single type and DistilBERT's none take no type ids
    const int32_t pad = std::max(pm.tok->special().pad, 0);
    std::vector<size_t> order(inputs.size());
    std::iota(order.begin(), order.end(), size_t(0));
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return inputs[a].ids.size() < inputs[b].ids.size(); });
    arena scratch;
    std::vector<float> hidden;
    for (size_t first = 0; first < order.size();) {
        // the batch: the next inputs while the padded size stays within bounds (they only get longer)
        size_t last = first + 1;
        while (last < order.size() && int64_t(last - first) < kMaxBatch &&
               int64_t(last - first + 1) * int64_t(inputs[order[last]].ids.size()) <= kMaxBatchTokens)
            ++last;
        const int64_t B = int64_t(last - first), T = int64_t(inputs[order[last - 1]].ids.size());
        token_batch batch;
        batch.n_seq = B;
        batch.n_tokens = T;
        for (size_t k = first; k < last; ++k) {
            const model_input& in = inputs[order[k]];
            batch.lengths.push_back(int64_t(in.ids.size()));
            batch.ids.insert(batch.ids.end(), in.ids.begin(), in.ids.end());
            batch.ids.insert(batch.ids.end(), size_t(T) - in.ids.size(), pad);
            if (types) {
                batch.types.insert(batch.types.end(), in.types.begin(), in.types.end());
                batch.types.insert(batch.types.end(), size_t(T) - in.ids.size(), 0);
            }
            if (first_only) batch.out_rows.push_back(int64_t(k - first) * T);
        }
        hidden.resize(size_t(B * T * E));
        enc.encode(batch, hidden.data(), scratch, nullptr, cancel);
        for (size_t k = first; k < last; ++k) each(order[k], hidden.data() + int64_t(k - first) * T * E);
        first = last;
    }
}

// A text → its tokens in the template, cut to the model's positions (the text's end is dropped).
model_input single_input(const pipeline_model& pm, const std::string& text, const std::string& which) {
    check_text_size(text, which);
    const encoding e = pm.tok->encode_offsets(text);
    const int64_t room = pm.hp().max_tokens() - pm.tok->template_size(false);
    if (room < 1) throw error("the model's positions leave no room for text");
    return pm.tok->apply_template(e.slice(0, std::min(e.ids.size(), size_t(room))));
}

}  // namespace

model_input pair_input(const pipeline_model& pm, const std::string& a, const std::string& b, const std::string& which, cut how) {
    check_text_size(a, which);
    check_text_size(b, which);
    const encoding x = pm.tok->encode_offsets(a), y = pm.tok->encode_offsets(b);
    const int64_t room = pm.hp().max_tokens() - pm.tok->template_size(true);
    int64_t nx = int64_t(x.ids.size()), ny = int64_t(y.ids.size());
    if (how == cut::only_first) {
        if (ny >= room) throw error(which + "the second text is " + std::to_string(ny) + " tokens, which leaves no room for the first");
        nx = std::min(nx, room - ny);
    } else {
        // Hugging Face's tokenizers: the shorter text kept whole if it fits in half, else both get half, the extra
        // token going to the longer text (to the second when they are as long)
        if (nx + ny > room) {
            const bool swap = nx > ny;
            int64_t n1 = std::min(nx, ny), n2 = std::max(nx, ny);
            n2 = n1 > room ? n1 : std::max(n1, room - n1);
            if (n1 + n2 > room) n1 = room / 2, n2 = n1 + room % 2;
            nx = swap ? n2 : n1, ny = swap ? n1 : n2;
        }
        if (nx < 1 && !x.ids.empty()) throw error(which + "the texts do not fit the model's positions");
    }
    const encoding b_cut = y.slice(0, size_t(ny));
    return pm.tok->apply_template(x.slice(0, size_t(nx)), &b_cut);
}

namespace {

std::string label_of(const pipeline_model& pm, int64_t i) {
    const auto& l = pm.hp().labels;
    return i < int64_t(l.size()) ? l[size_t(i)] : "LABEL_" + std::to_string(i);
}

void sigmoid(float* x, int64_t n) {
    for (int64_t i = 0; i < n; ++i) x[i] = 1.0f / (1.0f + std::exp(-x[i]));
}

// Hugging Face's convert_tokens_to_string on the words of entities: WordPiece's decoder on the strings (an unknown
// token's word is the text it covers); byte-level BPE, the tokens' bytes.
std::string words_to_string(const tokenizer& tok, const std::vector<std::string>& words, const std::vector<int32_t>& ids) {
    if (const auto* wp = dynamic_cast<const wordpiece_tokenizer*>(&tok)) return wordpiece_join(words, wp->continuing_subword_prefix());
    std::string out;
    for (int32_t id : ids) out += tok.token_bytes(id);
    return unicode::utf8_encode(unicode::utf8_decode(out));
}

}  // namespace

namespace {
// o (E) = the mean of the n rows of h (n, E): feature-extraction's mean pooling and a mean-pooling sequence head.
void mean_rows(const float* h, int64_t n, int64_t E, float* o) {
    std::vector<double> sum(size_t(E), 0.0);
    for (int64_t t = 0; t < n; ++t)
        for (int64_t j = 0; j < E; ++j) sum[size_t(j)] += h[t * E + j];
    for (int64_t j = 0; j < E; ++j) o[j] = float(sum[size_t(j)] / double(n));
}
}  // namespace

// ---------------------------------------------------------------------------------------------- feature-extraction
tensor_out feature_extraction(const pipeline_model& pm, const std::vector<std::string>& texts, const feature_extraction_options& opt,
                              const cancel_fn* cancel) {
    const encoder& enc = need_encoder(pm, "feature-extraction");
    const pooling mode = opt.pool.value_or(pm.sentence.pooling.value_or(pooling::none));
    const bool normalize = opt.normalize.value_or(pm.sentence.normalize);
    const int64_t E = pm.hp().n_embd, B = int64_t(texts.size());
    std::vector<model_input> in;
    for (size_t i = 0; i < texts.size(); ++i) in.push_back(single_input(pm, texts[i], input_label("text", i, texts.size())));
    int64_t T = 0;
    for (auto& x : in) T = std::max<int64_t>(T, int64_t(x.ids.size()));
    tensor_out out;
    out.dims = mode == pooling::none ? std::vector<int64_t>{B, T, E} : std::vector<int64_t>{B, E};
    out.data.assign(size_t(mode == pooling::none ? B * T * E : B * E), 0.0f);
    run_encoder(pm, enc, in, mode == pooling::cls, cancel, [&](size_t i, const float* h) {
        const int64_t n = int64_t(in[i].ids.size());
        if (mode == pooling::none) {
            std::copy_n(h, n * E, out.data.begin() + int64_t(i) * T * E);
            return;
        }
        float* o = out.data.data() + int64_t(i) * E;
        if (mode == pooling::cls) {
            std::copy_n(h, E, o);
        } else if (mode == pooling::max) {
            std::copy_n(h, E, o);
            for (int64_t t = 1; t < n; ++t)
                for (int64_t j = 0; j < E; ++j) o[j] = std::max(o[j], h[t * E + j]);
        } else {  // mean over the real tokens (the template's included, as sentence-transformers does)
            mean_rows(h, n, E, o);
        }
    });
    if (normalize) {  // every row (each token's with pooling none) to unit length; zero rows stay zero
        const int64_t rows = int64_t(out.data.size()) / E;
        for (int64_t r = 0; r < rows; ++r) {
            float* x = out.data.data() + r * E;
            double ss = 0;
            for (int64_t j = 0; j < E; ++j) ss += double(x[j]) * x[j];
            const double norm = std::max(std::sqrt(ss), 1e-12);
            for (int64_t j = 0; j < E; ++j) x[j] = float(x[j] / norm);
        }
    }
    return out;
}

// --------------------------------------------------------------------------------------------- text-classification
namespace {
// The sequence head's logits (n_inputs, L) for the inputs.
std::vector<float> sequence_logits(const pipeline_model& pm, const std::vector<model_input>& in, const char* task, const cancel_fn* cancel) {
    const encoder& enc = need_encoder(pm, task);
    const classifier_head& head = need_head(pm, head_kind::sequence, task);
    const int64_t L = head.n_outputs(), E = pm.hp().n_embd;
    std::vector<float> first(in.size() * size_t(E)), logits(in.size() * size_t(L));
    run_encoder(pm, enc, in, !head.mean_pooling, cancel, [&](size_t i, const float* h) {
        float* o = first.data() + int64_t(i) * E;
        if (head.mean_pooling) mean_rows(h, int64_t(in[i].ids.size()), E, o);  // ModernBERT's classifier_pooling "mean"
        else std::copy_n(h, E, o);
    });
    arena scratch;
    apply(head, first.data(), int64_t(in.size()), logits.data(), scratch);
    return logits;
}
}  // namespace

std::vector<std::vector<label_score>> text_classification(const pipeline_model& pm, const std::vector<std::string>& texts,
                                                          const std::vector<std::string>& pairs, const text_classification_options& opt,
                                                          const cancel_fn* cancel) {
    if (!pairs.empty() && pairs.size() != texts.size())
        throw error("text-classification: " + std::to_string(pairs.size()) + " text pairs for " + std::to_string(texts.size()) + " texts");
    std::vector<model_input> in;
    for (size_t i = 0; i < texts.size(); ++i) {
        const std::string which = input_label("text", i, texts.size());
        in.push_back(pairs.empty() ? single_input(pm, texts[i], which) : pair_input(pm, texts[i], pairs[i], which, cut::longest_first));
    }
    if (in.empty()) return {};
    std::vector<float> logits = sequence_logits(pm, in, "text-classification", cancel);
    const int64_t L = int64_t(logits.size() / in.size());
    score_function f = opt.function;
    if (f == score_function::automatic) f = pm.hp().multi_label || L == 1 ? score_function::sigmoid : score_function::softmax;
    std::vector<std::vector<label_score>> out;
    for (size_t i = 0; i < in.size(); ++i) {
        float* l = logits.data() + int64_t(i) * L;
        if (f == score_function::softmax) softmax(l, L);
        else if (f == score_function::sigmoid) sigmoid(l, L);
        std::vector<int64_t> idx(static_cast<size_t>(L));
        std::iota(idx.begin(), idx.end(), int64_t(0));
        std::stable_sort(idx.begin(), idx.end(), [&](int64_t a, int64_t b) { return l[a] > l[b]; });
        const int64_t k = opt.top_k == 0 ? L : std::min(opt.top_k, L);
        std::vector<label_score> r;
        for (int64_t j = 0; j < k; ++j) r.push_back({label_of(pm, idx[size_t(j)]), double(l[idx[size_t(j)]])});
        out.push_back(std::move(r));
    }
    return out;
}

// -------------------------------------------------------------------------------------------- token-classification
namespace {
struct pre_entity {
    int32_t id;
    std::string word;
    std::vector<float> scores;
    int64_t start, end, index;
    bool is_subword;
};
struct word_entity {
    std::string entity;
    double score;
    std::vector<int32_t> ids;  // its tokens, for the group's text
    std::string word;
    int64_t start, end, index;
};

std::pair<char, std::string> tag_of(const std::string& e) {  // "B-PER" → (B, PER); a plain label continues (I)
    if (e.rfind("B-", 0) == 0) return {'B', e.substr(2)};
    if (e.rfind("I-", 0) == 0) return {'I', e.substr(2)};
    return {'I', e};
}

word_entity aggregate_word(const pipeline_model& pm, const std::vector<pre_entity>& group, aggregation how) {
    const size_t L = group[0].scores.size();
    std::vector<float> scores;
    if (how == aggregation::first) {
        scores = group[0].scores;
    } else if (how == aggregation::max) {
        auto best = std::max_element(group.begin(), group.end(), [](const pre_entity& a, const pre_entity& b) {
            return *std::max_element(a.scores.begin(), a.scores.end()) < *std::max_element(b.scores.begin(), b.scores.end());
        });
        scores = best->scores;
    } else {  // average
        scores.assign(L, 0.0f);
        for (const pre_entity& p : group)
            for (size_t j = 0; j < L; ++j) scores[j] += p.scores[j];
        for (float& s : scores) s /= float(group.size());
    }
    const size_t k = size_t(std::max_element(scores.begin(), scores.end()) - scores.begin());
    word_entity w{label_of(pm, int64_t(k)), double(scores[k]), {}, "", group.front().start, group.back().end, -1};
    std::vector<std::string> words;
    for (const pre_entity& p : group) w.ids.push_back(p.id), words.push_back(p.word);
    w.word = words_to_string(*pm.tok, words, w.ids);
    return w;
}
}  // namespace

std::vector<std::vector<token_entity>> token_classification(const pipeline_model& pm, const std::vector<std::string>& texts,
                                                            const token_classification_options& opt, const cancel_fn* cancel) {
    const encoder& enc = need_encoder(pm, "token-classification");
    const classifier_head& head = need_head(pm, head_kind::token, "token-classification");
    const tokenizer& tok = *pm.tok;
    const int64_t L = head.n_outputs();
    std::vector<model_input> in;
    for (size_t i = 0; i < texts.size(); ++i) in.push_back(single_input(pm, texts[i], input_label("text", i, texts.size())));
    std::vector<std::vector<float>> probs(in.size());
    arena scratch;
    run_encoder(pm, enc, in, false, cancel, [&](size_t i, const float* h) {
        const int64_t n = int64_t(in[i].ids.size());
        probs[i].resize(size_t(n * L));
        apply(head, h, n, probs[i].data(), scratch);
        for (int64_t t = 0; t < n; ++t) softmax(probs[i].data() + t * L, L);
    });
    // WordPiece marks continuations ("##"): a token is a subword when its text is not the text it covers; for
    // byte-level BPE, when the text has no space right before it (Hugging Face's heuristic).
    const bool prefixed = !tok.is_byte_level();
    std::vector<std::vector<token_entity>> out;
    for (size_t i = 0; i < in.size(); ++i) {
        const std::string& text = texts[i];
        std::vector<pre_entity> pre;
        for (size_t t = 0; t < in[i].ids.size(); ++t) {
            if (in[i].sequence[t] < 0) continue;  // the template's tokens
            const int32_t id = in[i].ids[t];
            const token_span sp = in[i].offsets[t];
            const std::string_view ref(text.data() + sp.begin, size_t(sp.end - sp.begin));
            pre_entity p{id, tok.token(id), std::vector<float>(probs[i].begin() + int64_t(t) * L, probs[i].begin() + int64_t(t + 1) * L), sp.begin,
                         sp.end, int64_t(t), false};
            if (prefixed) p.is_subword = unicode::code_point_length(p.word) != unicode::code_point_length(ref);
            else p.is_subword = sp.begin > 0 && text[size_t(sp.begin - 1)] != ' ' && text[size_t(sp.begin)] != ' ';
            if (id == tok.special().unk) p.word = std::string(ref), p.is_subword = false;
            pre.push_back(std::move(p));
        }
        std::vector<word_entity> words;
        if (opt.strategy == aggregation::none || opt.strategy == aggregation::simple) {
            for (const pre_entity& p : pre) {
                const size_t k = size_t(std::max_element(p.scores.begin(), p.scores.end()) - p.scores.begin());
                words.push_back({label_of(pm, int64_t(k)), double(p.scores[k]), {p.id}, p.word, p.start, p.end, p.index});
            }
        } else {
            std::vector<pre_entity> group;
            for (pre_entity& p : pre) {
                if (!group.empty() && !p.is_subword) words.push_back(aggregate_word(pm, group, opt.strategy)), group.clear();
                group.push_back(std::move(p));
            }
            if (!group.empty()) words.push_back(aggregate_word(pm, group, opt.strategy));
        }
        auto ignored = [&](const std::string& label) {
            return std::find(opt.ignore_labels.begin(), opt.ignore_labels.end(), label) != opt.ignore_labels.end();
        };
        std::vector<token_entity> r;
        if (opt.strategy == aggregation::none) {
            for (word_entity& w : words)
                if (!ignored(w.entity)) r.push_back({w.entity, w.score, w.index, w.word, w.start, w.end});
            out.push_back(std::move(r));
            continue;
        }
        // entity groups: B- starts one, I- (or a plain label) of the same tag continues it
        std::vector<const word_entity*> run;
        auto close = [&] {
            if (run.empty()) return;
            double s = 0;
            std::vector<int32_t> ids;
            std::vector<std::string> words;
            for (const word_entity* w : run) {
                s += w->score;
                ids.insert(ids.end(), w->ids.begin(), w->ids.end());
                words.push_back(w->word);
            }
            // word strategies: each word was decoded once (aggregate_word); Hugging Face decodes their text again
            std::string word;
            if (opt.strategy != aggregation::simple && tok.is_byte_level()) {
                word = byte_level_decode(words);
            } else {
                word = words_to_string(tok, words, ids);
            }
            const std::string group = run[0]->entity.substr(run[0]->entity.find('-') == std::string::npos ? 0 : run[0]->entity.find('-') + 1);
            if (!ignored(group)) r.push_back({group, s / double(run.size()), -1, word, run.front()->start, run.back()->end});
            run.clear();
        };
        for (const word_entity& w : words) {
            if (!run.empty()) {
                const auto [bi, tag] = tag_of(w.entity);
                if (!(tag == tag_of(run.back()->entity).second && bi != 'B')) close();
            }
            run.push_back(&w);
        }
        close();
        out.push_back(std::move(r));
    }
    return out;
}

// ---------------------------------------------------------------------------------------------- question-answering
std::vector<std::vector<answer>> question_answering(const pipeline_model& pm, const std::vector<std::string>& questions,
                                                   const std::vector<std::string>& contexts, const question_answering_options& opt,
                                                   const cancel_fn* cancel) {
    const encoder& enc = need_encoder(pm, "question-answering");
    const classifier_head& head = need_head(pm, head_kind::span, "question-answering");
    const tokenizer& tok = *pm.tok;
    if (questions.size() != contexts.size())
        throw error("question-answering: " + std::to_string(questions.size()) + " questions for " + std::to_string(contexts.size()) + " contexts");
    const int64_t max_len = std::min(opt.max_seq_len, pm.hp().max_tokens());
    // every window of every question, as Hugging Face's tokenizer cuts them (truncation only_second with stride)
    struct window {
        size_t q;
        model_input in;
    };
    std::vector<window> windows;
    std::vector<encoding> ctx(contexts.size());
    std::vector<std::vector<token_span>> word_span(contexts.size());  // each context word's bytes (answers cover whole words)
    for (size_t q = 0; q < questions.size(); ++q) {
        const std::string which = input_label("question", q, questions.size());
        check_text_size(questions[q], which);
        check_text_size(contexts[q], which);
        const encoding qe = tok.encode_offsets(questions[q]);
        ctx[q] = tok.encode_offsets(contexts[q]);
        for (size_t t = 0; t < ctx[q].ids.size(); ++t) {
            const auto w = size_t(ctx[q].words[t]);
            if (w >= word_span[q].size()) word_span[q].resize(w + 1, ctx[q].offsets[t]);
            word_span[q][w] = {std::min(word_span[q][w].begin, ctx[q].offsets[t].begin), std::max(word_span[q][w].end, ctx[q].offsets[t].end)};
        }
        const int64_t room = max_len - tok.template_size(true) - int64_t(qe.ids.size());
        if (room < 1)
            throw error(which + "the question is " + std::to_string(qe.ids.size()) + " tokens, which leaves no room for the context in " +
                        std::to_string(max_len) + " (max_seq_len)");
        const int64_t stride = opt.doc_stride >= 0 ? opt.doc_stride : std::min({max_len / 2, int64_t(128), room - 1});
        if (stride >= room)
            throw error(which + "doc_stride (" + std::to_string(stride) + ") must be less than the context tokens per window (" +
                        std::to_string(room) + ")");
        const int64_t n = int64_t(ctx[q].ids.size()), step = room - stride;
        for (int64_t start = 0;; start += step) {
            const int64_t stop = std::min(start + room, n);
            const encoding part = ctx[q].slice(size_t(start), size_t(stop));
            windows.push_back({q, tok.apply_template(qe, &part)});
            if (stop >= n) break;
        }
    }
    std::vector<std::vector<float>> logits(windows.size());  // (T, 2) each
    std::vector<model_input> in;
    for (auto& w : windows) in.push_back(w.in);
    arena scratch;
    run_encoder(pm, enc, in, false, cancel, [&](size_t i, const float* h) {
        const int64_t T = int64_t(in[i].ids.size());
        logits[i].resize(size_t(T * 2));
        apply(head, h, T, logits[i].data(), scratch);
    });

    std::vector<std::vector<answer>> out(questions.size());
    std::vector<double> null_score(questions.size(), 1e6);
    for (size_t w = 0; w < windows.size(); ++w) {
        const model_input& m = windows[w].in;
        const size_t q = windows[w].q;
        const int64_t T = int64_t(m.ids.size());
        // tokens that may be in an answer: the context's, and [CLS] (then scored zero: "no answer" is separate)
        std::vector<uint8_t> ok(static_cast<size_t>(T));
        for (int64_t t = 0; t < T; ++t) ok[size_t(t)] = m.sequence[size_t(t)] == 1 || m.ids[size_t(t)] == tok.special().cls;
        std::vector<double> ps(static_cast<size_t>(T)), pe(static_cast<size_t>(T));
        for (int which = 0; which < 2; ++which) {
            std::vector<double>& p = which == 0 ? ps : pe;
            double mx = -INFINITY, sum = 0;
            for (int64_t t = 0; t < T; ++t) {
                p[size_t(t)] = ok[size_t(t)] ? double(logits[w][size_t(t * 2 + which)]) : -10000.0;
                mx = std::max(mx, p[size_t(t)]);
            }
            for (double& x : p) sum += (x = std::exp(x - mx));
            for (double& x : p) x /= sum;
        }
        if (opt.handle_impossible_answer) null_score[q] = std::min(null_score[q], ps[0] * pe[0]);
        ps[0] = pe[0] = 0;
        // the best spans start ≤ end < start + max_answer_len, both in the context
        struct cand {
            double score;
            int64_t s, e;
        };
        std::vector<cand> c;
        for (int64_t s = 0; s < T; ++s) {
            if (!ok[size_t(s)]) continue;
            for (int64_t e = s; e < std::min(T, s + opt.max_answer_len); ++e)
                if (ok[size_t(e)]) c.push_back({ps[size_t(s)] * pe[size_t(e)], s, e});
        }
        const size_t k = std::min(size_t(opt.top_k), c.size());
        std::partial_sort(c.begin(), c.begin() + long(k), c.end(), [&](const cand& a, const cand& b) {
            return a.score != b.score ? a.score > b.score : a.s != b.s ? a.s < b.s : a.e < b.e;
        });
        for (size_t i = 0; i < k; ++i) {
            // the answer covers whole words: from the start token's word's first byte to the end token's word's last
            const int64_t s = c[i].s, e = c[i].e;
            int64_t begin = m.offsets[size_t(s)].begin, end = m.offsets[size_t(e)].end;
            if (opt.align_to_words && m.sequence[size_t(s)] == 1 && m.sequence[size_t(e)] == 1)
                begin = word_span[q][size_t(m.words[size_t(s)])].begin, end = word_span[q][size_t(m.words[size_t(e)])].end;
            out[q].push_back({c[i].score, begin, end, contexts[q].substr(size_t(begin), size_t(end - begin))});
        }
    }
    for (size_t q = 0; q < out.size(); ++q) {
        if (opt.handle_impossible_answer) out[q].push_back({null_score[q], 0, 0, ""});
        std::stable_sort(out[q].begin(), out[q].end(), [](const answer& a, const answer& b) { return a.score > b.score; });
        if (int64_t(out[q].size()) > opt.top_k) out[q].resize(size_t(opt.top_k));
    }
    return out;
}

// ----------------------------------------------------------------------------------------- zero-shot-classification
std::vector<zero_shot_result> zero_shot_classification(const pipeline_model& pm, const std::vector<std::string>& texts,
                                                       const std::vector<std::string>& labels, const zero_shot_options& opt,
                                                       const cancel_fn* cancel) {
    const int64_t entail = entailment_label(pm.hp());
    if (entail < 0 && pm.m().head(head_kind::sequence))
        throw error("zero-shot-classification needs an NLI model: none of this model's labels (id2label) starts with \"entail\"");
    if (labels.empty()) throw error("zero-shot-classification: candidate_labels is empty");
    const size_t at = opt.hypothesis_template.find("{}");
    std::vector<model_input> in;
    for (size_t i = 0; i < texts.size(); ++i)
        for (const std::string& l : labels) {
            const std::string hypothesis = opt.hypothesis_template.substr(0, at) + l + opt.hypothesis_template.substr(at + 2);
            in.push_back(pair_input(pm, texts[i], hypothesis, input_label("text", i, texts.size()), cut::only_first));
        }
    if (in.empty()) return {};
    const std::vector<float> logits = sequence_logits(pm, in, "zero-shot-classification", cancel);
    const int64_t L = int64_t(logits.size() / in.size()), contra = entail == 0 ? L - 1 : 0;
    std::vector<zero_shot_result> out;
    for (size_t i = 0; i < texts.size(); ++i) {
        std::vector<double> s(labels.size());
        for (size_t j = 0; j < labels.size(); ++j) {
            const float* l = logits.data() + int64_t(i * labels.size() + j) * L;
            s[j] = l[entail];
            if (opt.multi_label || labels.size() == 1) s[j] = 1.0 / (1.0 + std::exp(double(l[contra]) - double(l[entail])));
        }
        if (!opt.multi_label && labels.size() > 1) {
            const double mx = *std::max_element(s.begin(), s.end());
            double sum = 0;
            for (double& x : s) sum += (x = std::exp(x - mx));
            for (double& x : s) x /= sum;
        }
        std::vector<size_t> idx(labels.size());
        std::iota(idx.begin(), idx.end(), size_t(0));
        std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return s[a] > s[b]; });
        zero_shot_result r;
        for (size_t j : idx) r.labels.push_back(labels[j]), r.scores.push_back(s[j]);
        out.push_back(std::move(r));
    }
    return out;
}

}  // namespace wf
