#include "formats/file-set.h"

#include <cstring>
#include <new>

#include "core/error.h"

namespace wf {

uint8_t* file_set::allocate(const std::string& name, int64_t size) {
    if (size < 0 || uint64_t(size) > uint64_t(SIZE_MAX / 2)) throw error(name + ": size " + std::to_string(size) + " is too large for this build");
    std::unique_ptr<file_bytes> buf;
    try {
        buf = std::make_unique<file_bytes>(size_t(size));
    } catch (const std::bad_alloc&) {
        throw error("out of memory: could not allocate " + std::to_string(size) + " bytes for " + name);
    }
    uint8_t* p = buf->data();
    files_[name] = std::move(buf);
    return p;
}

void file_set::add(const std::string& name, std::span<const uint8_t> bytes) {
    auto buf = std::make_unique<file_bytes>(bytes.size());
    if (!bytes.empty()) std::memcpy(buf->data(), bytes.data(), bytes.size());
    files_[name] = std::move(buf);
}

const file_bytes* file_set::get(const std::string& name) const {
    auto it = files_.find(name);
    return it == files_.end() ? nullptr : it->second.get();
}

std::string_view file_set::text(const std::string& name) const {
    auto* f = get(name);
    if (!f) throw error("missing file " + name);
    return {reinterpret_cast<const char*>(f->data()), f->size()};
}

std::vector<std::string> file_set::names() const {
    std::vector<std::string> r;
    for (auto& [k, v] : files_) r.push_back(k);
    return r;
}

}  // namespace wf
