// Tokenizers from a GGUF file's vocabulary (tokenizer.ggml.*, as llama.cpp writes it): WordPiece ("bert"),
// byte-level BPE ("gpt2"), sentencepiece's BPE ("llama") and Unigram ("t5"), with the roles and templates llama.cpp
// gives them. Every error names the file and the key.
#include <algorithm>
#include <cmath>
#include <optional>
#include <unordered_map>

#include "core/error.h"
#include "tokenizers/bpe.h"
#include "tokenizers/load.h"
#include "tokenizers/roles.h"
#include "tokenizers/sentencepiece.h"

namespace wf {

using token_roles::assign_roles;
using token_roles::bert_template;
using token_roles::sentencepiece_roles;

namespace {
// A GGUF boolean key, dflt when the file does not have it.
bool gguf_flag(const gguf_file& g, const char* key, bool dflt) { return g.has(key) ? g.kv.at(key).u != 0 : dflt; }

// A GGUF vocabulary's template: BOS before the text when tokenizer.ggml.add_bos_token says so (add_bos_default when
// the file does not say), EOS after it when tokenizer.ggml.add_eos_token does.
special_template gguf_template(const gguf_file& g, const special_tokens& found, bool add_bos_default) {
    special_template t;
    if (gguf_flag(g, "tokenizer.ggml.add_bos_token", add_bos_default) && found.bos >= 0) t.before.push_back(found.bos);
    if (gguf_flag(g, "tokenizer.ggml.add_eos_token", false) && found.eos >= 0) t.after.push_back(found.eos);
    return t;
}

// An encoder's vocabulary (general.architecture bert: RoBERTa's "roberta-bpe", XLM-R's "t5") takes RoBERTa's
// template, <s> A </s> and <s> A </s></s> B </s>, whatever add_bos / add_eos say: true when it was set.
bool set_encoder_template(const gguf_file& g, tokenizer& tok) {
    const special_tokens& r = tok.special();
    const int32_t first = r.cls >= 0 ? r.cls : r.bos, last = r.sep >= 0 ? r.sep : r.eos;
    if (!g.has("general.architecture") || g.get_string("general.architecture") != "bert" || first < 0 || last < 0) return false;
    tok.set_template(special_template::roberta(first, last));
    return true;
}
// A SentencePiece tokenizer from a GGUF vocabulary (tokenizer.ggml.model "llama" or "t5"): the pieces from
// tokenizer.ggml.tokens, .scores and .token_type into m (whose type and normalizer the caller set), one unknown
// piece, control tokens matched whole in the text, the roles llama.cpp's ids name (else sentencepiece's).
std::unique_ptr<sentencepiece_tokenizer> gguf_sentencepiece(const gguf_file& g, const std::vector<std::string>& tokens, sentencepiece_model m,
                                                            special_tokens& found, const char* model) {
    const std::vector<double> none;
    const auto& scores = g.has("tokenizer.ggml.scores") ? g.get_numbers("tokenizer.ggml.scores") : none;
    const auto& types = g.has("tokenizer.ggml.token_type") ? g.get_numbers("tokenizer.ggml.token_type") : none;
    m.pieces.reserve(tokens.size());
    for (size_t i = 0; i < tokens.size(); ++i) {
        const double type = types.empty() ? 1 : types[i];
        if (type != std::floor(type) || type < 1 || type > 6)
            throw error(g.file_name + ": tokenizer.ggml.token_type[" + std::to_string(i) + "] = " + std::to_string(type) + " is not a token type (1 … 6)");
        m.pieces.push_back({tokens[i], scores.empty() ? 0.0f : float(scores[i]), piece_type(int(type))});
        m.byte_fallback = m.byte_fallback || m.pieces.back().type == piece_type::byte;
    }
    // One unknown piece, as sentencepiece has: the one tokenizer.ggml.unknown_token_id names, else the first of
    // type unknown. Phi-3's file types its <unk> control (still matched whole in the text, as Hugging Face's added
    // token) and 53 padding pieces "[PADn]" unknown: those become unused pieces, which encoding never produces.
    const auto first_unknown = std::find_if(m.pieces.begin(), m.pieces.end(), [](const sentencepiece_piece& p) { return p.type == piece_type::unknown; });
    const size_t unk = found.unk >= 0 ? size_t(found.unk) : size_t(first_unknown - m.pieces.begin());
    const bool unk_is_control = unk < m.pieces.size() && m.pieces[unk].type == piece_type::control;
    for (size_t i = 0; i < m.pieces.size(); ++i)
        if (m.pieces[i].type == piece_type::unknown && i != unk) m.pieces[i].type = piece_type::unused;
    if (unk_is_control) m.pieces[unk].type = piece_type::unknown;
    std::unique_ptr<sentencepiece_tokenizer> spm;
    try {
        spm = std::make_unique<sentencepiece_tokenizer>(std::move(m), g.file_name);
    } catch (const error& e) {
        throw error(std::string(e.what()) + " (a tokenizer.ggml.model \"" + model + "\" vocabulary)");
    }
    for (size_t i = 0; i < tokens.size(); ++i)  // control tokens are matched whole in the text, as Hugging Face's added tokens
        if (spm->model().pieces[i].type == piece_type::control || (i == unk && unk_is_control)) spm->add_token_text(tokens[i], int32_t(i), true);
    const special_tokens roles = sentencepiece_roles(*spm);
    for (auto member : {&special_tokens::unk, &special_tokens::bos, &special_tokens::eos, &special_tokens::pad})
        if (found.*member < 0) found.*member = roles.*member;
    assign_roles(*spm, {}, g.file_name, found);
    return spm;
}
}  // namespace

std::unique_ptr<tokenizer> load_tokenizer(const gguf_file& g, int64_t n_vocab) {
    const std::string model = g.get_string("tokenizer.ggml.model");
    const auto& tokens = g.get_strings("tokenizer.ggml.tokens");
    if (n_vocab > 0 && int64_t(tokens.size()) > n_vocab)
        throw error(g.file_name + ": tokenizer.ggml.tokens has " + std::to_string(tokens.size()) + " entries but the model only " + std::to_string(n_vocab));
    if (g.has("tokenizer.ggml.token_type") && g.get_numbers("tokenizer.ggml.token_type").size() != tokens.size())
        throw error(g.file_name + ": tokenizer.ggml.token_type has " + std::to_string(g.get_numbers("tokenizer.ggml.token_type").size()) +
                    " entries, tokenizer.ggml.tokens " + std::to_string(tokens.size()));
    if (g.has("tokenizer.ggml.scores") && g.get_numbers("tokenizer.ggml.scores").size() != tokens.size())
        throw error(g.file_name + ": tokenizer.ggml.scores and tokenizer.ggml.tokens differ in length");
    // roles by id, as llama.cpp writes them
    special_tokens found;
    const std::pair<const char*, int32_t special_tokens::*> ids[] = {
        {"bos_token_id", &special_tokens::bos}, {"eos_token_id", &special_tokens::eos}, {"unknown_token_id", &special_tokens::unk},
        {"seperator_token_id", &special_tokens::sep}, {"padding_token_id", &special_tokens::pad}, {"cls_token_id", &special_tokens::cls},
        {"mask_token_id", &special_tokens::mask}};
    for (auto [k, member] : ids) {
        const std::string key = std::string("tokenizer.ggml.") + k;
        if (!g.has(key)) continue;
        const uint64_t id = g.get_uint(key);
        if (id >= tokens.size())
            throw error(g.file_name + ": " + key + " = " + std::to_string(id) + " is not a token id (vocabulary of " + std::to_string(tokens.size()) + ")");
        found.*member = int32_t(id);
    }
    std::unique_ptr<tokenizer> tok;
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
        if (found.unk >= 0) opt.unk_token = vocab[size_t(found.unk)];
        tok = std::make_unique<wordpiece_tokenizer>(std::move(vocab), opt, g.file_name);
        assign_roles(*tok, {}, g.file_name, found);
        bert_template(*tok);
        return tok;
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
        // tokenizer.ggml.pre names the pre-tokenizer as llama.cpp does; files from before that key are GPT-2's
        const std::string pre_name = g.has("tokenizer.ggml.pre") ? g.get_string("tokenizer.ggml.pre") : "gpt-2";
        const std::optional<pre_tokenizer> pre = pre_tokenizer_for_gguf(pre_name);
        if (!pre)
            throw error(g.file_name + ": tokenizer.ggml.pre \"" + pre_name + "\" is not a pre-tokenizer this engine has (supported: " +
                        gguf_pre_tokenizer_names() + ")");
        auto bpe = std::make_unique<bpe_tokenizer>(vocab, merges, std::vector<std::pair<std::string, int32_t>>{}, *pre, g.file_name);
        bpe->set_ignore_merges(*pre == pre_tokenizer::llama3);  // as llama.cpp for these names, and Llama 3's tokenizer.json
        if (g.has("tokenizer.ggml.token_type")) {  // control and user-defined tokens are matched whole in the text
            const auto& types = g.get_numbers("tokenizer.ggml.token_type");
            for (size_t i = 0; i < types.size(); ++i)
                if (types[i] == 3 || types[i] == 4)
                    // llama.cpp (src/llama-vocab.cpp, a "modern-bert" model) gives [MASK] lstrip, as ModernBERT's tokenizer.json does;
                    // RoBERTa's <mask> is lstrip in its tokenizer too (llama.cpp's roberta-bpe leaves it out: Hugging Face's here)
                    bpe->add_token_text(tokens[i], int32_t(i), types[i] == 3,
                                        (pre_name == "modern-bert" && tokens[i] == "[MASK]") || (pre_name == "roberta-bpe" && tokens[i] == "<mask>"));
        }
        assign_roles(*bpe, {}, g.file_name, found);
        if (!set_encoder_template(g, *bpe)) bpe->set_template(gguf_template(g, found, false));
        return bpe;
    }
    if (model == "llama") {
        // sentencepiece's BPE over the pieces' scores, its normalizer without rules: a dummy prefix (unless
        // tokenizer.ggml.add_space_prefix is false), whitespace kept as it is; byte fallback with <0xNN> pieces
        sentencepiece_model m;
        m.type = sentencepiece_model::kind::bpe;
        m.remove_extra_whitespaces = false;
        m.add_dummy_prefix = gguf_flag(g, "tokenizer.ggml.add_space_prefix", true);
        auto spm = gguf_sentencepiece(g, tokens, std::move(m), found, "llama");
        spm->set_template(gguf_template(g, found, true));  // llama.cpp adds BOS for SentencePiece vocabularies by default
        return spm;
    }
    if (model == "t5") {
        // llama.cpp's UGM vocabularies (convert_hf_to_gguf.py's T5 and XLM-RoBERTa writers): sentencepiece's Unigram
        // over the pieces' scores with the model's own normalizer — tokenizer.ggml.precompiled_charsmap (nmt_nfkc …),
        // add_space_prefix and remove_extra_whitespaces (both true unless the file says not). XLM-R's file is already
        // in fairseq's order (<s> <pad> </s> <unk>, then the pieces one later), so its ids are Hugging Face's.
        sentencepiece_model m;
        m.type = sentencepiece_model::kind::unigram;
        m.add_dummy_prefix = gguf_flag(g, "tokenizer.ggml.add_space_prefix", true);
        m.remove_extra_whitespaces = gguf_flag(g, "tokenizer.ggml.remove_extra_whitespaces", true);
        if (const char* k = "tokenizer.ggml.precompiled_charsmap"; g.has(k)) {
            const gguf_value& v = g.kv.at(k);
            if (v.type != gguf_type::array || (v.elem != gguf_type::u8 && v.elem != gguf_type::i8))
                throw error(g.file_name + ": " + k + " must be an array of UINT8 or INT8 (the charsmap's bytes)");
            m.precompiled_charsmap.reserve(v.nums.size());
            for (double b : v.nums) m.precompiled_charsmap.push_back(char(uint8_t(int(b) & 0xFF)));
        }
        auto spm = gguf_sentencepiece(g, tokens, std::move(m), found, "t5");
        if (!set_encoder_template(g, *spm) && spm->special().eos >= 0) spm->set_template(special_template::t5(spm->special().eos));  // T5's A </s>
        return spm;
    }
    throw error(g.file_name + ": tokenizer.ggml.model \"" + model + "\" is not supported (supported: bert, gpt2, llama, t5)");
}

}  // namespace wf
