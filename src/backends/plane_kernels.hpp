// The plane kernels' bodies (pack, unpack, plane copy), written once for
// both backends: the host backend runs a row's columns in each iteration of
// its OpenMP loops, the CUDA backend one column per thread (c1 = c0 + 1). So
// the host tests run the GPU kernels' index math even where no GPU is present.
#pragma once

#include <cstddef>
#include <cstring>

#include "grid/planes.hpp"  // Plane

#if defined(__CUDACC__)
#define CHECKMPI_HOST_DEVICE __host__ __device__
#else
#define CHECKMPI_HOST_DEVICE
#endif

namespace checkmpi {

// Elements this many strides ahead are prefetched by the host's strided
// loops: an x plane has one element per cache line, so without it every
// element waits for its own line from memory.
inline constexpr std::size_t kPrefetchAhead = 16;

// Element (r, c) of block p, r counting the rows of all its layers (layer
// r / rows, row r % rows): its place in the field, and in a message (the
// fields' blocks one after another, each layer by layer, row by row,
// columns fastest).
CHECKMPI_HOST_DEVICE inline std::size_t in_field(const Plane& p, std::size_t r, std::size_t c) {
  const std::size_t layer = p.layers == 1 ? 0 : r / p.rows, row = p.layers == 1 ? r : r % p.rows;
  return p.offset + layer * p.layer_stride + row * p.row_stride + c * p.col_stride;
}
CHECKMPI_HOST_DEVICE inline std::size_t in_message(const Plane& p, int field, std::size_t r, std::size_t c) {
  return (std::size_t(field) * p.layers * p.rows + r) * p.cols + c;
}

// A run of n contiguous elements (a row of a y or z plane): memcpy on the
// host, the thread's own element on the GPU.
template <class Real>
CHECKMPI_HOST_DEVICE inline void copy_run(Real* to, const Real* from, std::size_t n) {
#if defined(__CUDA_ARCH__)
  for (std::size_t c = 0; c < n; ++c) to[c] = from[c];
#else
  std::memcpy(to, from, n * sizeof(Real));
#endif
}

// Columns [c0, c1) of row r (of all the layers' rows) of `field`'s block p into message `buf`. On the
// host, with `prefetch` (its tuning), a strided row reads kPrefetchAhead
// columns ahead.
template <class Real>
CHECKMPI_HOST_DEVICE inline void pack_columns(const Real* field, const Plane& p, Real* buf, int f, std::size_t r,
                                              std::size_t c0, std::size_t c1, bool prefetch = false) {
  const Real* from = field + in_field(p, r, 0);
  Real* to = buf + in_message(p, f, r, 0);
  if (p.col_stride == 1) return copy_run(to + c0, from + c0, c1 - c0);
  const std::size_t stride = p.col_stride;
  for (std::size_t c = c0; c < c1; ++c) {
#if !defined(__CUDA_ARCH__)
    if (prefetch && c + kPrefetchAhead < c1) __builtin_prefetch(from + (c + kPrefetchAhead) * stride, 0, 0);
#endif
    to[c] = from[c * stride];
  }
  (void)prefetch;
}

// Columns [c0, c1) of row r of `field`'s plane p from message `buf`.
template <class Real>
CHECKMPI_HOST_DEVICE inline void unpack_columns(const Real* buf, const Plane& p, Real* field, int f, std::size_t r,
                                                std::size_t c0, std::size_t c1, bool prefetch = false) {
  const Real* from = buf + in_message(p, f, r, 0);
  Real* to = field + in_field(p, r, 0);
  if (p.col_stride == 1) return copy_run(to + c0, from + c0, c1 - c0);
  const std::size_t stride = p.col_stride;
  for (std::size_t c = c0; c < c1; ++c) {
#if !defined(__CUDA_ARCH__)
    if (prefetch && c + kPrefetchAhead < c1) __builtin_prefetch(to + (c + kPrefetchAhead) * stride, 1, 0);
#endif
    to[c * stride] = from[c];
  }
  (void)prefetch;
}

// Columns [c0, c1) of row r: plane `to` of dst takes plane `from` of src.
template <class Real>
CHECKMPI_HOST_DEVICE inline void copy_plane_columns(Real* dst, const Plane& to, const Real* src, const Plane& from,
                                                    std::size_t r, std::size_t c0, std::size_t c1) {
  for (std::size_t c = c0; c < c1; ++c) dst[in_field(to, r, c)] = src[in_field(from, r, c)];
}

}  // namespace checkmpi
