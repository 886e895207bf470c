#include "tasks/options.h"

#include "tasks/encoder-tasks.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

namespace wf {
namespace {

// Options other libraries take that mean something else here, or nothing yet: a hint instead of a guess.
const std::pair<const char*, const char*> kForeign[] = {
    {"max_length", "use max_new_tokens (the number of tokens to add, not a total length)"},
    {"min_length", "not supported"},
    {"min_new_tokens", "not supported"},
    {"num_return_sequences", "not supported: call once per sequence, with different seeds"},
    {"num_beams", "beam search is not supported for this task"},
    {"topk", "use top_k"},
    {"max_tokens", "use max_new_tokens"},
    {"n_predict", "use max_new_tokens"},
    {"stop_sequences", "use stop"},
    {"eos_token_id", "use stop_token_ids (ids that end the generation, beside the model's own end ids)"},
    {"stopping_criteria", "use stop (strings) or an AbortSignal (signal)"},
    {"quantized", "use dtype"},
};

size_t edit_distance(const std::string& a, const std::string& b) {
    std::vector<size_t> row(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= b.size(); ++j) {
            const size_t up = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] != b[j - 1])});
            diag = up;
        }
    }
    return row[b.size()];
}

const char* kind_of(const json& v) {
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

// Reads the options of one call: each known name once, with its reader; whatever is left is unknown.
class reader {
public:
    reader(const json& o, const char* call) : o_(o), call_(call) {
        if (!o.is_object()) throw error(std::string(call) + " options must be an object, got " + kind_of(o));
    }
    // null means the default, unless take_null (text-classification's top_k: null = every label, as transformers)
    void on(const char* name, const std::function<void(const json&)>& read, bool take_null = false) {
        known_.push_back(name);
        if (o_.contains(name) && (take_null || !o_[name].is_null())) read(o_[name]);
    }
    template <class E>
    E choice(const char* name, const json& v, std::initializer_list<std::pair<const char*, E>> values) const {
        std::string all;
        for (auto& [n, e] : values) {
            if (v.is_string() && v.get<std::string>() == n) return e;
            all += (all.empty() ? "" : ", ") + std::string(n);
        }
        bad(name, v, "one of " + all);
    }
    void finish() const {
        for (auto it = o_.begin(); it != o_.end(); ++it) {
            if (std::find(known_.begin(), known_.end(), it.key()) != known_.end()) continue;
            std::string msg = std::string(call_) + ": unknown option \"" + it.key() + "\"";
            for (auto& [name, hint] : kForeign)
                if (it.key() == name) throw error(msg + " (" + hint + ")");
            std::string best;
            size_t d = 4;
            for (const std::string& k : known_)
                if (const size_t e = edit_distance(it.key(), k); e < d && e * 3 <= std::max(it.key().size(), k.size())) best = k, d = e;
            if (!best.empty()) throw error(msg + " (did you mean \"" + best + "\"?)");
            std::string all;
            for (auto& k : known_) all += (all.empty() ? "" : ", ") + k;
            throw error(msg + " (known: " + all + ")");
        }
    }
    [[noreturn]] void bad(const char* name, const json& v, const std::string& want) const {
        throw error(std::string(call_) + ": option " + name + " must be " + want + ", got " + v.dump().substr(0, 40) + " (" + kind_of(v) + ")");
    }
    int64_t integer(const char* name, const json& v, int64_t lo, int64_t hi) const {
        if (!v.is_number_integer()) bad(name, v, "an integer");
        if (v.is_number_unsigned() ? v.get<uint64_t>() > uint64_t(hi) : v.get<int64_t>() < lo || v.get<int64_t>() > hi)
            throw error(std::string(call_) + ": option " + name + " = " + v.dump() + " is outside [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
        return v.get<int64_t>();
    }
    float number(const char* name, const json& v) const {
        if (!v.is_number()) bad(name, v, "a number");
        const double d = v.get<double>();
        if (!std::isfinite(d)) bad(name, v, "a finite number");
        return float(d);
    }
    bool boolean(const char* name, const json& v) const {
        if (!v.is_boolean()) bad(name, v, "true or false");
        return v.get<bool>();
    }
    std::vector<std::string> strings(const char* name, const json& v) const {  // a string or a list of strings
        if (v.is_string()) return {v.get<std::string>()};
        if (!v.is_array()) bad(name, v, "a string or a list of strings");
        std::vector<std::string> out;
        for (const json& s : v) {
            if (!s.is_string()) bad(name, v, "a string or a list of strings");
            out.push_back(s.get<std::string>());
        }
        return out;
    }

private:
    const json& o_;
    const char* call_;
    std::vector<std::string> known_;
};

constexpr int64_t kMaxI = std::numeric_limits<int32_t>::max();

}  // namespace

fill_mask_options parse_fill_mask_options(const json& o) {
    fill_mask_options f;
    reader r(o, "fill-mask");
    r.on("top_k", [&](const json& v) { f.top_k = r.integer("top_k", v, 1, kMaxI); });
    r.on("targets", [&](const json& v) { f.targets = r.strings("targets", v); });
    r.on("attention_layer", [&](const json& v) { f.attention_layer = int(r.integer("attention_layer", v, -1, 1023)); });
    r.finish();
    return f;
}

generation_params parse_generation_options(const json& o) {
    generation_params p;
    sampling_params& s = p.sampling;
    reader r(o, "text-generation");
    r.on("max_new_tokens", [&](const json& v) { p.max_new_tokens = r.integer("max_new_tokens", v, 0, kMaxI); });
    r.on("do_sample", [&](const json& v) { s.do_sample = r.boolean("do_sample", v); });
    r.on("temperature", [&](const json& v) { s.temperature = r.number("temperature", v); });
    r.on("top_k", [&](const json& v) { s.top_k = r.integer("top_k", v, 0, kMaxI); });
    r.on("top_p", [&](const json& v) { s.top_p = r.number("top_p", v); });
    r.on("min_p", [&](const json& v) { s.min_p = r.number("min_p", v); });
    r.on("repetition_penalty", [&](const json& v) { s.repetition_penalty = r.number("repetition_penalty", v); });
    r.on("no_repeat_ngram_size", [&](const json& v) { s.no_repeat_ngram_size = r.integer("no_repeat_ngram_size", v, 0, kMaxI); });
    r.on("seed", [&](const json& v) { s.seed = uint64_t(r.integer("seed", v, 0, std::numeric_limits<int64_t>::max())); });
    r.on("stop", [&](const json& v) { p.stop = r.strings("stop", v); });
    r.on("stop_at_eos", [&](const json& v) { p.stop_at_eos = r.boolean("stop_at_eos", v); });
    r.on("stop_token_ids", [&](const json& v) {
        const json list = v.is_array() ? v : json::array({v});
        for (const json& e : list) {
            if (!e.is_number_integer()) r.bad("stop_token_ids", v, "a token id or a list of token ids");
            p.stop_token_ids.push_back(int32_t(r.integer("stop_token_ids", e, 0, kMaxI)));
        }
    });
    r.on("add_special_tokens", [&](const json& v) { p.add_special_tokens = r.boolean("add_special_tokens", v); });
    r.on("skip_special_tokens", [&](const json& v) { p.skip_special_tokens = r.boolean("skip_special_tokens", v); });
    r.on("attention_layer", [&](const json& v) { p.attention_layer = int(r.integer("attention_layer", v, -1, 1023)); });
    r.on("reuse_cache", [&](const json& v) { p.reuse_cache = r.boolean("reuse_cache", v); });
    r.on("output_scores", [&](const json& v) { p.output_scores = r.boolean("output_scores", v); });
    r.finish();
    validate(s);
    for (auto& st : p.stop)
        if (st.empty()) throw error("text-generation: stop strings must not be empty");
    return p;
}

namespace {
std::vector<std::vector<int32_t>> id_lists(const json& v, const std::string& what) {  // [[id, …], …]
    std::vector<std::vector<int32_t>> out;
    if (!v.is_array()) throw error(what + " must be a list of lists of token ids");
    for (const json& word : v) {
        if (!word.is_array() || word.empty()) throw error(what + " must be a list of non-empty lists of token ids");
        std::vector<int32_t> ids;
        for (const json& id : word) {
            if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() > kMaxI) throw error(what + ": " + id.dump() + " is not a token id");
            ids.push_back(int32_t(id.get<int64_t>()));
        }
        out.push_back(std::move(ids));
    }
    return out;
}
seq2seq_params::stopping early_stopping_of(const json& v, const std::string& what) {
    if (v.is_boolean()) return v.get<bool>() ? seq2seq_params::stopping::early : seq2seq_params::stopping::heuristic;
    if (v.is_string() && v.get<std::string>() == "never") return seq2seq_params::stopping::never;
    throw error(what + " must be true, false or \"never\", got " + v.dump().substr(0, 40));
}
}  // namespace

