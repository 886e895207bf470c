// run_encoder_task (encoder-tasks.h): a task named by the caller, its inputs and results as JSON.
#include <string>
#include <vector>

#include "core/unicode.h"
#include "tasks/encoder-tasks.h"
#include "tasks/seq2seq.h"

namespace wf {

json run_encoder_task(const pipeline_model& pm, const std::string& task, const json& in, const json& o, bool utf16_offsets,
                      std::vector<float>& features, const cancel_fn* cancel) {
    if (!in.is_object()) throw error(task + ": inputs must be an object");
    auto strings = [&](const char* k) {
        std::vector<std::string> v;
        if (!in.contains(k)) return v;
        if (!in[k].is_array()) throw error(task + ": " + k + " must be a list of strings");
        for (const json& x : in[k]) {
            if (!x.is_string()) throw error(task + ": " + k + " must be a list of strings");
            v.push_back(x.get<std::string>());
        }
        return v;
    };
    // a byte offset in text → the caller's unit
    auto at = [&](const std::string& text, int64_t byte) {
        return utf16_offsets ? unicode::utf16_length(std::string_view(text).substr(0, size_t(byte))) : byte;
    };
    const auto texts = strings("texts");
    if (task == "translation" || task == "text2text-generation" || task == "summarization") return run_seq2seq_task(pm, task, texts, o, cancel);
    if (task == "feature-extraction") {
        tensor_out t = feature_extraction(pm, texts, parse_feature_extraction_options(o), cancel);
        features = std::move(t.data);
        return {{"dims", t.dims}};
    }
    json r = json::array();
    if (task == "text-classification") {
        for (auto& list : text_classification(pm, texts, strings("text_pairs"), parse_text_classification_options(o), cancel)) {
            json l = json::array();
            for (auto& x : list) l.push_back({{"label", x.label}, {"score", x.score}});
            r.push_back(l);
        }
    } else if (task == "token-classification") {
        const auto opt = parse_token_classification_options(o);
        const auto all = token_classification(pm, texts, opt, cancel);
        for (size_t i = 0; i < all.size(); ++i) {
            json l = json::array();
            for (auto& e : all[i]) {
                json x = {{opt.strategy == aggregation::none ? "entity" : "entity_group", e.entity}, {"score", e.score}, {"word", e.word},
                          {"start", at(texts[i], e.start)}, {"end", at(texts[i], e.end)}};
                if (e.index >= 0) x["index"] = e.index;
                l.push_back(x);
            }
            r.push_back(l);
        }
    } else if (task == "question-answering") {
        const auto contexts = strings("contexts");
        const auto all = question_answering(pm, strings("questions"), contexts, parse_question_answering_options(o), cancel);
        for (size_t i = 0; i < all.size(); ++i) {
            json l = json::array();
            for (auto& a : all[i])
                l.push_back({{"answer", a.text}, {"score", a.score}, {"start", at(contexts[i], a.start)}, {"end", at(contexts[i], a.end)}});
            r.push_back(l);
        }
    } else if (task == "zero-shot-classification") {
        const auto all = zero_shot_classification(pm, texts, strings("labels"), parse_zero_shot_options(o), cancel);
        for (size_t i = 0; i < all.size(); ++i) r.push_back({{"sequence", texts[i]}, {"labels", all[i].labels}, {"scores", all[i].scores}});
    } else {
        throw error("unknown task \"" + task + "\"");
    }
    return {{"results", r}};
}

}  // namespace wf
