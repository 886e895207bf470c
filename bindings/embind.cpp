// Embind bindings: types, lifetimes and errors, nothing else.
//
// Text and options come in as UTF-8 bytes (Uint8Array → std::string, copied byte for byte, never through
// Emscripten's string conversion). Results go out as a view of bytes (UTF-8 JSON) or floats that the JavaScript
// side copies at once (`.slice()`); the view is valid until the next call on the same object. A failed call
// returns {"error": message} instead of throwing, so that a C++ error never leaves a wasm exception behind, and the
// JavaScript layer throws an Error with that message. Every object has delete() (wrapped as dispose()).
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <memory>
#include <new>

#include "json-util.h"
#include "tasks.h"
#include "threads.h"

using emscripten::val;

namespace {

wf::weight_format parse_format(const std::string& f) {
    if (f == "" || f == "as_stored") return wf::weight_format::as_stored;
    if (f == "f32") return wf::weight_format::f32;
    if (f == "f16") return wf::weight_format::f16;
    if (f == "q8_0") return wf::weight_format::q8_0;
    throw wf::error("unknown weight format \"" + f + "\" (use as_stored, f32, f16 or q8_0)");
}

// Runs f, which fills `out` with a JSON result; on failure `out` becomes {"error": …}.
template <class F>
val guarded(std::string& out, F&& f) {
    try {
        out = f().dump();
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

wf::json options(const std::string& bytes) { return bytes.empty() ? wf::json::object() : wf::parse_json_strict(bytes, "options", 1 << 20); }

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
    val load(FileSet& fs, const std::string& opts_json) {
        return guarded(out_, [&] {
            const wf::json o = options(opts_json);
            wf::load_options lo;
            if (o.contains("dtype") && o["dtype"].is_string()) lo.format = parse_format(o["dtype"].get<std::string>());
            if (o.contains("memory_budget") && o["memory_budget"].is_number()) lo.memory_budget = o["memory_budget"].get<int64_t>();
            gen_.reset();
            pm_ = std::make_unique<wf::pipeline_model>(wf::load_pipeline_model(fs.files_, lo));
            return info_json();
        });
    }
    val info() {
        return guarded(out_, [&] { return info_json(); });
    }
    val encode(const std::string& text, bool add_special) {
        return guarded(out_, [&] { return wf::json(need().tok->encode(text, add_special)); });
    }
    val decode(const std::string& ids_json, bool skip_special) {
        return guarded(out_, [&] {
            const auto ids = wf::parse_json_strict(ids_json, "ids").get<std::vector<int32_t>>();
            return wf::json(need().tok->decode(ids, skip_special));
        });
    }
    val fillMask(const std::string& text, const std::string& opts_json, val cancel) {
        return guarded(out_, [&] {
            const wf::cancel_fn stop = cancel_from(cancel);
            const wf::json o = options(opts_json);
            wf::fill_mask_options fo;
            if (o.contains("top_k")) fo.top_k = o["top_k"].get<int64_t>();
            if (o.contains("targets")) fo.targets = o["targets"].get<std::vector<std::string>>();
            wf::forward_trace trace;
            if (o.contains("attention_layer")) trace.attention_layer = int(o["attention_layer"].get<int64_t>());
            fo.trace = &trace;
            fo.cancel = &stop;
            const auto res = wf::fill_mask(need(), text, fo);
            wf::json lists = wf::json::array();
            for (auto& list : res) {
                wf::json l = wf::json::array();
                for (auto& c : list) l.push_back({{"score", c.score}, {"token", c.token}, {"token_str", c.token_str}, {"sequence", c.sequence}});
                lists.push_back(l);
            }
            wf::json r = {{"results", lists}};
            store_attention(trace, r);
            return r;
        });
    }
    val generateStart(const std::string& prompt, const std::string& opts_json) {
        return guarded(out_, [&] {
            const wf::json o = options(opts_json);
            wf::generation_params p;
            auto& s = p.sampling;
            if (o.contains("max_new_tokens")) p.max_new_tokens = o["max_new_tokens"].get<int64_t>();
            if (o.contains("do_sample")) s.do_sample = o["do_sample"].get<bool>();
            if (o.contains("temperature")) s.temperature = o["temperature"].get<float>();
            if (o.contains("top_k")) s.top_k = o["top_k"].get<int64_t>();
            if (o.contains("top_p")) s.top_p = o["top_p"].get<float>();
            if (o.contains("min_p")) s.min_p = o["min_p"].get<float>();
            if (o.contains("repetition_penalty")) s.repetition_penalty = o["repetition_penalty"].get<float>();
            if (o.contains("no_repeat_ngram_size")) s.no_repeat_ngram_size = o["no_repeat_ngram_size"].get<int64_t>();
            if (o.contains("seed")) s.seed = o["seed"].get<uint64_t>();
            if (o.contains("stop")) p.stop = o["stop"].get<std::vector<std::string>>();
            attention_layer_ = o.contains("attention_layer") ? int(o["attention_layer"].get<int64_t>()) : -2;
            gen_.reset();
            gen_ = std::make_unique<wf::generation>(need(), prompt, p);
            return wf::json{{"prompt_tokens", gen_->prompt_ids().size()}};
        });
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
            if (t) r.update({{"id", t->id}, {"text", t->text}, {"logprob", t->logprob}});
            if (first) store_attention(trace, r);
            return r;
        });
    }
    // The attention weights of the last call that asked for them: (n_head, T, n_kv) floats, copied by the caller.
    val attention() const { return val(emscripten::typed_memory_view(attention_.size(), attention_.data())); }

private:
    const wf::pipeline_model& need() const {
        if (!pm_) throw wf::error("no model loaded");
        return *pm_;
    }
    wf::json info_json() const {
        const auto& hp = need().m.hp;
        const int64_t bytes = hp.architecture == wf::arch::bert ? need().m.bert->weight_bytes() : need().m.gpt2->weight_bytes();
        return {{"architecture", wf::arch_name(hp.architecture)}, {"n_layer", hp.n_layer}, {"n_embd", hp.n_embd}, {"n_head", hp.n_head},
                {"n_vocab", hp.n_vocab}, {"n_ctx", hp.n_ctx}, {"weight_bytes", bytes}, {"borrows_file_bytes", bool(need().m.files)},
                {"mask_token", hp.architecture == wf::arch::bert ? need().tok->token(need().tok->special().mask) : ""}};
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
    std::vector<float> attention_;
    int attention_layer_ = -2;
    std::string out_;
};

// A tokenizer on its own (from tokenizer.json, vocab.txt or vocab.json + merges.txt).
class Tokenizer {
public:
    val load(FileSet& fs) {
        return guarded(out_, [&] {
            const auto& f = *fs.files_;
            const wf::arch a = f.has("vocab.txt") || (f.has("config.json") && wf::parse_config(f.text("config.json")).architecture == wf::arch::bert)
                                   ? wf::arch::bert
                                   : wf::arch::gpt2;
            tok_ = wf::load_tokenizer(f, a);
            return wf::json{{"vocab_size", tok_->vocab_size()}, {"byte_level", tok_->is_byte_level()}};
        });
    }
    val encode(const std::string& text, bool add_special) {
        return guarded(out_, [&] { return wf::json(need().encode(text, add_special)); });
    }
    val decode(const std::string& ids_json, bool skip_special) {
        return guarded(out_, [&] { return wf::json(need().decode(wf::parse_json_strict(ids_json, "ids").get<std::vector<int32_t>>(), skip_special)); });
    }

private:
    const wf::tokenizer& need() const {
        if (!tok_) throw wf::error("no tokenizer loaded");
        return *tok_;
    }
    std::unique_ptr<wf::tokenizer> tok_;
    std::string out_;
};

}  // namespace

EMSCRIPTEN_BINDINGS(wasmformer) {
    // The engine's thread count (the caller included); returns the count reached (1 in the build without threads).
    emscripten::function("setThreads", +[](int n) { return wf::set_thread_count(n); });
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
        .function("generateStart", &Pipeline::generateStart)
        .function("generateStep", &Pipeline::generateStep)
        .function("attention", &Pipeline::attention);
    emscripten::class_<Tokenizer>("Tokenizer")
        .constructor<>()
        .function("load", &Tokenizer::load)
        .function("encode", &Tokenizer::encode)
        .function("decode", &Tokenizer::decode);
}