void read_seq2seq_defaults(const json& j, const std::string& file, seq2seq_params& p) {
    if (!j.is_object()) throw error(file + ": must be a JSON object");
    auto has = [&](const char* k) { return j.contains(k) && !j[k].is_null(); };
    auto integer = [&](const char* k, int64_t lo, int64_t hi) {
        if (!j[k].is_number_integer() || j[k].get<int64_t>() < lo || j[k].get<int64_t>() > hi)
            throw error(file + ": " + k + " must be an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " + j[k].dump().substr(0, 40));
        return j[k].get<int64_t>();
    };
    auto number = [&](const char* k) {
        if (!j[k].is_number() || !std::isfinite(j[k].get<double>())) throw error(file + ": " + k + " must be a number");
        return float(j[k].get<double>());
    };
    auto boolean = [&](const char* k) {
        if (!j[k].is_boolean()) throw error(file + ": " + k + " must be true or false");
        return j[k].get<bool>();
    };
    if (has("max_length")) p.max_new_tokens = integer("max_length", 1, kMaxI) - 1;
    if (has("max_new_tokens")) p.max_new_tokens = integer("max_new_tokens", 0, kMaxI);
    if (has("num_beams")) p.num_beams = integer("num_beams", 1, 64);
    if (has("num_return_sequences")) p.num_return_sequences = integer("num_return_sequences", 1, 64);
    if (has("length_penalty")) p.length_penalty = number("length_penalty");
    if (has("early_stopping")) p.early_stopping = early_stopping_of(j["early_stopping"], file + ": early_stopping");
    if (has("no_repeat_ngram_size")) p.no_repeat_ngram_size = integer("no_repeat_ngram_size", 0, kMaxI);
    if (has("bad_words_ids")) p.bad_words_ids = id_lists(j["bad_words_ids"], file + ": bad_words_ids");
    if (has("forced_eos_token_id")) p.forced_eos_token_id = int32_t(integer("forced_eos_token_id", 0, kMaxI));
    if (has("renormalize_logits")) p.renormalize_logits = boolean("renormalize_logits");
    if (has("do_sample")) p.sampling.do_sample = boolean("do_sample");
    if (has("temperature")) p.sampling.temperature = number("temperature");
    if (has("top_k")) p.sampling.top_k = integer("top_k", 0, kMaxI);
    if (has("top_p")) p.sampling.top_p = number("top_p");
    if (has("decoder_start_token_id")) p.decoder_start_token_id = int32_t(integer("decoder_start_token_id", 0, kMaxI));
    if (has("eos_token_id")) p.eos_token_id = int32_t(integer("eos_token_id", 0, kMaxI));
    if (has("pad_token_id")) p.pad_token_id = int32_t(integer("pad_token_id", 0, kMaxI));
}

