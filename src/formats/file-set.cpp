#include "formats/file-set.h"

#include <new>

#include "core/error.h"

namespace wf {

uint8_t* file_set::allocate(const std::string& name, int64_t size) {
    if (size < 0 || uint64_t(size) > uint64_t(SIZE_MAX / 2)) throw error(name + ": size " + std::to_string(size) + " is too large for this build");
    auto buf = std::make_unique<std::vector<uint8_t>>();
    try {
        buf->resize(size_t(size));
    } catch (const std::bad_alloc&) {
        throw error("out of memory: could not allocate " + std::to_string(size) + " bytes for " + name);
    }
    uint8_t* p = buf->data();
    files_[name] = std::move(buf);
    return p;
}

void file_set::add(const std::string& name, std::vector<uint8_t> bytes) { files_[name] = std::make_unique<std::vector<uint8_t>>(std::move(bytes)); }

const std::vector<uint8_t>* file_set::get(const std::string& name) const {
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
