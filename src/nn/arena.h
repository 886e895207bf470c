// Scratch memory for one forward pass at a time: a bump allocator reset at the start of each pass. It grows
// while a session finds its largest pass and is then reused, so steady-state passes allocate nothing.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <vector>

#include "core/error.h"

namespace wf {

class arena {
public:
    // n uninitialised values of T, 64-byte aligned, valid until the next reset().
    template <class T>
    T* alloc(int64_t n) {
        return static_cast<T*>(bytes(size_t(n < 0 ? 0 : n) * sizeof(T)));
    }
    // Starts a new pass. If the last pass needed more than one block, the blocks become one of the total size.
    void reset() {
        if (blocks_.size() > 1) {
            size_t total = 0;
            for (auto& b : blocks_) total += b.size;
            blocks_.clear();
            add_block(total);
        }
        used_ = 0;
    }
    size_t capacity() const { return blocks_.empty() ? 0 : blocks_.back().size; }
    size_t block_count() const { return blocks_.size(); }

private:
    struct block {
        std::unique_ptr<uint8_t[]> mem;
        uint8_t* base;
        size_t size;
    };
    static constexpr size_t align = 64;
    void* bytes(size_t n) {
        n = (n + align - 1) / align * align;
        if (blocks_.empty() || used_ + n > blocks_.back().size) {
            add_block(std::max(n, 2 * capacity()));
            used_ = 0;
        }
        void* p = blocks_.back().base + used_;
        used_ += n;
        return p;
    }
    void add_block(size_t n) {
        uint8_t* raw = new (std::nothrow) uint8_t[n + align];
        if (!raw) throw error("out of memory: could not allocate " + std::to_string(n) + " bytes of scratch");
        uint8_t* base = raw + (align - reinterpret_cast<uintptr_t>(raw) % align) % align;
        blocks_.push_back({std::unique_ptr<uint8_t[]>(raw), base, n});
    }
    std::vector<block> blocks_;
    size_t used_ = 0;
};

}  // namespace wf