seq2seq_params parse_seq2seq_options(const json& o, const seq2seq_params& defaults, const char* task) {
    seq2seq_params p = defaults;
    sampling_params& s = p.sampling;
    reader r(o, task);
    const std::string t = task;
    r.on("max_new_tokens", [&](const json& v) { p.max_new_tokens = r.integer("max_new_tokens", v, 1, kMaxI); });
    r.on("num_beams", [&](const json& v) { p.num_beams = r.integer("num_beams", v, 1, 64); });
    r.on("num_return_sequences", [&](const json& v) { p.num_return_sequences = r.integer("num_return_sequences", v, 1, 64); });
    r.on("length_penalty", [&](const json& v) { p.length_penalty = r.number("length_penalty", v); });
    r.on("early_stopping", [&](const json& v) { p.early_stopping = early_stopping_of(v, t + ": option early_stopping"); });
    r.on("no_repeat_ngram_size", [&](const json& v) { p.no_repeat_ngram_size = r.integer("no_repeat_ngram_size", v, 0, kMaxI); });
    r.on("bad_words_ids", [&](const json& v) { p.bad_words_ids = id_lists(v, t + ": option bad_words_ids"); });
    r.on("renormalize_logits", [&](const json& v) { p.renormalize_logits = r.boolean("renormalize_logits", v); });
    // null turns the model's forced EOS off, as in Hugging Face's generate()
    r.on("forced_eos_token_id", [&](const json& v) { p.forced_eos_token_id = v.is_null() ? -1 : int32_t(r.integer("forced_eos_token_id", v, 0, kMaxI)); }, true);
    r.on("do_sample", [&](const json& v) { s.do_sample = r.boolean("do_sample", v); });
    r.on("temperature", [&](const json& v) { s.temperature = r.number("temperature", v); });
    r.on("top_k", [&](const json& v) { s.top_k = r.integer("top_k", v, 0, kMaxI); });
    r.on("top_p", [&](const json& v) { s.top_p = r.number("top_p", v); });
    r.on("seed", [&](const json& v) { s.seed = uint64_t(r.integer("seed", v, 0, std::numeric_limits<int64_t>::max())); });
    r.on("output_attentions", [&](const json& v) { p.output_attentions = r.boolean("output_attentions", v); });
    r.on("output_scores", [&](const json& v) { p.output_scores = r.boolean("output_scores", v); });
    r.on("skip_special_tokens", [&](const json& v) { p.skip_special_tokens = r.boolean("skip_special_tokens", v); });
    r.finish();
    validate(s);
    if (p.num_return_sequences > p.num_beams)
        throw error(t + ": num_return_sequences (" + std::to_string(p.num_return_sequences) + ") must not exceed num_beams (" + std::to_string(p.num_beams) + ")");
    if (s.do_sample && p.num_beams > 1) throw error(t + ": do_sample with num_beams > 1 (beam sampling) is not supported: give num_beams: 1 to sample (this model's default is " + std::to_string(defaults.num_beams) + " beams)");
    return p;
}

