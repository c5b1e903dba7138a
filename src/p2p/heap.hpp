// The heap as a fresh program's around a timed loop, for the MPI library's
// own small allocations.
//
// Open MPI's libnbc builds every schedule anew: calloc(1, 4), grown by
// realloc to the schedule's size (four steps to 157 B for a 2-rank
// MPI_Ialltoall), freed at completion. glibc's calloc skips the per-thread
// cache and takes the best-fitting free chunk before the heap's top. In a
// heap without free chunks the schedule is carved from the top, grows by
// splitting the top and goes back to it. Where the program's allocations
// left free chunks (checkmpi-p2p's start-up, and osu_ialltoall's own on an
// AMD VM), calloc carves the schedule from one of them and every growth
// either moves it (a new chunk, a copy, a free: item 10 of
// docs/p2p_osu.md) or merges the free chunk after it and frees the rest
// (an unlink and a free per growth: item 15); 40-50 ns of a 0.35 us
// MPI_Ialltoall + MPI_Wait, call after call.
//
// While a SmallChunkHold lives it holds every free chunk that calloc would
// hand out before the top: it takes calloc(1, 1), as the library's calloc
// but smaller, until one comes from the top (the chunk after it, the top,
// ends at the program break), and where one came from a larger free chunk
// it takes the rest of that chunk whole. It reads glibc's chunk headers for
// that, in the main heap only (below the program break; a thread's arena is
// never "the top", and the hold stops at kMost chunks there); elsewhere
// than glibc's allocator (another C library, a sanitizer's allocator) it
// does nothing.
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
#if defined(__GLIBC__) && !defined(CHECKMPI_HEAP_SANITIZED)
#define CHECKMPI_HEAP_ACTIVE 1
#else
#define CHECKMPI_HEAP_ACTIVE 0
#endif

namespace checkmpi::p2p {

class SmallChunkHold {
 public:
  SmallChunkHold();
  ~SmallChunkHold();
  SmallChunkHold(const SmallChunkHold&) = delete;
  SmallChunkHold& operator=(const SmallChunkHold&) = delete;
  std::size_t held() const { return held_.size(); }
  bool at_top() const { return at_top_; }  // the last chunk taken came from the top

  // Whether glibc carved p (from malloc or calloc) from the top of the
  // main heap: the chunk after p's is the top.
  static bool carved_from_top(const void* p);

  static constexpr std::size_t kMost = 1 << 14;  // at most 16384 chunks
  static constexpr bool kActive = CHECKMPI_HEAP_ACTIVE;

 private:
  std::vector<void*> held_;
  bool at_top_ = false;
};

}  // namespace checkmpi::p2p
