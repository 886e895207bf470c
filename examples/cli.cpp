// wasmformer command line. Flags are the options of the JavaScript API with dashes (--max-new-tokens 20 is
// max_new_tokens: 20), checked by the same parser (tasks/options.h):
//   wasmformer fill-mask --model DIR [--dtype D] [--top-k N] [--targets a,b] "The capital of France is [MASK]."
//   wasmformer generate  --model DIR [--dtype D] [--max-new-tokens N] [--sample] [--temperature T] [--top-k K]
//                        [--top-p P] [--min-p P] [--repetition-penalty R] [--no-repeat-ngram-size N] [--stop S]...
//                        [--seed S] [--logprobs] [--threads N] "Once upon a time"
// DIR is a Hugging Face model folder (config.json, model.safetensors, tokenizer files) or a .gguf file.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "kernels/parallel.h"
#include "tasks/fill-mask.h"
#include "tasks/generation.h"

namespace {

std::shared_ptr<wf::file_set> read_model(const std::string& path) {
    auto fs = std::make_shared<wf::file_set>();
    auto add = [&](const std::filesystem::path& p) {
        std::ifstream f(p, std::ios::binary);
        fs->add(p.filename().string(), std::vector<uint8_t>(std::istreambuf_iterator<char>(f), {}));
    };
    if (std::filesystem::is_regular_file(path)) add(path);
    else if (std::filesystem::is_directory(path))
        for (auto& e : std::filesystem::directory_iterator(path)) {
            if (e.is_regular_file()) add(e.path());
        }
    else throw wf::error(path + ": no such folder or file");
    return fs;
}

int usage() {
    std::fprintf(stderr,
                 "usage: wasmformer fill-mask --model DIR [--dtype D] [--top-k N] [--targets a,b] TEXT\n"
                 "       wasmformer generate --model DIR [--dtype D] [--max-new-tokens N] [--sample] [--temperature T] [--top-k K]\n"
                 "              [--top-p P] [--min-p P] [--repetition-penalty R] [--no-repeat-ngram-size N] [--stop S]...\n"
                 "              [--seed S] [--logprobs] [--threads N] PROMPT\n");
    return 2;
}

// A flag's value as JSON: a number or true/false if it reads as one, else the string.
wf::json value_of(const std::string& s) {
    try {
        const wf::json j = wf::json::parse(s);
        if (j.is_number() || j.is_boolean()) return j;
    } catch (const wf::json::exception&) {
    }
    return s;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) return usage();
    const std::string cmd = argv[1];
    std::string model, text;
    bool have_text = false, logprobs = false;
    wf::json load = wf::json::object(), call = wf::json::object();
    try {
        for (int i = 2; i < argc; ++i) {
            std::string a = argv[i];
            if (a.rfind("--", 0) != 0) {
                if (have_text) return usage();
                text = a, have_text = true;
                continue;
            }
            std::string key = a.substr(2);
            std::replace(key.begin(), key.end(), '-', '_');
            if (key == "sample") key = "do_sample";
            if (key == "logprobs") {
                logprobs = true;
                continue;
            }
            if (key == "do_sample") {  // --sample / --do-sample take no value
                call[key] = true;
                continue;
            }
            if (i + 1 >= argc) return usage();
            const std::string v = argv[++i];
            if (key == "model") model = v;
            else if (key == "dtype" || key == "format") load["dtype"] = v;
            else if (key == "memory_budget") load["memory_budget"] = value_of(v);
            else if (key == "threads") wf::set_thread_count(std::stoi(v));
            else if (key == "stop") call[key].push_back(v);
            else if (key == "targets") {
                for (size_t p = 0, q; p <= v.size(); p = q + 1) call[key].push_back(v.substr(p, (q = std::min(v.find(',', p), v.size())) - p));
            } else call[key] = value_of(v);
        }
        if (model.empty() || !have_text) return usage();
        const auto t0 = std::chrono::steady_clock::now();
        const wf::pipeline_model pm = wf::load_pipeline_model(read_model(model), wf::parse_load_options(load));
        const auto t1 = std::chrono::steady_clock::now();
        std::fprintf(stderr, "loaded %s (%lld layers, %lld wide, %s) in %.0f ms\n", pm.hp().arch.c_str(), (long long)pm.hp().n_layer,
                     (long long)pm.hp().n_embd, pm.loaded.dtype.c_str(), std::chrono::duration<double, std::milli>(t1 - t0).count());
        if (cmd == "fill-mask") {
            const auto res = wf::fill_mask(pm, text, wf::parse_fill_mask_options(call));
            for (size_t m = 0; m < res.size(); ++m) {
                if (res.size() > 1) std::printf("mask %zu:\n", m + 1);
                for (auto& c : res[m]) std::printf("%8.4f  %-15s %s\n", c.score, c.token_str.c_str(), c.sequence.c_str());
            }
        } else if (cmd == "generate") {
            if (!call.contains("max_new_tokens")) call["max_new_tokens"] = 40;
            if (logprobs) call["output_scores"] = true;
            wf::generation g(pm, text, wf::parse_generation_options(call));
            std::printf("%s", text.c_str());
            std::fflush(stdout);
            const auto s0 = std::chrono::steady_clock::now();
            std::vector<std::pair<std::string, double>> lps;
            while (auto t = g.step()) {
                std::printf("%s", t->text.c_str());
                std::fflush(stdout);
                if (t->logprob) lps.emplace_back(pm.tok->token_bytes(t->id), *t->logprob);
            }
            const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - s0).count();
            std::printf("\n");
            std::fprintf(stderr, "%zu tokens in %.2f s (%.1f tokens/s), finished: %s\n", g.ids().size(), s, double(g.ids().size()) / s,
                         g.finish_reason().c_str());
            if (logprobs)
                for (auto& [tok, lp] : lps) std::printf("%9.4f  %s\n", lp, tok.c_str());
        } else {
            return usage();
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 1;
    }
    return 0;
}
