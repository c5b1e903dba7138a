#pragma once
// The host backend's runs and spans (host_backend.cpp): the cells of a box or
// of the shell around one as contiguous pieces of a field's array, and the
// copies over them, shared out evenly among the threads of an OpenMP team.
#include <algorithm>
#include <cstddef>
#include <vector>

#include "backends/backend.hpp"
#include "backends/host_copy.hpp"
#include "backends/plane_kernels.hpp"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace checkmpi::host {

inline int thread_index() {
#ifdef _OPENMP
  return omp_get_thread_num();
#else
  return 0;
#endif
}
inline int team_size() {
#ifdef _OPENMP
  return omp_get_num_threads();
#else
  return 1;
#endif
}

// This thread's share [begin, end) of n items, inside a parallel region.
struct Share {
  std::size_t begin, end;
};
inline Share my_share(std::size_t n) {
  const std::size_t t = std::size_t(thread_index()), T = std::size_t(team_size());
  return {n * t / T, n * (t + 1) / T};
}

// Runs of cells of one field, `len` elements each, `rows` of them `row_step`
// apart in each of `planes` planes `plane_step` apart, starting at `first`.
struct Runs {
  std::size_t first = 0, len = 0, rows = 0, row_step = 0, planes = 0, plane_step = 0;
  std::size_t total() const { return len * rows * planes; }
  std::size_t start(std::size_t run) const { return first + (run / rows) * plane_step + (run % rows) * row_step; }
};

// Exactly the cells of box `b`, row by row.
inline Runs rows_of(const Grid& g, const Box& b) {
  if (b.empty()) return {};
  const auto st = g.stride();
  return {g.index(b.lo[0], b.lo[1], b.lo[2]), std::size_t(b.hi[0] - b.lo[0] + 1), std::size_t(b.hi[1] - b.lo[1] + 1),
          st[1], std::size_t(b.hi[2] - b.lo[2] + 1), st[2]};
}

// The cells of box `b` in as few runs as shift() may use: with the whole
// interior width in x, the rows of a plane are joined across the halo cells
// between them; with the whole interior height in y too, the planes are
// joined as well and the box is one long run.
inline Runs joined_runs(const Grid& g, const Box& b) {
  Runs r = rows_of(g, b);
  if (b.empty() || b.lo[0] != 1 || b.hi[0] != g.l) return r;
  r.len = g.index(b.hi[0], b.hi[1], b.lo[2]) - r.first + 1;
  r.rows = 1;
  if (b.lo[1] == 1 && b.hi[1] == g.m) {
    r.len = g.index(b.hi[0], b.hi[1], b.hi[2]) - r.first + 1;
    r.planes = 1;
  }
  return r;
}

// dst[c] = src[c + offset] over the runs, their cells split evenly over the
// threads (a long run is cut into chunks, short runs are dealt out whole).
// Inside a parallel region.
template <class Real>
void copy_runs(Real* dst, const Real* src, long offset, const Runs& r, bool streaming) {
  if (r.total() == 0) return;
  const Share mine = my_share(r.total());
  std::size_t run = mine.begin / r.len, within = mine.begin % r.len, left = mine.end - mine.begin;
  std::size_t plane = run / r.rows, row = run % r.rows;
  if (r.len == 1) {  // one cell per run (a plane across x): a strided loop, prefetched
    for (; left > 0; --left) {
      const std::size_t at = r.first + plane * r.plane_step + row * r.row_step;
      if (host_tuning()) __builtin_prefetch(dst + at + kPrefetchAhead * r.row_step, 1, 0);
      dst[at] = src[long(at) + offset];
      if (++row == r.rows) row = 0, ++plane;
    }
    return;
  }
  while (left > 0) {
    const std::size_t n = std::min(r.len - within, left);
    const std::size_t at = r.first + plane * r.plane_step + row * r.row_step + within;
    if (n < 16) {  // a short run (the x faces of a masked update): mostly waiting for its lines, so prefetch
      if (host_tuning()) {
        const std::size_t ahead = at + kPrefetchAhead * r.row_step;
        __builtin_prefetch(dst + ahead, 1, 0);
        __builtin_prefetch(src + long(ahead) + offset, 0, 0);
      }
      for (std::size_t i = 0; i < n; ++i) dst[at + i] = src[long(at + i) + offset];
    } else {
      if (streaming && host_tuning()) {  // see kPrefetchRows
        const std::size_t ahead = at + kPrefetchRows * r.row_step;
        __builtin_prefetch(dst + ahead, 1, 0);
        __builtin_prefetch(dst + ahead + n - 1, 1, 0);
      }
      copy_elements(dst + at, src + long(at) + offset, n, streaming);
    }
    left -= n;
    within = 0;
    if (++row == r.rows) row = 0, ++plane;
  }
  finish_streaming(streaming);
}

// [begin, end) of one field's array.
struct Span {
  std::size_t begin, end;
};

