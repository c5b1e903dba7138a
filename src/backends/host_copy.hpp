// The host backend's innermost loops: contiguous copies, with streaming
// (non-temporal) stores for data that will not be read again soon (the
// plane kernels' bodies are in plane_kernels.hpp, shared with the GPU).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace checkmpi {

// A kernel writing at least this many bytes streams its stores: that much
// would not stay in the caches until the next step anyway.
inline constexpr std::size_t kStreamingBytes = std::size_t(4) << 20;

// The tuning of the host kernels (streaming stores, prefetching in strided
// loops, huge pages for large arrays); CHECKMPI_PLAIN_KERNELS=1 in the
// environment turns it off, so bench/ can measure what it buys.
bool host_tuning();

// dst[0..n) = src[0..n) (no overlap). Streaming: whole destination cache
// lines are written with non-temporal stores, which skip reading the line
// first; the partial lines at both ends use ordinary stores (a partial
// non-temporal line is flushed slowly). Call finish_streaming() before the
// data is handed to another thread or to MPI.
template <class Real>
void copy_elements(Real* dst, const Real* src, std::size_t n, bool streaming) {
#if defined(__SSE2__)
  constexpr std::size_t kLine = 64;
  const std::size_t bytes = n * sizeof(Real);
  if (streaming && bytes >= 4 * kLine && host_tuning()) {
    auto* d = reinterpret_cast<char*>(dst);
    const auto* s = reinterpret_cast<const char*>(src);
    const std::size_t head = (kLine - reinterpret_cast<std::uintptr_t>(d) % kLine) % kLine;
    std::memcpy(d, s, head);
    std::size_t at = head;
    for (; at + kLine <= bytes; at += kLine) {
      const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + at));
      const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + at + 16));
      const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + at + 32));
      const __m128i e = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + at + 48));
      _mm_stream_si128(reinterpret_cast<__m128i*>(d + at), a);
      _mm_stream_si128(reinterpret_cast<__m128i*>(d + at + 16), b);
      _mm_stream_si128(reinterpret_cast<__m128i*>(d + at + 32), c);
      _mm_stream_si128(reinterpret_cast<__m128i*>(d + at + 48), e);
    }
    std::memcpy(d + at, s + at, bytes - at);
    return;
  }
#endif
  (void)streaming;
  std::memcpy(dst, src, n * sizeof(Real));
}

// Orders this thread's streaming stores before whatever follows.
inline void finish_streaming(bool streaming) {
#if defined(__SSE2__)
  if (streaming) _mm_sfence();
#else
  (void)streaming;
#endif
}

// Rows of a box this many ahead have the partial cache lines at their ends
// prefetched for writing: a streaming copy writes those with ordinary
// stores, and a store that misses the caches holds up every store behind it
// (the streaming ones too) until its line has come from memory, once per
// row unless the line was fetched earlier.
inline constexpr std::size_t kPrefetchRows = 4;
// Spans this many ahead are prefetched by the shell update (step10's x faces).
inline constexpr std::size_t kPrefetchSpans = 8;

}  // namespace checkmpi
