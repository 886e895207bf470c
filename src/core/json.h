// Strict JSON for untrusted files: a size cap, a nesting-depth cap checked before the (recursive) parser runs,
// duplicate keys rejected at every level, UTF-8 validated, and errors that name the file.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "core/error.h"

namespace wf {

using json = nlohmann::json;

json parse_json_strict(std::string_view text, const std::string& what, int64_t max_bytes = 64ll << 20, int max_depth = 64);

// Typed field access that names the file and the key in its errors.
const json& json_field(const json& obj, const char* key, const std::string& what);
int64_t json_int(const json& obj, const char* key, const std::string& what, int64_t lo, int64_t hi);
double json_number(const json& obj, const char* key, const std::string& what);
std::string json_string(const json& obj, const char* key, const std::string& what);

}  // namespace wf
