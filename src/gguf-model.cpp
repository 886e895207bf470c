#include "gguf-model.h"

#include <cmath>

namespace wf {

namespace {

// llama.cpp tensor name (within a block, "blk.N." removed) → Hugging Face name (within a layer), per architecture.
struct name_pair {
    const char* gguf;
    const char* hf;
};
constexpr name_pair kBertGlobal[] = {
    {"token_embd.weight", "bert.embeddings.word_embeddings.weight"},
    {"position_embd.weight", "bert.embeddings.position_embeddings.weight"},
    {"token_types.weight", "bert.embeddings.token_type_embeddings.weight"},
    {"token_embd_norm.weight", "bert.embeddings.LayerNorm.weight"},
    {"token_embd_norm.bias", "bert.embeddings.LayerNorm.bias"}};
constexpr name_pair kBertLayer[] = {
    {"attn_q.weight", "attention.self.query.weight"}, {"attn_q.bias", "attention.self.query.bias"},
    {"attn_k.weight", "attention.self.key.weight"}, {"attn_k.bias", "attention.self.key.bias"},
    {"attn_v.weight", "attention.self.value.weight"}, {"attn_v.bias", "attention.self.value.bias"},
    {"attn_output.weight", "attention.output.dense.weight"}, {"attn_output.bias", "attention.output.dense.bias"},
    {"attn_output_norm.weight", "attention.output.LayerNorm.weight"}, {"attn_output_norm.bias", "attention.output.LayerNorm.bias"},
    {"ffn_up.weight", "intermediate.dense.weight"}, {"ffn_up.bias", "intermediate.dense.bias"},
    {"ffn_down.weight", "output.dense.weight"}, {"ffn_down.bias", "output.dense.bias"},
    {"layer_output_norm.weight", "output.LayerNorm.weight"}, {"layer_output_norm.bias", "output.LayerNorm.bias"}};
constexpr name_pair kGpt2Global[] = {
    {"token_embd.weight", "transformer.wte.weight"}, {"position_embd.weight", "transformer.wpe.weight"},
    {"output_norm.weight", "transformer.ln_f.weight"}, {"output_norm.bias", "transformer.ln_f.bias"}, {"output.weight", "lm_head.weight"}};
constexpr name_pair kGpt2Layer[] = {
    {"attn_norm.weight", "ln_1.weight"}, {"attn_norm.bias", "ln_1.bias"},
    {"attn_qkv.weight", "attn.c_attn.weight"}, {"attn_qkv.bias", "attn.c_attn.bias"},
    {"attn_output.weight", "attn.c_proj.weight"}, {"attn_output.bias", "attn.c_proj.bias"},
    {"ffn_norm.weight", "ln_2.weight"}, {"ffn_norm.bias", "ln_2.bias"},
    {"ffn_up.weight", "mlp.c_fc.weight"}, {"ffn_up.bias", "mlp.c_fc.bias"},
    {"ffn_down.weight", "mlp.c_proj.weight"}, {"ffn_down.bias", "mlp.c_proj.bias"}};
// BERT's masked-LM head has no llama.cpp name (llama.cpp runs BERT for embeddings): it keeps its Hugging Face
// names (cls.predictions.*) inside the GGUF file, which is wasmformer's convention for BERT fill-mask GGUFs.

std::string hf_name(const std::string& g, arch a) {
    const bool bert = a == arch::bert;
    const name_pair* gb = bert ? kBertGlobal : kGpt2Global;
    const size_t gn = bert ? std::size(kBertGlobal) : std::size(kGpt2Global);
    for (size_t i = 0; i < gn; ++i)
        if (g == gb[i].gguf) return gb[i].hf;
    if (g.rfind("blk.", 0) == 0) {
        const size_t dot = g.find('.', 4);
        if (dot != std::string::npos) {
            const std::string layer = g.substr(4, dot - 4), rest = g.substr(dot + 1);
            const name_pair* lb = bert ? kBertLayer : kGpt2Layer;
            const size_t ln = bert ? std::size(kBertLayer) : std::size(kGpt2Layer);
            for (size_t i = 0; i < ln; ++i)
                if (rest == lb[i].gguf) return (bert ? "bert.encoder.layer." : "transformer.h.") + layer + "." + lb[i].hf;
        }
    }
    return g;  // cls.predictions.* and anything unknown keep their names
}

dtype storage(uint32_t ggml_type) {
    switch (ggml_type) {
    case 0: return dtype::f32;
    case 1: return dtype::f16;
    case 2: return dtype::q4_0;
    case 8: return dtype::q8_0;
    case 30: return dtype::bf16;
    default: throw error(std::string("ggml type ") + ggml_type_name(ggml_type) + " is not supported");
    }
}

}  // namespace

gguf_source::gguf_source(const gguf_file& g, arch a) {
    for (const gguf_tensor& t : g.tensors) {
        raw_tensor r;
        r.name = hf_name(t.name, a);
        r.file = g.file_name + " (tensor \"" + t.name + "\")";
        r.type = storage(t.ggml_type);
        r.shape.assign(t.ne.rbegin(), t.ne.rend());  // ggml's ne[0] is the innermost: PyTorch order is reversed
        r.data = t.data;
        r.n_bytes = t.n_bytes;
        r.out_in = true;
        if (!tensors_.emplace(r.name, r).second) throw error(g.file_name + ": two tensors map to \"" + r.name + "\"");
    }
}

const raw_tensor* gguf_source::find(const std::string& name) const {
    auto it = tensors_.find(name);
    return it == tensors_.end() ? nullptr : &it->second;
}

std::vector<std::string> gguf_source::names() const {
    std::vector<std::string> r;
    for (auto& [k, v] : tensors_) r.push_back(k);
    return r;
}

hparams gguf_hparams(const gguf_file& g) {
    const std::string a = g.get_string("general.architecture");
    hparams hp;
    if (a == "bert") hp.architecture = arch::bert;
    else if (a == "gpt2") hp.architecture = arch::gpt2;
    else throw error(g.file_name + ": architecture \"" + a + "\" is not supported (supported: bert, gpt2)");
    auto u = [&](const std::string& k) {
        const uint64_t v = g.get_uint(a + "." + k);
        if (v > (1u << 30)) throw error(g.file_name + ": " + a + "." + k + " = " + std::to_string(v) + " is too large");
        return int64_t(v);
    };
    hp.n_layer = u("block_count");
    hp.n_ctx = u("context_length");
    hp.n_embd = u("embedding_length");
    hp.n_ff = u("feed_forward_length");
    hp.n_head = u("attention.head_count");
    hp.eps = float(g.get_float(a + ".attention.layer_norm_epsilon"));
    hp.act = hp.architecture == arch::bert ? activation::gelu_erf : activation::gelu_tanh;
    const gguf_tensor* emb = g.find("token_embd.weight");
    if (!emb || emb->ne.size() != 2) throw error(g.file_name + ": missing or malformed tensor \"token_embd.weight\"");
    hp.n_vocab = emb->ne[1];
    if (hp.architecture == arch::bert) {
        const gguf_tensor* types = g.find("token_types.weight");
        hp.n_type_vocab = types && types->ne.size() == 2 ? types->ne[1] : 2;
        if (g.has("bert.attention.causal") && g.kv.at("bert.attention.causal").u != 0)
            throw error(g.file_name + ": bert.attention.causal is true, which BERT fill-mask does not support");
    }
    validate_hparams(hp, g.file_name);
    return hp;
}

std::unique_ptr<tokenizer> gguf_tokenizer(const gguf_file& g, int64_t n_vocab) {
    const std::string model = g.get_string("tokenizer.ggml.model");
    const auto& tokens = g.get_strings("tokenizer.ggml.tokens");
    if (n_vocab > 0 && int64_t(tokens.size()) > n_vocab)
        throw error(g.file_name + ": tokenizer.ggml.tokens has " + std::to_string(tokens.size()) + " entries but the model only " + std::to_string(n_vocab));
    if (g.has("tokenizer.ggml.token_type") && g.get_numbers("tokenizer.ggml.token_type").size() != tokens.size())
        throw error(g.file_name + ": tokenizer.ggml.token_type has " + std::to_string(g.get_numbers("tokenizer.ggml.token_type").size()) +
                    " entries, tokenizer.ggml.tokens " + std::to_string(tokens.size()));
    if (g.has("tokenizer.ggml.scores") && g.get_numbers("tokenizer.ggml.scores").size() != tokens.size())
        throw error(g.file_name + ": tokenizer.ggml.scores and tokenizer.ggml.tokens differ in length");
    for (const char* k : {"bos_token_id", "eos_token_id", "unknown_token_id", "seperator_token_id", "padding_token_id", "cls_token_id", "mask_token_id"}) {
        const std::string key = std::string("tokenizer.ggml.") + k;
        if (g.has(key) && g.get_uint(key) >= tokens.size())
            throw error(g.file_name + ": " + key + " = " + std::to_string(g.get_uint(key)) + " is not a token id (vocabulary of " + std::to_string(tokens.size()) + ")");
    }
    if (model == "bert") {
        // llama.cpp writes WordPiece vocabularies its own way: "▁x" for a word-initial piece, plain "y" for a
        // continuation. Back to Hugging Face's: "x" and "##y"; bracketed tokens ([CLS], [unused0]) stay as they are.
        std::vector<std::string> vocab;
        vocab.reserve(tokens.size());
        const std::string mark = "\xE2\x96\x81";  // U+2581
        for (const std::string& t : tokens) {
            if (t.compare(0, mark.size(), mark) == 0) vocab.push_back(t.substr(mark.size()));
            else if (t.size() >= 2 && t.front() == '[' && t.back() == ']') vocab.push_back(t);
            else vocab.push_back("##" + t);
        }
        wordpiece_options opt;  // llama.cpp's BERT tokenizer lowercases and strips accents
        return std::make_unique<wordpiece_tokenizer>(std::move(vocab), opt, g.file_name);
    }
    if (model == "gpt2") {
        std::unordered_map<std::string, int32_t> vocab;
        for (size_t i = 0; i < tokens.size(); ++i) vocab[tokens[i]] = int32_t(i);
        std::vector<std::pair<std::string, std::string>> merges;
        for (const std::string& m : g.get_strings("tokenizer.ggml.merges")) {
            const size_t sp = m.find(' ');
            if (sp == std::string::npos || sp == 0 || sp + 1 >= m.size()) throw error(g.file_name + ": merge \"" + m + "\" is not two tokens");
            merges.emplace_back(m.substr(0, sp), m.substr(sp + 1));
        }
        std::vector<std::pair<std::string, int32_t>> added;
        if (g.has("tokenizer.ggml.token_type")) {
            const auto& types = g.get_numbers("tokenizer.ggml.token_type");
            for (size_t i = 0; i < types.size(); ++i)
                if (types[i] == 3 || types[i] == 4) added.emplace_back(tokens[i], int32_t(i));  // control / user-defined
        } else if (auto it = vocab.find("<|endoftext|>"); it != vocab.end()) {
            added.emplace_back(it->first, it->second);
        }
        return std::make_unique<bpe_tokenizer>(std::move(vocab), merges, added, g.file_name);
    }
    throw error(g.file_name + ": tokenizer.ggml.model \"" + model + "\" is not supported (supported: bert, gpt2)");
}

}  // namespace wf
