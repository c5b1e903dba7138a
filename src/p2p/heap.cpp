#include "p2p/heap.hpp"

#include <cstdlib>

namespace checkmpi::p2p {

SmallChunkHold::SmallChunkHold() {
  if (!kActive) return;
  constexpr std::ptrdiff_t kChunk = 4 * sizeof(std::size_t);  // glibc's smallest chunk (32 B on 64-bit)
  held_.reserve(kMost);
  int run = 0;
  while (held_.size() < kMost && run < kRun) {
    char* const p = static_cast<char*>(std::calloc(1, 1));  // calloc, as the library: not from the thread cache
    if (p == nullptr) break;
    run = !held_.empty() && p - held_.back() == kChunk ? run + 1 : 0;
    held_.push_back(p);
  }
}

SmallChunkHold::~SmallChunkHold() {
  for (char* p : held_) std::free(p);
}

}  // namespace checkmpi::p2p
