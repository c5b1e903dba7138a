#include "backends/host_in_place.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

#include "backends/host_copy.hpp"  // host_tuning

namespace checkmpi {

namespace {

// dst[c] = src[c] for the bytes c from n-1 down to 0 (the two do not
// overlap): compiled for the widest vectors the CPU has, chosen when the
// program starts (memcpy, which does that too, copies upwards only; GCC is
// told not to turn the loop into a call to it).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx512f", "avx2", "default"), optimize("no-tree-loop-distribute-patterns")))
#endif
void copy_down(unsigned char* __restrict dst, const unsigned char* __restrict src, std::size_t n) {
  for (long c = long(n) - 1; c >= 0; --c) dst[c] = src[c];
}

// a[c] = a[c + s] for c in [first, first + n), each source read before it is
// overwritten, walking down the addresses when the sources lie below (s < 0:
// the forward shift) and up otherwise. Every piece of a sweep is walked the
// same way round, so a sweep is one stream in one direction for the
// prefetchers, and a load never follows a store to an address a multiple of
// 4 KiB away (the CPU takes it for the same address and stalls the load;
// with the planes of a 256^3 block 266,256 bytes apart, a forward copy of a
// plane would do it at every load).
template <class Real>
inline void move(Real* a, std::size_t first, std::size_t n, long s) {
  Real* d = a + first;
  const Real* from = d + s;
  if (std::size_t(s < 0 ? -s : s) < n) {  // overlapping: memmove copies the right way round
    std::memmove(d, from, n * sizeof(Real));
  } else if (s < 0) {
    copy_down(reinterpret_cast<unsigned char*>(d), reinterpret_cast<const unsigned char*>(from), n * sizeof(Real));
  } else {
    std::memcpy(d, from, n * sizeof(Real));
  }
}

// Short pieces one after another (a face of each row, the rows of a narrow
// box) wait for their lines one at a time: the piece `kAhead` pieces on in
// the sweep has its first and last source and destination lines fetched
// first. Longer pieces are streams the hardware prefetches.
constexpr std::size_t kAhead = 8;
constexpr std::size_t kShortBytes = 256;
template <class Real>
inline void fetch(const Real* a, std::size_t first, std::size_t n, long s) {
  if (n == 0 || n * sizeof(Real) > kShortBytes || !host_tuning()) return;
  __builtin_prefetch(a + first, 1, 0);
  __builtin_prefetch(a + first + n - 1, 1, 0);
  __builtin_prefetch(a + long(first) + s, 0, 0);
  __builtin_prefetch(a + long(first + n - 1) + s, 0, 0);
}

// [n*t/T, n*(t+1)/T): thread t's share of n items.
struct Range {
  std::size_t begin, end;
};
Range share(std::size_t n, int t, int T) {
  return {n * std::size_t(t) / std::size_t(T), n * (std::size_t(t) + 1) / std::size_t(T)};
}

std::size_t extent(const Box& b, int d) { return std::size_t(b.hi[d] - b.lo[d] + 1); }

}  // namespace

template <class Real>
void shift_box_in_place(const Grid& g, Real* a, int axis, const Box& b, int step, int t, int T) {
  if (b.empty()) return;
  const bool reverse = step < 0;
  const long s = -long(step) * long(g.stride()[std::size_t(axis)]);  // where a cell's value comes from
  const std::size_t width = extent(b, 0), rows = extent(b, 1), planes = extent(b, 2);
  const bool wide = b.lo[0] == 1 && b.hi[0] == g.l;  // a plane's rows are one run but for halo cells
  // The n-th of `count` items in the order of the sweep: down the addresses forward, up in reverse.
  const auto nth = [reverse](std::size_t n, std::size_t begin, std::size_t end) {
    return reverse ? begin + n : end - 1 - n;
  };
  if (axis == 0) {
    // Rows are independent: a share of them, those of one plane joined into one run when the box is wide.
    const Range mine = share(rows * planes, t, T);
    if (!wide) {
      // Row after row (a face: one cell each), stepped from row to row: dividing each row's place out of its
      // number costs two divisions a row, more than moving a face's cell. `ahead` runs kAhead rows on.
      struct Cursor {
        long j, k;
        std::size_t at;
      };
      const long dj = reverse ? 1 : -1;
      const auto next = [&](Cursor& c) {
        c.j += dj;
        if (c.j < b.lo[1] || c.j > b.hi[1]) {
          c.j = reverse ? b.lo[1] : b.hi[1];
          c.k += dj;
        }
        c.at = g.index(b.lo[0], int(c.j), int(c.k));
      };
      const std::size_t count = mine.end - mine.begin;
      if (count == 0) return;
      const std::size_t r = nth(0, mine.begin, mine.end);
      Cursor row{b.lo[1] + long(r % rows), b.lo[2] + long(r / rows), 0};
      row.at = g.index(b.lo[0], int(row.j), int(row.k));
      Cursor ahead = row;
      for (std::size_t n = 0; n < kAhead && n + 1 < count; ++n) next(ahead);
      for (std::size_t n = 0; n < count; ++n) {
        if (n + kAhead < count) fetch(a, ahead.at, width, s);
        move(a, row.at, width, s);
        if (n + kAhead + 1 < count) next(ahead);
        if (n + 1 < count) next(row);
      }
      return;
    }
    for (std::size_t done = 0; done < mine.end - mine.begin;) {
      const std::size_t r = nth(done, mine.begin, mine.end);  // the first row of the run in the sweep's order
      const std::size_t plane_first = r / rows * rows;
      std::size_t lo = r, hi = r;  // the run's rows: a plane's, within the share
      if (reverse) hi = std::min(mine.end, plane_first + rows) - 1;
      else lo = std::max(mine.begin, plane_first);
      const int k = b.lo[2] + int(r / rows);
      const std::size_t first = g.index(b.lo[0], b.lo[1] + int(lo % rows), k);
      move(a, first, g.index(b.hi[0], b.lo[1] + int(hi % rows), k) - first + 1, s);
      done += hi - lo + 1;
    }
    return;
  }
  if (axis == 1) {
    // Planes are independent; where threads outnumber them, columns of planes are too.
    const std::size_t columns = std::size_t(T) > planes ? (std::size_t(T) + planes - 1) / planes : 1;
    const Range mine = share(planes * columns, t, T);
    for (std::size_t n = 0; n < mine.end - mine.begin; ++n) {
      const std::size_t item = nth(n, mine.begin, mine.end);
      const int k = b.lo[2] + int(item / columns);
      const std::size_t c = item % columns;
      if (columns == 1 && wide) {  // rows lo..hi as one run: memmove reads each row before it is overwritten
        const std::size_t first = g.index(b.lo[0], b.lo[1], k);
        move(a, first, g.index(b.hi[0], b.hi[1], k) - first + 1, s);
        continue;
      }
      const int x0 = b.lo[0] + int(width * c / columns), x1 = b.lo[0] + int(width * (c + 1) / columns);
      if (x1 <= x0) continue;
      for (std::size_t r = 0; r < rows; ++r) {  // against the direction: the row a row reads is still old
        if (r + kAhead < rows) fetch(a, g.index(x0, b.lo[1] + int(nth(r + kAhead, 0, rows)), k), x1 - x0, s);
        move(a, g.index(x0, b.lo[1] + int(nth(r, 0, rows)), k), std::size_t(x1 - x0), s);
      }
    }
    return;
  }
  // Columns along z are independent: a share of the box's cross-section (one run per plane when wide),
  // walked plane by plane against the direction.
  const std::size_t base = g.index(b.lo[0], b.lo[1], 0);
  const std::size_t section = wide ? g.index(b.hi[0], b.hi[1], 0) - base + 1 : rows * width;
  const Range mine = share(section, t, T);
  if (mine.begin == mine.end) return;
  for (std::size_t p = 0; p < planes; ++p) {
    const std::size_t at = base + std::size_t(b.lo[2] + int(nth(p, 0, planes))) * g.stride()[2];
    if (wide) {
      move(a, at + mine.begin, mine.end - mine.begin, s);
      continue;
    }
    const std::size_t first_row = mine.begin / width, last_row = (mine.end - 1) / width;
    const auto piece = [&](std::size_t n, std::size_t& first) {  // the share's n-th piece of a row
      const std::size_t row = nth(n, first_row, last_row + 1);
      const std::size_t from = std::max(mine.begin, row * width), to = std::min(mine.end, (row + 1) * width);
      first = at + row * g.stride()[1] + (from - row * width);
      return to - from;
    };
    for (std::size_t n = 0; n <= last_row - first_row; ++n) {
      std::size_t first = 0;
      if (n + kAhead <= last_row - first_row) {
        const std::size_t len = piece(n + kAhead, first);
        fetch(a, first, len, s);
      }
      const std::size_t len = piece(n, first);
      move(a, first, len, s);
    }
  }
}

bool faces_fit(const Box& box, int axis, int T) { return axis == 2 || int(extent(box, 2)) >= T; }

template <class Real>
void shift_faces_in_place(const Grid& g, Real* a, int axis, const Box& b, int gap_lo, int gap_hi, int step,
                          int t, int T) {
  if (b.empty()) return;
  const bool reverse = step < 0;
  const long s = -long(step) * long(g.stride()[std::size_t(axis)]);
  const std::size_t rows = extent(b, 1), planes = extent(b, 2);
  const auto nth = [reverse](std::size_t n, std::size_t begin, std::size_t end) {
    return reverse ? begin + n : end - 1 - n;
  };
  // Run q of a plane (0..rows): the left face of the first row; the right face of row q-1 to the left face of
  // row q; the right face of the last row. Its first cell and length within plane k.
  const auto run = [&](std::size_t q, int k, std::size_t& first) {
    const int j = b.lo[1] + int(q);
    first = q == 0 ? g.index(b.lo[0], j, k) : g.index(gap_hi + 1, j - 1, k);
    const std::size_t last = q == rows ? g.index(b.hi[0], j - 1, k) : g.index(gap_lo - 1, j, k);
    return last + 1 > first ? last + 1 - first : 0;
  };
  if (axis == 1) {  // a plane's runs in the sweep's order: run q reads the cells of run q -/+ 1
    const Range mine = share(planes, t, T);
    for (std::size_t n = 0; n < mine.end - mine.begin; ++n) {
      const int k = b.lo[2] + int(nth(n, mine.begin, mine.end));
      for (std::size_t q = 0; q <= rows; ++q) {
        std::size_t first = 0;
        if (q + kAhead <= rows) {
          const std::size_t len = run(nth(q + kAhead, 0, rows + 1), k, first);
          fetch(a, first, len, s);
        }
        const std::size_t len = run(nth(q, 0, rows + 1), k, first);
        if (len > 0) move(a, first, len, s);
      }
    }
    return;
  }
  // axis 2: the runs are independent columns; a share of them, plane by plane against the direction.
  const Range mine = share(rows + 1, t, T);
  for (std::size_t p = 0; p < planes && mine.begin < mine.end; ++p) {
    const int k = b.lo[2] + int(nth(p, 0, planes));
    for (std::size_t q = 0; q < mine.end - mine.begin; ++q) {
      std::size_t first = 0;
      if (q + kAhead < mine.end - mine.begin) {
        const std::size_t len = run(nth(q + kAhead, mine.begin, mine.end), k, first);
        fetch(a, first, len, s);
      }
      const std::size_t len = run(nth(q, mine.begin, mine.end), k, first);
      if (len > 0) move(a, first, len, s);
    }
  }
}

std::vector<ShellPart> in_place_shell_parts(const Grid& g, const Box& done, int axis, int step, int T) {
  const std::vector<Box> boxes = in_place_shell_boxes(g, done, axis, step);
  std::vector<ShellPart> out;
  for (std::size_t i = 0; i < boxes.size(); ++i) {
    const Box& b = boxes[i];
    // The decomposition's two x slabs, one after the other: x in [1, a] and [c, l], the rest alike.
    if (axis != 0 && i + 1 < boxes.size()) {
      const Box& next = boxes[i + 1];
      const bool pair = b.lo[0] == 1 && next.hi[0] == g.l && b.hi[0] + 1 < next.lo[0] && b.lo[1] == next.lo[1] &&
                        b.hi[1] == next.hi[1] && b.lo[2] == next.lo[2] && b.hi[2] == next.hi[2];
      Box whole = b;
      whole.hi[0] = g.l;
      if (pair && faces_fit(whole, axis, T)) {
        out.push_back({whole, b.hi[0] + 1, next.lo[0] - 1});
        ++i;
        continue;
      }
    }
    out.push_back({b});
  }
  return out;
}

template <class Real>
void shift_rows_in_place(const Grid& g, Real* a, const Offset& v, const Box& b, const Box& hole, int t, int T) {
  if (b.empty()) return;  // the same for every thread: none waits at the barrier below
  const long d = g.offset(v);  // a cell takes the value at c + d
  const bool down = d < 0;     // sources below: walk down the addresses
  // The box's cells as pieces of memory in ascending order: its rows (two where the hole cuts one); a box as
  // wide as the interior one piece per plane, its rows joined across the halo cells between them, or one piece
  // in all when it spans the interior's rows too. Halo cells inside a piece are overwritten, which the kernel
  // API allows; every cell of a piece still takes the value its source had, as memmove's do: the sweep reads
  // each source before it writes it.
  struct Piece {
    std::size_t first, n;
  };
  static thread_local std::vector<Piece> pieces;
  pieces.clear();
  const bool wide = hole.empty() && b.lo[0] == 1 && b.hi[0] == g.l;
  const bool whole = wide && b.lo[1] == 1 && b.hi[1] == g.m;
  const auto add = [&](std::size_t first, std::size_t last) { pieces.push_back({first, last + 1 - first}); };
  if (whole) {
    add(g.index(b.lo[0], b.lo[1], b.lo[2]), g.index(b.hi[0], b.hi[1], b.hi[2]));
  } else {
    for (int k = b.lo[2]; k <= b.hi[2]; ++k) {
      if (wide) {
        add(g.index(b.lo[0], b.lo[1], k), g.index(b.hi[0], b.hi[1], k));
        continue;
      }
      for (int j = b.lo[1]; j <= b.hi[1]; ++j) {
        const bool holed = !hole.empty() && j >= hole.lo[1] && j <= hole.hi[1] && k >= hole.lo[2] && k <= hole.hi[2];
        const int left = holed ? std::min(b.hi[0], hole.lo[0] - 1) : b.hi[0];
        if (left >= b.lo[0]) add(g.index(b.lo[0], j, k), g.index(left, j, k));
        const int right = holed ? std::max(b.lo[0], hole.hi[0] + 1) : b.hi[0] + 1;
        if (holed && right <= b.hi[0]) add(g.index(right, j, k), g.index(b.hi[0], j, k));
      }
    }
  }
  // This thread's share: the cells [begin, end) of the pieces laid end to end, in memory [lo, hi].
  std::size_t total = 0;
  for (const Piece& p : pieces) total += p.n;
  const Range mine = share(total, t, T);
  std::size_t at = 0, first_piece = 0;
  while (first_piece < pieces.size() && at + pieces[first_piece].n <= mine.begin) at += pieces[first_piece++].n;
  const std::size_t skip = mine.begin - at;  // cells of the first piece that are another thread's
  std::size_t lo = 0, hi = 0;
  const bool any = mine.end > mine.begin;
  if (any) {
    lo = pieces[first_piece].first + skip;
    std::size_t left = mine.end - mine.begin, p = first_piece, from = skip;
    while (left > pieces[p].n - from) left -= pieces[p].n - from, from = 0, ++p;
    hi = pieces[p].first + from + left - 1;
  }
  // The sources beyond this thread's end upstream (below lo going down, above hi going up) may be another
  // thread's cells, written by it after the barrier: a copy is kept first. Nothing wrote the field earlier in
  // this parallel region (the header's contract), so the copy needs no barrier before it.
  static thread_local std::vector<Real> kept;
  const std::size_t span = std::size_t(down ? -d : d);
  const std::size_t kept_from = down ? std::size_t(long(lo) + d) : hi + 1;  // kept[i] = a[kept_from + i]
  if (T > 1) {
    if (any) kept.assign(a + kept_from, a + kept_from + span);
#pragma omp barrier
  }
  if (!any) return;
  const bool shared = T > 1;
  // One run [first, last] of this thread's: the cells whose source is its own (or no one's) region, then
  // those whose source was kept, in the sweep's order.
  const auto run = [&](std::size_t first, std::size_t last) {
    std::size_t own_first = first, own_last = last;
    if (shared && down && long(first) + d < long(lo)) own_first = std::min(last + 1, std::size_t(long(lo) - d));
    if (shared && !down && last + std::size_t(d) > hi)
      own_last = hi >= std::size_t(d) + first ? hi - std::size_t(d) : first - 1;
    if (own_last + 1 > own_first) move(a, own_first, own_last - own_first + 1, d);
    if (down)
      for (std::size_t c = own_first; c-- > first;) a[c] = kept[std::size_t(long(c) + d) - kept_from];
    else
      for (std::size_t c = own_last + 1; c <= last; ++c) a[c] = kept[c + std::size_t(d) - kept_from];
  };
  // The thread's runs: its pieces clipped to [lo, hi], walked against the velocity.
  std::size_t last_piece = first_piece;
  while (last_piece + 1 < pieces.size() && pieces[last_piece + 1].first <= hi) ++last_piece;
  for (std::size_t n = 0; n <= last_piece - first_piece; ++n) {
    const Piece& p = pieces[down ? last_piece - n : first_piece + n];
    run(std::max(p.first, lo), std::min(p.first + p.n - 1, hi));
  }
}

template void shift_faces_in_place<float>(const Grid&, float*, int, const Box&, int, int, int, int, int);
template void shift_faces_in_place<double>(const Grid&, double*, int, const Box&, int, int, int, int, int);
template void shift_box_in_place<float>(const Grid&, float*, int, const Box&, int, int, int);
template void shift_box_in_place<double>(const Grid&, double*, int, const Box&, int, int, int);
template void shift_rows_in_place<float>(const Grid&, float*, const Offset&, const Box&, const Box&, int, int);
template void shift_rows_in_place<double>(const Grid&, double*, const Offset&, const Box&, const Box&, int, int);

}  // namespace checkmpi
