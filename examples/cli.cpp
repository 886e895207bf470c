// wasmformer command line:
//   wasmformer fill-mask --model DIR [--top-k N] [--targets a,b] [--format f32|f16|q8_0] "The capital of France is [MASK]."
//   wasmformer generate  --model DIR [--max-new-tokens N] [--sample] [--temperature T] [--top-k K] [--top-p P]
//                        [--min-p P] [--repetition-penalty R] [--no-repeat-ngram-size N] [--stop S]... [--seed S]
//                        [--logprobs] [--format f32|f16|q8_0] "Once upon a time"
// DIR is a Hugging Face model folder (config.json, model.safetensors, tokenizer files).
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include "tasks.h"

namespace {

std::shared_ptr<wf::file_set> read_dir(const std::string& dir) {
    if (!std::filesystem::is_directory(dir)) throw wf::error(dir + ": not a folder");
    auto fs = std::make_shared<wf::file_set>();
    for (auto& e : std::filesystem::directory_iterator(dir)) {
        if (!e.is_regular_file()) continue;
        std::ifstream f(e.path(), std::ios::binary);
        fs->add(e.path().filename().string(), std::vector<uint8_t>(std::istreambuf_iterator<char>(f), {}));
    }
    return fs;
}

std::vector<std::string> split(const std::string& s, char sep) {
    std::vector<std::string> out;
    std::stringstream ss(s);
    for (std::string part; std::getline(ss, part, sep);) out.push_back(part);
    return out;
}

int usage() {
    std::fprintf(stderr,
                 "usage: wasmformer fill-mask --model DIR [--top-k N] [--targets a,b] [--format f32|f16|q8_0] TEXT\n"
                 "       wasmformer generate --model DIR [--max-new-tokens N] [--sample] [--temperature T] [--top-k K]\n"
                 "              [--top-p P] [--min-p P] [--repetition-penalty R] [--no-repeat-ngram-size N] [--stop S]...\n"
                 "              [--seed S] [--logprobs] [--format f32|f16|q8_0] PROMPT\n");
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) return usage();
    const std::string cmd = argv[1];
    std::map<std::string, std::vector<std::string>> opt;
    std::string text;
    bool have_text = false;
    for (int i = 2; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--sample" || a == "--logprobs") opt[a].push_back("1");
        else if (a.rfind("--", 0) == 0 && i + 1 < argc) opt[a].push_back(argv[++i]);
        else if (!have_text) text = a, have_text = true;
        else return usage();
    }
    auto get = [&](const char* k, const std::string& d) { return opt.count(k) ? opt[k].back() : d; };
    if (!opt.count("--model") || !have_text) return usage();
    try {
        wf::load_options lo;
        const std::string f = get("--format", "as_stored");
        lo.format = f == "f32" ? wf::weight_format::f32 : f == "f16" ? wf::weight_format::f16 : f == "q8_0" ? wf::weight_format::q8_0 : wf::weight_format::as_stored;
        const auto t0 = std::chrono::steady_clock::now();
        const wf::pipeline_model pm = wf::load_pipeline_model(read_dir(get("--model", "")), lo);
        const auto t1 = std::chrono::steady_clock::now();
        std::fprintf(stderr, "loaded %s (%lld layers, %lld wide) in %.0f ms\n", wf::arch_name(pm.m.hp.architecture), (long long)pm.m.hp.n_layer,
                     (long long)pm.m.hp.n_embd, std::chrono::duration<double, std::milli>(t1 - t0).count());
        if (cmd == "fill-mask") {
            wf::fill_mask_options o;
            o.top_k = std::stoll(get("--top-k", "5"));
            if (opt.count("--targets")) o.targets = split(get("--targets", ""), ',');
            const auto res = wf::fill_mask(pm, text, o);
            for (size_t m = 0; m < res.size(); ++m) {
                if (res.size() > 1) std::printf("mask %zu:\n", m + 1);
                for (auto& c : res[m]) std::printf("%8.4f  %-15s %s\n", c.score, c.token_str.c_str(), c.sequence.c_str());
            }
        } else if (cmd == "generate") {
            wf::generation_params p;
            p.max_new_tokens = std::stoll(get("--max-new-tokens", "40"));
            p.sampling.do_sample = opt.count("--sample") > 0;
            p.sampling.temperature = std::stof(get("--temperature", "1"));
            p.sampling.top_k = std::stoll(get("--top-k", "0"));
            p.sampling.top_p = std::stof(get("--top-p", "1"));
            p.sampling.min_p = std::stof(get("--min-p", "0"));
            p.sampling.repetition_penalty = std::stof(get("--repetition-penalty", "1"));
            p.sampling.no_repeat_ngram_size = std::stoll(get("--no-repeat-ngram-size", "0"));
            p.sampling.seed = std::stoull(get("--seed", "0"));
            if (opt.count("--stop")) p.stop = opt["--stop"];
            const bool logprobs = opt.count("--logprobs") > 0;
            wf::generation g(pm, text, p);
            std::printf("%s", text.c_str());
            std::fflush(stdout);
            const auto s0 = std::chrono::steady_clock::now();
            std::vector<std::pair<std::string, double>> lps;
            while (auto t = g.step()) {
                std::printf("%s", t->text.c_str());
                std::fflush(stdout);
                lps.emplace_back(pm.tok->token_bytes(t->id), t->logprob);
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
