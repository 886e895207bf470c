// Embind bindings: types, lifetimes and errors, nothing else.
//
// Text and options come in as UTF-8 bytes (Uint8Array → std::string, copied byte for byte, never through
// Emscripten's string conversion); options are JSON objects that the core parses and checks (tasks/options.h).
// Results go out as a view of bytes (UTF-8 JSON) or floats that the JavaScript side copies at once (`.slice()`);
// the view is valid until the next call on the same object. A failed call returns {"error": message} instead of
// throwing, so that a C++ error never leaves a wasm exception behind, and the JavaScript layer throws an Error
// with that message. Every object has delete() (wrapped as dispose()).
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <memory>
#include <new>
#include <utility>

#include "core/json.h"
#include "kernels/parallel.h"
#include "kernels/relaxed.h"
#include "tasks/encoder-tasks.h"
#include "tasks/fill-mask.h"
#include "tasks/generation.h"
#include "tasks/seq2seq.h"
#include "tokenizers/load.h"

using emscripten::val;

namespace {

// Runs f, which returns the JSON result; on failure the result is {"error": …}. The bytes live in `out`.
template <class F>
val guarded(std::string& out, F&& f) {
    try {
        out = f().dump(-1, ' ', false, wf::json::error_handler_t::replace);
    } catch (const std::bad_alloc&) {
        out = wf::json{{"error", "out of memory"}}.dump();
    } catch (const wf::cancelled&) {
        out = wf::json{{"error", "cancelled"}, {"cancelled", true}}.dump();
    } catch (const std::exception& e) {
        out = wf::json{{"error", e.what()}}.dump(-1, ' ', false, wf::json::error_handler_t::replace);
    }
    return val(emscripten::typed_memory_view(out.size(), reinterpret_cast<const uint8_t*>(out.data())));
}

// A JavaScript function polled between layers (it reads a flag the page can set while this call runs); undefined:
// never cancelled here.
wf::cancel_fn cancel_from(const val& f) {
    if (f.isUndefined() || f.isNull()) return {};
    return [f] { return f().as<bool>(); };
}

wf::json parse(const std::string& bytes, const char* what) { return bytes.empty() ? wf::json::object() : wf::parse_json_strict(bytes, what, 1 << 20); }

class FileSet {
public:
    FileSet() : files_(std::make_shared<wf::file_set>()) {}
    // Allocates a buffer for a file and returns its address in wasm memory (0 when it cannot be allocated).
    double allocate(const std::string& name, double size) {
        try {
            return double(reinterpret_cast<uintptr_t>(files_->allocate(name, int64_t(size))));
        } catch (const std::exception&) {
            return 0;
        }
    }
    bool has(const std::string& name) const { return files_->has(name); }
    void remove(const std::string& name) { files_->remove(name); }
    std::shared_ptr<wf::file_set> files_;
};

class Pipeline {
public:
    val load(FileSet& fs, const std::string& opts) {
        return guarded(out_, [&] {
            wf::load_options lo = wf::parse_load_options(parse(opts, "load options"));
            // A FileSet is one load's: the files stay with the model (or go), and the load may rewrite them in place
            // (group a GGUF's own q8_0 / q4_0 / q5_0 / iq4_nl / q4_K rows: nn/weights.h), so the FileSet is emptied whatever happens
            lo.files_writable = true;
            auto files = std::exchange(fs.files_, std::make_shared<wf::file_set>());
            gen_.reset();
            pm_.reset();
            pm_ = std::make_unique<wf::pipeline_model>(wf::load_pipeline_model(std::move(files), lo));
            return info_json();
        });
    }
    val info() {
        return guarded(out_, [&] { return info_json(); });
    }
    val encode(const std::string& text, bool add_special) {
        return guarded(out_, [&] { return wf::json(need().tok->encode(text, add_special)); });
    }
    val decode(const std::string& ids, bool skip_special) {
        return guarded(out_, [&] { return wf::json(need().tok->decode(parse(ids, "ids").get<std::vector<int32_t>>(), skip_special)); });
    }
    val fillMask(const std::string& text, const std::string& opts, val cancel) {
        return guarded(out_, [&] {
            const wf::cancel_fn stop = cancel_from(cancel);
            const wf::fill_mask_options fo = wf::parse_fill_mask_options(parse(opts, "fill-mask options"));
            wf::forward_trace trace;
            trace.attention_layer = fo.attention_layer;
            wf::json lists = wf::json::array();
            for (auto& list : wf::fill_mask(need(), text, fo, &trace, &stop)) lists.push_back(candidates(list));
            wf::json r = {{"results", lists}};
            store_attention(trace, r);
            return r;
        });
    }
    // Several texts, one padded forward pass: {"batch": [results of text 1, …]} (no attention).
    val fillMaskBatch(const std::string& texts, const std::string& opts, val cancel) {
        return guarded(out_, [&] {
            const wf::cancel_fn stop = cancel_from(cancel);
            const wf::fill_mask_options fo = wf::parse_fill_mask_options(parse(opts, "fill-mask options"));
            if (fo.attention_layer != -2) throw wf::error("fill-mask: attention_layer is for one text at a time");
            wf::json batch = wf::json::array();
            for (auto& per_text : wf::fill_mask(need(), parse(texts, "texts").get<std::vector<std::string>>(), fo, nullptr, &stop)) {
                wf::json lists = wf::json::array();
                for (auto& list : per_text) lists.push_back(candidates(list));
                batch.push_back(lists);
            }
            return wf::json{{"batch", batch}};
        });
    }
    val generateStart(const std::string& prompt, const std::string& opts) {
        return guarded(out_, [&] {
            const wf::generation_params p = wf::parse_generation_options(parse(opts, "text-generation options"));
            // the last generation's cache goes to the next (a chat's next turn runs only what is new)
            wf::generation_cache prior = gen_ ? gen_->release_cache() : wf::generation_cache{};
            gen_.reset();
            gen_ = std::make_unique<wf::generation>(need(), prompt, p, std::move(prior));
            attention_layer_ = p.attention_layer;
            return wf::json{{"prompt_tokens", gen_->prompt_ids().size()}, {"prompt_ids", gen_->prompt_ids()}, {"cached_tokens", gen_->reused_tokens()}};
        });
    }
    // Streaming translation (tasks/seq2seq.h: seq2seq_session): start, then steps of {id, text} (the text the token
    // adds to the translation so far), the last with done and the results (every returned hypothesis).
    val translateStart(const std::string& task, const std::string& text, const std::string& opts) {
        return guarded(out_, [&] {
            tr_.reset();
            tr_ = std::make_unique<wf::seq2seq_session>(need(), task, text, parse(opts, "translation options"));
            return wf::json{{"source_ids", tr_->source_ids()}};
        });
    }
    val translateStep(val cancel) {
        return guarded(out_, [&] {
            const wf::cancel_fn stop = cancel_from(cancel);
            if (!tr_) throw wf::error("no translation in progress");
            wf::json r = tr_->step_json(&stop);
            if (tr_->finished()) tr_.reset();
            return r;
        });
    }
    // A chat's template and the special tokens' texts, for the JavaScript side to render (tasks/generation.h).
    val chatTemplate(const std::string& messages, const std::string& opts) {
        return guarded(out_, [&] { return wf::chat_template_json(need().chat, wf::parse_json_strict(messages, "messages", 64 << 20), parse(opts, "chat options")); });
    }
    val generateStep(val cancel) {
        return guarded(out_, [&] {
            const wf::cancel_fn stop = cancel_from(cancel);
            if (!gen_) throw wf::error("no generation in progress");
            wf::forward_trace trace;
            trace.attention_layer = attention_layer_;
            const bool first = gen_->ids().empty();
            const auto t = gen_->step(&stop, first ? &trace : nullptr);
            wf::json r = {{"done", gen_->finished()}, {"finish_reason", gen_->finish_reason()}};
            if (t) r.update({{"id", t->id}, {"text", t->text}});
            if (t && t->logprob) r["logprob"] = *t->logprob;
            if (first) store_attention(trace, r);
            return r;
        });
    }
    // The encoder tasks (tasks/encoder-tasks.h: run_encoder_task), offsets as JavaScript string indices;
    // feature-extraction's numbers through features().
    val run(const std::string& task, const std::string& inputs, const std::string& opts, val cancel) {
        return guarded(out_, [&] {
            const wf::cancel_fn stop = cancel_from(cancel);
            // inputs: a batch of texts, each at most 1 MiB (the tasks check), together at most 64 MiB
            const wf::json in = inputs.empty() ? wf::json::object() : wf::parse_json_strict(inputs, "inputs", 64 << 20);
            return wf::run_encoder_task(need(), task, in, parse(opts, "options"), true, floats_, &stop);
        });
    }
    // feature-extraction's numbers of the last run, copied by the caller.
    val features() const { return val(emscripten::typed_memory_view(floats_.size(), floats_.data())); }
    // The attention weights of the last call that asked for them: (n_head, T, n_kv) floats, copied by the caller.
    val attention() const { return val(emscripten::typed_memory_view(attention_.size(), attention_.data())); }

private:
    const wf::pipeline_model& need() const {
        if (!pm_) throw wf::error("no model loaded");
        return *pm_;
    }
    wf::json info_json() const {
        const wf::pipeline_model& pm = need();
        const wf::hparams& hp = pm.hp();
        const int32_t mask = pm.tok->special().mask;
        return {{"architecture", hp.arch}, {"tasks", wf::supported_tasks(pm.m())}, {"n_layer", hp.n_layer}, {"n_embd", hp.n_embd},
                {"n_head", hp.n_head}, {"n_vocab", hp.n_vocab}, {"n_ctx", hp.n_ctx}, {"dtype", pm.loaded.dtype},
                {"weight_bytes", pm.m().weight_bytes()}, {"borrows_file_bytes", bool(pm.loaded.files)},
                {"mask_token", mask >= 0 ? pm.tok->token(mask) : ""}, {"chat_templates", template_names(pm.chat)}, {"end_ids", pm.end_ids}};
    }
    static wf::json template_names(const wf::chat_config& c) {
        wf::json n = wf::json::array();
        for (auto& [name, t] : c.templates) n.push_back(name);
        return n;
    }
    static wf::json candidates(const std::vector<wf::fill_mask_candidate>& list) {
        wf::json l = wf::json::array();
        for (auto& c : list) l.push_back({{"score", c.score}, {"token", c.token}, {"token_str", c.token_str}, {"sequence", c.sequence}});
        return l;
    }
    void store_attention(wf::forward_trace& trace, wf::json& r) {
        attention_.clear();
        if (trace.attention.empty()) return;
        attention_ = std::move(trace.attention.back());
        r["attention_layer"] = trace.attention_layers.back();
        r["attention_size"] = attention_.size();
    }
    std::unique_ptr<wf::pipeline_model> pm_;
    std::unique_ptr<wf::generation> gen_;
    std::unique_ptr<wf::seq2seq_session> tr_;
    std::vector<float> attention_;
    std::vector<float> floats_;  // feature-extraction's output
    int attention_layer_ = -2;
    std::string out_;
};

// A tokenizer on its own (from tokenizer.json, vocab.txt or vocab.json + merges.txt).
class Tokenizer {
public:
    val load(FileSet& fs) {
        return guarded(out_, [&] {
            tok_ = wf::load_tokenizer(*fs.files_);
            chat_ = wf::read_chat_config(*fs.files_, *tok_);
            return wf::json{{"vocab_size", tok_->vocab_size()}, {"byte_level", tok_->is_byte_level()}};
        });
    }
    val encode(const std::string& text, bool add_special) {
        return guarded(out_, [&] { return wf::json(need().encode(text, add_special)); });
    }
    val decode(const std::string& ids, bool skip_special) {
        return guarded(out_, [&] { return wf::json(need().decode(parse(ids, "ids").get<std::vector<int32_t>>(), skip_special)); });
    }
    val chatTemplate(const std::string& messages, const std::string& opts) {
        return guarded(out_, [&] {
            need();
            return wf::chat_template_json(chat_, wf::parse_json_strict(messages, "messages", 64 << 20), parse(opts, "chat options"));
        });
    }

private:
    const wf::tokenizer& need() const {
        if (!tok_) throw wf::error("no tokenizer loaded");
        return *tok_;
    }
    std::unique_ptr<wf::tokenizer> tok_;
    wf::chat_config chat_;
    std::string out_;
};

// Which files to fetch: from the names a source lists (selectFiles) or, when it cannot list, the names to ask
// for (candidateFiles). The result lives until the next call of either.
std::string files_out;
val select_files(const std::string& names, bool weights) {
    return guarded(files_out, [&] { return wf::json(wf::select_files(parse(names, "file names").get<std::vector<std::string>>(), weights)); });
}
val candidate_files(bool weights) {
    return guarded(files_out, [&] { return wf::json(wf::candidate_files(weights)); });
}

}  // namespace

