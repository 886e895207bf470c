#include "tokenizers/roles.h"

#include <algorithm>

#include "core/error.h"
#include "core/json.h"

namespace wf::token_roles {

namespace {
const role kRoles[] = {
    {"unk_token", &special_tokens::unk, {"[UNK]", "<unk>", "<|endoftext|>"}},
    {"cls_token", &special_tokens::cls, {"[CLS]", "<s>"}},
    {"sep_token", &special_tokens::sep, {"[SEP]", "</s>"}},
    {"pad_token", &special_tokens::pad, {"[PAD]", "<pad>"}},
    {"mask_token", &special_tokens::mask, {"[MASK]", "<mask>"}},
    {"bos_token", &special_tokens::bos, {"<s>", "<|endoftext|>"}},
    {"eos_token", &special_tokens::eos, {"</s>", "<|endoftext|>"}},
};
}  // namespace

tokenizer_config read_config(const file_set& files) {
    tokenizer_config c;
    for (const char* name : {"special_tokens_map.json", "tokenizer_config.json"}) {  // the second wins
        if (!files.has(name)) continue;
        const json j = parse_json_strict(files.text(name), name, 16 << 20);
        if (!j.is_object()) throw error(std::string(name) + ": must be a JSON object");
        for (const role& r : kRoles) {
            if (!j.contains(r.key) || j[r.key].is_null()) continue;
            const json& v = j[r.key];  // a string, or an AddedToken object {"content": …}
            const json& text = v.is_object() && v.contains("content") ? v["content"] : v;
            if (!text.is_string()) throw error(std::string(name) + ": " + r.key + " must be a token text, got " + v.dump().substr(0, 60));
            std::erase_if(c.roles, [&](auto& e) { return e.first == &r; });
            c.roles.emplace_back(&r, text.get<std::string>());
            if (v.is_object() && v.contains("lstrip") && v["lstrip"].is_boolean() && v["lstrip"].get<bool>()) c.lstrip.push_back(&r);
        }
        if (j.contains("do_lower_case") && j["do_lower_case"].is_boolean()) c.lowercase = j["do_lower_case"].get<bool>();
        if (j.contains("tokenizer_class") && j["tokenizer_class"].is_string()) c.tokenizer_class = j["tokenizer_class"].get<std::string>();
        // the model's position table bounds the input; model_max_length is not used, but a value that cannot be a
        // length is a broken file (1e30, Hugging Face's "unknown", is fine)
        if (j.contains("model_max_length") && !j["model_max_length"].is_null() &&
            !(j["model_max_length"].is_number() && j["model_max_length"].get<double>() >= 1))
            throw error(std::string(name) + ": model_max_length = " + j["model_max_length"].dump().substr(0, 40) + " is not a length (≥ 1)");
        if (j.contains("strip_accents") && j["strip_accents"].is_boolean()) c.strip_accents = j["strip_accents"].get<bool>();
        if (j.contains("clean_up_tokenization_spaces") && j["clean_up_tokenization_spaces"].is_boolean())
            c.clean_up_spaces = j["clean_up_tokenization_spaces"].get<bool>();
        if (j.contains("extra_ids") && !j["extra_ids"].is_null()) {
            if (!j["extra_ids"].is_number_integer() || j["extra_ids"].get<int64_t>() < 0 || j["extra_ids"].get<int64_t>() > 4096)
                throw error(std::string(name) + ": extra_ids must be an integer in [0, 4096], got " + j["extra_ids"].dump().substr(0, 40));
            c.extra_ids = j["extra_ids"].get<int64_t>();
        }
    }
    return c;
}

void assign_roles(tokenizer& t, const tokenizer_config& cfg, const std::string& source, special_tokens found) {
    for (const role& r : kRoles) {
        auto named = std::find_if(cfg.roles.begin(), cfg.roles.end(), [&](auto& e) { return e.first == &r; });
        if (named != cfg.roles.end()) {
            const auto id = t.token_id(named->second);
            if (!id) throw error(source + ": " + r.key + " \"" + named->second + "\" is not in the vocabulary");
            found.*r.id = *id;
        }
        if (found.*r.id < 0)
            for (const char* text : r.usual)
                if (const auto id = t.token_id(text)) {
                    found.*r.id = *id;
                    break;
                }
        const bool lstrip = std::find(cfg.lstrip.begin(), cfg.lstrip.end(), &r) != cfg.lstrip.end();
        if (found.*r.id >= 0) t.add_token_text(t.token(found.*r.id), found.*r.id, true, lstrip);
    }
    t.set_special(found);
}

void bert_template(tokenizer& t) {
    if (t.special().cls >= 0 && t.special().sep >= 0) t.set_template(special_template::bert(t.special().cls, t.special().sep));
}

special_tokens sentencepiece_roles(const sentencepiece_tokenizer& t) {
    special_tokens found;
    const sentencepiece_model& m = t.model();
    for (size_t i = 0; i < m.pieces.size(); ++i)
        if (m.pieces[i].type == piece_type::unknown) found.unk = int32_t(i);
    auto control = [&](const std::string& text) {
        const auto id = t.token_id(text);
        return id && m.pieces[size_t(*id)].type == piece_type::control ? *id : -1;
    };
    found.bos = control(m.bos_piece);
    found.eos = control(m.eos_piece);
    found.pad = control(m.pad_piece);
    return found;
}

}  // namespace wf::token_roles