chat_options parse_chat_options(const json& o) {
    chat_options c;
    reader r(o, "chat");
    r.on("chat_template", [&](const json& v) {
        if (!v.is_string()) r.bad("chat_template", v, "a string (a template, or the name of one of the model's)");
        c.chat_template = v.get<std::string>();
        if (c.chat_template.empty()) throw error("chat: option chat_template is empty");
    });
    r.on("tools", [&](const json& v) {
        if (!v.is_array()) r.bad("tools", v, "a list of tools (JSON schemas)");
        c.tools = true;
    });
    r.on("documents", [&](const json& v) {
        if (!v.is_array()) r.bad("documents", v, "a list of documents (objects such as {title, text})");
    });
    bool prompt = false, cont = false;
    r.on("add_generation_prompt", [&](const json& v) { prompt = r.boolean("add_generation_prompt", v); });
    r.on("continue_final_message", [&](const json& v) { cont = r.boolean("continue_final_message", v); });
    r.on("chat_template_kwargs", [&](const json& v) {
        if (!v.is_object()) r.bad("chat_template_kwargs", v, "an object of template variables");
    });
    r.finish();
    if (prompt && cont)
        throw error("chat: add_generation_prompt and continue_final_message cannot both be true (one starts a new assistant turn, the other "
                    "continues the last message)");
    return c;
}