EMSCRIPTEN_BINDINGS(wasmformer) {
    // The engine's thread count (the caller included); returns the count reached (1 in the build without threads).
    emscripten::function("setThreads", +[](int n) { return wf::set_thread_count(n); });
    // whether this instance is a build's relaxed-SIMD twin (kernels/relaxed.h)
    emscripten::function("relaxedSimd", +[]() { return wf::relaxed_simd(); });
    emscripten::function("selectFiles", &select_files);
    emscripten::function("candidateFiles", &candidate_files);
    emscripten::class_<FileSet>("FileSet")
        .constructor<>()
        .function("allocate", &FileSet::allocate)
        .function("has", &FileSet::has)
        .function("remove", &FileSet::remove);
    emscripten::class_<Pipeline>("Pipeline")
        .constructor<>()
        .function("load", &Pipeline::load)
        .function("info", &Pipeline::info)
        .function("encode", &Pipeline::encode)
        .function("decode", &Pipeline::decode)
        .function("fillMask", &Pipeline::fillMask)
        .function("fillMaskBatch", &Pipeline::fillMaskBatch)
        .function("generateStart", &Pipeline::generateStart)
        .function("chatTemplate", &Pipeline::chatTemplate)
        .function("generateStep", &Pipeline::generateStep)
        .function("translateStart", &Pipeline::translateStart)
        .function("translateStep", &Pipeline::translateStep)
        .function("run", &Pipeline::run)
        .function("features", &Pipeline::features)
        .function("attention", &Pipeline::attention);
    emscripten::class_<Tokenizer>("Tokenizer")
        .constructor<>()
        .function("load", &Tokenizer::load)
        .function("encode", &Tokenizer::encode)
        .function("decode", &Tokenizer::decode)
        .function("chatTemplate", &Tokenizer::chatTemplate);
}
