// The heap as a fresh program's around a timed loop, for the MPI library's
// own small allocations.
//
// Open MPI's libnbc builds every schedule anew: calloc(1, 4), grown by
// realloc to the schedule's size (four steps to 157 B for a 2-rank
// MPI_Ialltoall), freed at completion. glibc's calloc skips the per-thread
// cache and reuses the smallest free chunk first; where this program's
// start-up left small free chunks between chunks in use, every growth moved
// the schedule (a new chunk, a copy, a free: three times a call, about 40 ns
// of a 0.3 us MPI_Ialltoall, counted with a realloc shim), and the freed
// chunk was the next call's again, call after call. osu_ialltoall, a small C
// program, has almost none: its schedules grow in place.
//
// While a SmallChunkHold lives it holds every small free chunk that calloc
// would hand out first, so that the library's calloc carves from a free
// block that its reallocs grow into. It takes chunks with calloc(1, 1) until
// kRun + 1 in a row come from one block (each the last one's address plus
// glibc's smallest chunk): glibc hands out the smallest free chunks first,
// so a block it carves that many from is larger than the holes it held.
// Elsewhere than glibc's allocator (another C library, or a sanitizer's
// allocator) it does nothing.
#pragma once

#include <cstddef>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#define CHECKMPI_HEAP_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CHECKMPI_HEAP_SANITIZED 1
#endif
#endif

namespace checkmpi::p2p {

class SmallChunkHold {
 public:
  SmallChunkHold();
  ~SmallChunkHold();
  SmallChunkHold(const SmallChunkHold&) = delete;
  SmallChunkHold& operator=(const SmallChunkHold&) = delete;
  std::size_t held() const { return held_.size(); }

  static constexpr std::size_t kMost = 1 << 14;  // at most 16384 chunks (512 KiB)
  static constexpr int kRun = 8;
#if defined(__GLIBC__) && !defined(CHECKMPI_HEAP_SANITIZED)
  static constexpr bool kActive = true;
#else
  static constexpr bool kActive = false;
#endif

 private:
  std::vector<char*> held_;
};

}  // namespace checkmpi::p2p