load_options parse_load_options(const json& o) {
    load_options l;
    reader r(o, "load");
    r.on("dtype", [&](const json& v) {
        if (!v.is_string()) r.bad("dtype", v, "a string");
        l.dtype = dtype_option::parse(v.get<std::string>());
    });
    r.on("memory_budget", [&](const json& v) { l.memory_budget = r.integer("memory_budget", v, 0, std::numeric_limits<int64_t>::max()); });
    r.finish();
    return l;
}

feature_extraction_options parse_feature_extraction_options(const json& o) {
    feature_extraction_options f;
    reader r(o, "feature-extraction");
    r.on("pooling", [&](const json& v) { f.pool = r.choice<pooling>("pooling", v, {{"none", pooling::none}, {"mean", pooling::mean}, {"cls", pooling::cls}}); });
    r.on("normalize", [&](const json& v) { f.normalize = r.boolean("normalize", v); });
    r.finish();
    return f;
}

text_classification_options parse_text_classification_options(const json& o) {
    text_classification_options t;
    reader r(o, "text-classification");
    r.on("top_k", [&](const json& v) { t.top_k = v.is_null() ? 0 : r.integer("top_k", v, 0, kMaxI); }, true);
    r.on("function_to_apply", [&](const json& v) {
        t.function = r.choice<score_function>("function_to_apply", v, {{"default", score_function::automatic}, {"softmax", score_function::softmax},
                                                                        {"sigmoid", score_function::sigmoid}, {"none", score_function::none}});
    });
    r.finish();
    return t;
}

token_classification_options parse_token_classification_options(const json& o) {
    token_classification_options t;
    reader r(o, "token-classification");
    r.on("aggregation_strategy", [&](const json& v) {
        t.strategy = r.choice<aggregation>("aggregation_strategy", v, {{"none", aggregation::none}, {"simple", aggregation::simple},
                                                                       {"first", aggregation::first}, {"average", aggregation::average},
                                                                       {"max", aggregation::max}});
    });
    r.on("ignore_labels", [&](const json& v) { t.ignore_labels = r.strings("ignore_labels", v); });
    r.finish();
    return t;
}

question_answering_options parse_question_answering_options(const json& o) {
    question_answering_options q;
    reader r(o, "question-answering");
    r.on("top_k", [&](const json& v) { q.top_k = r.integer("top_k", v, 1, kMaxI); });
    r.on("doc_stride", [&](const json& v) { q.doc_stride = r.integer("doc_stride", v, 0, kMaxI); });
    r.on("max_answer_len", [&](const json& v) { q.max_answer_len = r.integer("max_answer_len", v, 1, kMaxI); });
    r.on("max_seq_len", [&](const json& v) { q.max_seq_len = r.integer("max_seq_len", v, 1, kMaxI); });
    r.on("max_question_len", [&](const json& v) { q.max_question_len = r.integer("max_question_len", v, 1, kMaxI); });
    r.on("handle_impossible_answer", [&](const json& v) { q.handle_impossible_answer = r.boolean("handle_impossible_answer", v); });
    r.on("align_to_words", [&](const json& v) { q.align_to_words = r.boolean("align_to_words", v); });
    r.finish();
    return q;
}

zero_shot_options parse_zero_shot_options(const json& o) {
    zero_shot_options z;
    reader r(o, "zero-shot-classification");
    r.on("hypothesis_template", [&](const json& v) {
        if (!v.is_string()) r.bad("hypothesis_template", v, "a string");
        z.hypothesis_template = v.get<std::string>();
        if (z.hypothesis_template.find("{}") == std::string::npos)
            throw error("zero-shot-classification: hypothesis_template \"" + z.hypothesis_template.substr(0, 60) + "\" has no {} for the label");
    });
    r.on("multi_label", [&](const json& v) { z.multi_label = r.boolean("multi_label", v); });
    r.finish();
    return z;
}

}  // namespace wf
