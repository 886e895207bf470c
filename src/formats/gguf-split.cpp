// Split GGUF models (llama.cpp's gguf-split): which files make one model, and their parts joined into one gguf_file.
#include <algorithm>
#include <cstdio>
#include <optional>
#include <set>

#include "core/error.h"
#include "formats/file-set.h"
#include "formats/gguf.h"

namespace wf {
namespace {

constexpr const char* kSplitNo = "split.no";
constexpr const char* kSplitCount = "split.count";
constexpr const char* kSplitTensors = "split.tensors.count";
// More parts than any model that fits in wasm32's 4 GiB is split into (gguf-split's parts are ≥ 1 tensor each).
constexpr int kMaxParts = 256;

// "<prefix>-NNNNN-of-MMMMM.gguf" → (prefix, N, M), as llama.cpp names the parts ("%s-%05d-of-%05d.gguf").
struct split_name {
    std::string prefix;
    int no = 0, count = 0;
};

std::optional<split_name> parse_split_name(const std::string& name) {
    constexpr size_t tail = 20;  // "-00001-of-00003.gguf"
    if (name.size() <= tail || !name.ends_with(".gguf")) return std::nullopt;
    const std::string t = name.substr(name.size() - tail, 15);
    auto digits = [&](size_t from) {
        int v = 0;
        for (size_t i = from; i < from + 5; ++i) {
            if (t[i] < '0' || t[i] > '9') return -1;
            v = v * 10 + (t[i] - '0');
        }
        return v;
    };
    if (t[0] != '-' || t.compare(6, 4, "-of-") != 0) return std::nullopt;
    const int no = digits(1), count = digits(10);
    if (no < 1 || count < 1 || no > count) return std::nullopt;
    return split_name{name.substr(0, name.size() - tail), no, count};
}

std::string part_name(const split_name& s, int no) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "-%05d-of-%05d.gguf", no, s.count);
    return s.prefix + buf;
}

}  // namespace

std::vector<std::string> gguf_model_files(const std::vector<std::string>& names) {
    std::vector<std::string> gguf;
    for (const std::string& n : names)
        if (n.ends_with(".gguf")) gguf.push_back(n);
    if (gguf.empty()) return {};
    std::sort(gguf.begin(), gguf.end());
    const auto first = parse_split_name(gguf[0]);
    if (gguf.size() == 1 && (!first || first->count == 1)) return gguf;
    if (first && first->count > kMaxParts)
        throw error(gguf[0] + ": a split model of " + std::to_string(first->count) + " parts is over the limit of " + std::to_string(kMaxParts));
    if (!first) throw error("several .gguf files (" + gguf[0] + ", " + gguf[1] + "): give one model file");
    for (const std::string& n : gguf) {
        const auto s = parse_split_name(n);
        if (!s) throw error("several .gguf files (" + gguf[0] + ", " + n + "): give one model file");
        if (s->prefix != first->prefix || s->count != first->count)
            throw error("several .gguf models (" + gguf[0] + ", " + n + "): give the parts of one split model");
    }
    std::vector<std::string> parts, missing;
    for (int no = 1; no <= first->count; ++no) {
        const std::string n = part_name(*first, no);
        (std::binary_search(gguf.begin(), gguf.end(), n) ? parts : missing).push_back(n);
    }
    if (!missing.empty()) {
        std::string list;
        for (size_t i = 0; i < missing.size() && i < 3; ++i) list += (i ? ", " : "") + missing[i];
        if (missing.size() > 3) list += " and " + std::to_string(missing.size() - 3) + " more";
        throw error("a split GGUF model of " + std::to_string(first->count) + " parts (" + gguf[0] + " …) lacks " + list);
    }
    return parts;
}

gguf_file join_gguf_parts(std::vector<gguf_file> parts) {
    if (parts.empty()) throw error("no GGUF file to load");
    gguf_file& head = parts[0];
    if (!head.has(kSplitCount)) {
        if (parts.size() == 1) return std::move(head);
        throw error(head.file_name + ": no " + std::string(kSplitCount) + ", yet " + std::to_string(parts.size()) + " parts were given");
    }
    const uint64_t count = head.get_uint(kSplitCount);
    if (count > uint64_t(kMaxParts))
        throw error(head.file_name + ": " + kSplitCount + " = " + std::to_string(count) + " is over the limit of " + std::to_string(kMaxParts));
    if (count != parts.size())
        throw error(head.file_name + ": " + kSplitCount + " = " + std::to_string(count) + ", but " + std::to_string(parts.size()) +
                    (parts.size() == 1 ? " part was" : " parts were") + " given: a split model needs all its parts");
    std::set<std::string> seen;
    std::vector<gguf_tensor> tensors;
    for (size_t i = 0; i < parts.size(); ++i) {
        gguf_file& p = parts[i];
        if (p.get_uint(kSplitNo) != i)
            throw error(p.file_name + ": " + kSplitNo + " = " + std::to_string(p.get_uint(kSplitNo)) + ", expected " + std::to_string(i) +
                        " (part " + std::to_string(i + 1) + " of " + std::to_string(count) + ")");
        if (p.get_uint(kSplitCount) != count)
            throw error(p.file_name + ": " + kSplitCount + " = " + std::to_string(p.get_uint(kSplitCount)) + ", but " + head.file_name + " says " +
                        std::to_string(count));
        for (gguf_tensor& t : p.tensors) {
            if (!seen.insert(t.name).second) throw error(p.file_name + ": tensor \"" + t.name + "\" is also in an earlier part");
            tensors.push_back(std::move(t));
        }
    }
    const uint64_t expected = head.get_uint(kSplitTensors);
    if (expected != tensors.size())
        throw error(head.file_name + ": " + kSplitTensors + " = " + std::to_string(expected) + ", but the " + std::to_string(count) + " parts hold " +
                    std::to_string(tensors.size()) + " tensors");
    gguf_file joined = std::move(head);
    joined.kv.erase(kSplitNo);
    joined.kv.erase(kSplitCount);
    joined.kv.erase(kSplitTensors);
    joined.tensors = std::move(tensors);
    return joined;
}

std::optional<gguf_file> read_gguf(const file_set& files, const gguf_limits& lim) {
    const std::vector<std::string> names = gguf_model_files(files.names());
    if (names.empty()) return std::nullopt;
    std::vector<gguf_file> parts;
    for (const std::string& n : names) {
        const auto* bytes = files.get(n);
        parts.push_back(parse_gguf(bytes->data(), int64_t(bytes->size()), n, lim));
    }
    return join_gguf_parts(std::move(parts));
}

}  // namespace wf
