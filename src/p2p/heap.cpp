#include "p2p/heap.hpp"

#include <cstdint>
#include <cstdlib>
#include <cstring>

#if CHECKMPI_HEAP_ACTIVE
#include <unistd.h>
#endif

namespace checkmpi::p2p {

#if CHECKMPI_HEAP_ACTIVE
namespace {

// glibc's chunk layout: a chunk starts two words before the memory malloc
// returns; its second word is its size, the low three bits flags (bit 0:
// the chunk before is in use). The main heap's chunks lie one after
// another up to the program break; the last one is the top.
constexpr std::size_t kWord = sizeof(std::size_t);

// Through an integer: the header lies outside the object malloc returned.
const char* chunk_of(const void* p) {
  return reinterpret_cast<const char*>(reinterpret_cast<std::uintptr_t>(p) - 2 * kWord);
}

std::size_t size_word(const char* chunk) {
  std::size_t v;
  std::memcpy(&v, chunk + kWord, sizeof v);
  return v;
}

std::size_t chunk_size(const char* chunk) { return size_word(chunk) & ~std::size_t(7); }

// The chunk after p's, or nullptr where it is not inside the main heap
// (below the program break, its header readable).
const char* next_chunk(const void* p) {
  const char* const end = static_cast<const char*>(sbrk(0));
  const char* const next = chunk_of(p) + chunk_size(chunk_of(p));
  if (chunk_of(p) >= end || next + 2 * kWord > end) return nullptr;
  return next;
}

// Whether a chunk of the main heap is its top: it ends at the program break.
bool is_top(const char* chunk) { return chunk + chunk_size(chunk) == static_cast<const char*>(sbrk(0)); }

}  // namespace

bool SmallChunkHold::carved_from_top(const void* p) {
  const char* const next = next_chunk(p);
  return next != nullptr && is_top(next);
}

SmallChunkHold::SmallChunkHold() {
  held_.reserve(kMost);
  while (held_.size() + 1 < kMost) {
    void* const p = std::calloc(1, 1);  // calloc, as the library: not from the thread cache
    if (p == nullptr) break;
    held_.push_back(p);
    const char* const rest = next_chunk(p);
    if (rest == nullptr) continue;
    if ((at_top_ = is_top(rest))) break;  // carved from the top
    // Split from a larger free chunk: the rest follows p; take it whole (a
    // request of its size less a word fits it exactly) where it is free
    // (the chunk after it says so).
    const char* const after = next_chunk(rest + 2 * kWord);
    const std::size_t size = chunk_size(rest);
    if (after != nullptr && (size_word(after) & 1) == 0 && size > 4 * kWord) {
      void* const q = std::malloc(size - kWord);
      if (q != nullptr) held_.push_back(q);
    }
  }
}
#else
bool SmallChunkHold::carved_from_top(const void*) { return false; }

SmallChunkHold::SmallChunkHold() = default;
#endif

SmallChunkHold::~SmallChunkHold() {
  for (void* p : held_) std::free(p);
}

}  // namespace checkmpi::p2p
