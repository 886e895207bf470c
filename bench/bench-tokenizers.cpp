// Native tokenizer speed on a text file: bench-tokenizers TEXT_FILE (run from the repository root).
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>

#include "tokenizers/load.h"

static std::string slurp(const char* p) {
    std::ifstream f(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(f), {});
}

int main(int argc, char** argv) {
    if (argc < 2) return 2;
    const std::string text = slurp(argv[1]);
    const auto bert = wf::load_vocab_txt(slurp("tests/data/tokenizers/bert/vocab.txt"), {});
    const auto gpt2 = wf::load_gpt2_files(slurp("tests/data/tokenizers/gpt2/encoder.json"), slurp("tests/data/tokenizers/gpt2/vocab.bpe"));
    for (auto [name, tok] : {std::pair{"bert", bert.get()}, {"gpt2", gpt2.get()}}) {
        double best = 1e30;
        size_t n = 0;
        for (int r = 0; r < 3; ++r) {
            const auto t0 = std::chrono::steady_clock::now();
            n = tok->encode(text).size();
            best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        }
        std::printf("%s %zu %.6f\n", name, n, best);
    }
    return 0;
}
