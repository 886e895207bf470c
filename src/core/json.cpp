#include "core/json.h"

#include <cmath>
#include <set>
#include <vector>

namespace wf {

json parse_json_strict(std::string_view text, const std::string& what, int64_t max_bytes, int max_depth) {
    if (int64_t(text.size()) > max_bytes)
        throw error(what + ": " + std::to_string(text.size()) + " bytes is over the limit of " + std::to_string(max_bytes));
    // nlohmann's parser stops at a NUL byte and skips a UTF-8 byte order mark; JSON allows neither (Python's json,
    // which Hugging Face uses, rejects both), so they are refused here.
    if (text.find('\0') != std::string_view::npos)
        throw error(what + ": NUL byte at offset " + std::to_string(text.find('\0')) + " (not allowed in JSON)");
    if (text.size() >= 3 && text.substr(0, 3) == "\xEF\xBB\xBF") throw error(what + ": starts with a UTF-8 byte order mark (not allowed in JSON)");
    // Nesting depth, outside strings, before the recursive parser sees it.
    int depth = 0;
    bool in_string = false, escaped = false;
    for (char c : text) {
        if (in_string) {
            if (escaped) escaped = false;
            else if (c == '\\') escaped = true;
            else if (c == '"') in_string = false;
        } else if (c == '"') {
            in_string = true;
        } else if (c == '{' || c == '[') {
            if (++depth > max_depth) throw error(what + ": JSON nested deeper than " + std::to_string(max_depth) + " levels");
        } else if (c == '}' || c == ']') {
            --depth;
        }
    }
    // nlohmann's DOM builder with a duplicate-key check. (Its callback parser, the obvious way to see keys, scans
    // the enclosing object at the end of every member object: quadratic, minutes for a 7 MB safetensors header.)
    struct strict_dom : nlohmann::detail::json_sax_dom_parser<json> {
        using base = nlohmann::detail::json_sax_dom_parser<json>;
        std::vector<std::set<std::string>> keys;  // one set per open object
        std::string duplicate;
        explicit strict_dom(json& j) : base(j, true) {}
        bool start_object(std::size_t n) {
            keys.emplace_back();
            return base::start_object(n);
        }
        bool end_object() {
            keys.pop_back();
            return base::end_object();
        }
        bool key(std::string& k) {
            if (!keys.back().insert(k).second && duplicate.empty()) duplicate = k;
            return base::key(k);
        }
    };
    json j;
    strict_dom dom(j);
    try {
        json::sax_parse(text.begin(), text.end(), &dom);
    } catch (const json::exception& e) {
        std::string msg = e.what();
        if (auto p = msg.find("] "); p != std::string::npos) msg = msg.substr(p + 2);
        throw error(what + ": invalid JSON: " + msg);
    }
    const std::string& duplicate = dom.duplicate;
    if (!duplicate.empty()) throw error(what + ": duplicate key \"" + duplicate + "\"");
    return j;
}

const json& json_field(const json& obj, const char* key, const std::string& what) {
    auto it = obj.find(key);
    if (it == obj.end()) throw error(what + ": missing field \"" + key + "\"");
    return *it;
}

int64_t json_int(const json& obj, const char* key, const std::string& what, int64_t lo, int64_t hi) {
    const json& v = json_field(obj, key, what);
    if (!v.is_number_integer())
        throw error(what + ": field \"" + key + "\" must be an integer, got " + v.dump().substr(0, 40));
    if (v.is_number_unsigned() ? v.get<uint64_t>() > uint64_t(hi) : (v.get<int64_t>() < lo || v.get<int64_t>() > hi))
        throw error(what + ": field \"" + key + "\" = " + v.dump() + " is outside [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    return v.get<int64_t>();
}

double json_number(const json& obj, const char* key, const std::string& what) {
    const json& v = json_field(obj, key, what);
    if (!v.is_number()) throw error(what + ": field \"" + key + "\" must be a number, got " + v.dump().substr(0, 40));
    const double d = v.get<double>();
    if (!std::isfinite(d)) throw error(what + ": field \"" + key + "\" is not finite");
    return d;
}

std::string json_string(const json& obj, const char* key, const std::string& what) {
    const json& v = json_field(obj, key, what);
    if (!v.is_string()) throw error(what + ": field \"" + key + "\" must be a string, got " + v.dump().substr(0, 40));
    return v.get<std::string>();
}

}  // namespace wf
