// Fuzz entry points, shared by the libFuzzer drivers (fuzz/*.cpp, `npm run fuzz`) and the corpus replay in the
// normal test suite (tests/test-fuzz-corpus.cpp). Each takes arbitrary bytes; a wf::error is the expected outcome
// for bad input, anything else (a crash, a sanitizer report, another exception type) is a finding.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "core/unicode.h"
#include "formats/safetensors.h"
#include "tasks/encoder-tasks.h"
#include "tasks/fill-mask.h"
#include "tasks/generation.h"
#include "tokenizers/load.h"

namespace wf::fuzz {

inline void safetensors(const uint8_t* data, size_t size) {
    try {
        const auto f = parse_safetensors(data, int64_t(size), "fuzz.safetensors");
        for (auto& t : f.tensors)  // touch every byte a tensor claims
            if (t.n_bytes > 0) volatile uint8_t sink = t.data[0] ^ t.data[t.n_bytes - 1];
    } catch (const error&) {
    }
    try {
        parse_safetensors_index(std::string_view(reinterpret_cast<const char*>(data), size), "index.json");
    } catch (const error&) {
    }
}

inline void gguf(const uint8_t* data, size_t size) {
    try {
        const gguf_file g = parse_gguf(data, int64_t(size), "fuzz.gguf");
        for (auto& t : g.tensors)
            if (t.n_bytes > 0) volatile uint8_t sink = t.data[0] ^ t.data[t.n_bytes - 1];
        auto fs = std::make_shared<file_set>();
        fs->add("model.gguf", std::vector<uint8_t>(data, data + size));
        const pipeline_model pm = load_pipeline_model(fs);
        if (pm.m().as_causal_lm()) {
            generation_params p;
            p.max_new_tokens = 2;
            generation gen(pm, "Hi", p);
            while (gen.step()) {}
        }
        if (pm.m().as_masked_lm()) fill_mask(pm, "a [MASK] b", {});
        if (pm.m().head(head_kind::sequence)) text_classification(pm, {"a b", "the"}, {"c", ""});
    } catch (const error&) {
    }
}

// A SentencePiece .model file (sentencepiece's protobuf, its charsmap trie): parsed, then a text encoded and decoded.
inline void sentencepiece(const uint8_t* data, size_t size) {
    try {
        const auto tok = load_sentencepiece(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.model");
        const auto ids = tok->encode("Hello  wörld ① 😀 <s> x\t\n", true);
        tok->decode(ids);
        tok->encode_offsets("ﬁne  ＡＢＣ");
    } catch (const error&) {
    }
}

inline void config(const uint8_t* data, size_t size) {
    try {
        parse_config(std::string_view(reinterpret_cast<const char*>(data), size));
    } catch (const error&) {
    }
}

// The first byte picks the tokenizer; the rest is text (encode, then decode).
inline void tokenizer_text(const tokenizer& bert, const tokenizer& gpt2, const uint8_t* data, size_t size) {
    if (size == 0) return;
    const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
    const tokenizer& t = data[0] & 1 ? gpt2 : bert;
    const auto ids = t.encode(text);
    for (int32_t id : ids)
        if (id < 0 || id >= t.vocab_size()) __builtin_trap();
    const std::string back = t.decode(ids);
    if (&t == &gpt2 && unicode::utf8_encode(unicode::utf8_decode(text)) == text && back != text) __builtin_trap();  // round trip
}

inline void tokenizer_json(const uint8_t* data, size_t size) {
    try {
        const auto t = load_tokenizer_json(std::string_view(reinterpret_cast<const char*>(data), size));
        t->decode(t->encode("Hello, world! [MASK] \xE4\xB8\xAD"));
    } catch (const error&) {
    }
}

}  // namespace wf::fuzz
