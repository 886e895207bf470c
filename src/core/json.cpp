#include "core/json.h"

#include <cmath>
#include <vector>

namespace wf {

namespace {
// A DOM builder for nlohmann's SAX parser (its own, json_sax_dom_parser, without a way to see the object a key
// goes into) that refuses duplicate keys: a key that leaves its object's size as it was is one it had. No set of
// the keys seen: that had cost GPT-2 small's load ~55 ms of string comparisons on vocab.json's 50 257 keys, on top
// of the object's own map. (nlohmann's callback parser, the obvious way to see keys, scans the enclosing object
// at the end of every member object: quadratic, minutes for a 7 MB safetensors header.)
struct strict_dom {
    explicit strict_dom(json& j) : root(j) {}
    json& root;
    std::vector<json*> open;  // the objects and arrays being filled, innermost last
    json* slot = nullptr;     // where the value after the last key goes
    std::string duplicate;
    json* put(json&& v) {
        if (open.empty()) return &(root = std::move(v));
        json& in = *open.back();
        if (in.is_array()) {
            in.push_back(std::move(v));
            return &in.back();
        }
        return &(*slot = std::move(v));
    }
    bool null() { return put(json(nullptr)), true; }
    bool boolean(bool v) { return put(json(v)), true; }
    bool number_integer(json::number_integer_t v) { return put(json(v)), true; }
    bool number_unsigned(json::number_unsigned_t v) { return put(json(v)), true; }
    bool number_float(json::number_float_t v, const std::string&) { return put(json(v)), true; }
    bool string(std::string& v) { return put(json(std::move(v))), true; }
    bool binary(json::binary_t& v) { return put(json(std::move(v))), true; }
    bool start_object(std::size_t) { return open.push_back(put(json(json::value_t::object))), true; }
    bool start_array(std::size_t) { return open.push_back(put(json(json::value_t::array))), true; }
    bool end_object() { return open.pop_back(), true; }
    bool end_array() { return open.pop_back(), true; }
    bool key(std::string& k) {
        json& o = *open.back();
        const std::size_t before = o.size();
        slot = &o[k];
        if (o.size() == before && duplicate.empty()) duplicate = k;
        return true;
    }
    template <class Exception>
    bool parse_error(std::size_t, const std::string&, const Exception& e) {
        throw e;
    }
};
}  // namespace

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