// Cells of one field's array by coordinates, halo included: the first
// interior cell at or after a cell and the last at or before it (kNone when
// there is none), and the cell before one in memory order.
constexpr std::size_t kNone = ~std::size_t(0);
struct Cell {
  int i, j, k;
};
inline std::size_t interior_from(const Grid& g, Cell c) {
  if (c.k < 1) return g.index(1, 1, 1);
  if (c.k > g.n) return kNone;
  const std::size_t next_plane = c.k < g.n ? g.index(1, 1, c.k + 1) : kNone;
  if (c.j < 1) return g.index(1, 1, c.k);
  if (c.j > g.m) return next_plane;
  if (c.i < 1) return g.index(1, c.j, c.k);
  if (c.i > g.l) return c.j < g.m ? g.index(1, c.j + 1, c.k) : next_plane;
  return g.index(c.i, c.j, c.k);
}
inline std::size_t interior_to(const Grid& g, Cell c) {
  if (c.k > g.n) return g.index(g.l, g.m, g.n);
  if (c.k < 1) return kNone;
  const std::size_t last_plane = c.k > 1 ? g.index(g.l, g.m, c.k - 1) : kNone;
  if (c.j > g.m) return g.index(g.l, g.m, c.k);
  if (c.j < 1) return last_plane;
  if (c.i > g.l) return g.index(g.l, c.j, c.k);
  if (c.i < 1) return c.j > 1 ? g.index(g.l, c.j - 1, c.k) : last_plane;
  return g.index(c.i, c.j, c.k);
}
inline Cell before(const Grid& g, Cell c) {
  if (c.i > 0) return {c.i - 1, c.j, c.k};
  if (c.j > 0) return {g.l + 1, c.j - 1, c.k};
  return {g.l + 1, g.m + 1, c.k - 1};
}

// The interior outside `inner`, in memory order, as the spans between
// inner's rows: from the interior's first cell to inner's first row, from
// each inner row's end to the next one's start, and from the last one to the
// interior's last cell. Each span is trimmed to its first and last interior
// cells, and dropped when it has none (the halo cells between the rows of an
// inner box as wide as the interior, or between its planes). Halo cells left
// inside a span (row ends, the halo rows between planes) are overwritten by
// shift, which it may do: step10's shell is then whole slabs and one run per
// pair of rows (x face of one row, the two halo cells, x face of the next)
// rather than two short runs per row, and a cache line shared by two faces
// is fetched once.
inline std::vector<Span> shell_spans(const Grid& g, const Box& inner) {
  std::vector<Span> out;
  Cell at{1, 1, 1};
  const auto up_to = [&](Cell end) {  // the span [at, end), trimmed
    const std::size_t a = interior_from(g, at), b = interior_to(g, before(g, end));
    if (a != kNone && b != kNone && a <= b) out.push_back({a, b + 1});
  };
  if (!inner.empty()) {
    const bool wide = inner.lo[0] == 1 && inner.hi[0] == g.l;  // a plane's rows: one run but for halo cells
    for (int k = inner.lo[2]; k <= inner.hi[2]; ++k)
      for (int j = inner.lo[1]; j <= inner.hi[1]; j = wide ? inner.hi[1] + 1 : j + 1) {
        up_to({inner.lo[0], j, k});
        at = {inner.hi[0] + 1, wide ? inner.hi[1] : j, k};
      }
  }
  up_to({g.l + 1, g.m, g.n});
  return out;
}

// dst[c] = src[c + offset] over the spans; `before[s]` is the cells of the
// spans before span s (and the total at the end), so the cells are split
// evenly over the threads. The spans are walked last to first: the shell
// runs right after the inner sweep, whose last rows' ends (the lines the x
// faces share with them) may still be in the caches. Inside a parallel region.
template <class Real>
void copy_spans(Real* dst, const Real* src, long offset, const std::vector<Span>& spans,
                const std::vector<std::size_t>& before, bool streaming) {
  const Share mine = my_share(before.back());
  if (mine.begin == mine.end) return;
  const auto span_of = [&](std::size_t cell) {
    return std::size_t(std::upper_bound(before.begin(), before.end(), cell) - before.begin()) - 1;
  };
  const std::size_t first = span_of(mine.begin);
  for (std::size_t s = span_of(mine.end - 1) + 1; s-- > first;) {
    const std::size_t from = spans[s].begin + (std::max(mine.begin, before[s]) - before[s]);
    const std::size_t n = spans[s].begin + (std::min(mine.end, before[s + 1]) - before[s]) - from;
    if (n < 64) {  // the x faces: prefetch the spans a few rows back, whose lines may be in memory
      if (host_tuning() && s >= first + kPrefetchSpans) {
        const Span& ahead = spans[s - kPrefetchSpans];
        __builtin_prefetch(dst + ahead.begin, 1, 0);
        __builtin_prefetch(dst + ahead.end - 1, 1, 0);
        __builtin_prefetch(src + long(ahead.begin) + offset, 0, 0);
        __builtin_prefetch(src + long(ahead.end - 1) + offset, 0, 0);
      }
      for (std::size_t i = from; i < from + n; ++i) dst[i] = src[long(i) + offset];
    } else {
      copy_elements(dst + from, src + long(from) + offset, n, streaming);
    }
  }
  finish_streaming(streaming);
}

}  // namespace checkmpi::host
