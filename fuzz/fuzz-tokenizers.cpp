// libFuzzer driver: both real tokenizers on arbitrary text (see fuzz/targets.h). Run from the repository root.
#include <fstream>
#include <iterator>

#include "targets.h"
#include "core/unicode.h"

namespace {
std::string slurp(const char* path) {
    std::ifstream f(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(f), {});
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static const auto bert = wf::load_vocab_txt(slurp("tests/data/tokenizers/bert/vocab.txt"), {});
    static const auto gpt2 = wf::load_gpt2_files(slurp("tests/data/tokenizers/gpt2/encoder.json"), slurp("tests/data/tokenizers/gpt2/vocab.bpe"));
    wf::fuzz::tokenizer_text(*bert, *gpt2, data, size);
    return 0;
}
