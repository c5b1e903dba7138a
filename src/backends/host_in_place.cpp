#include "backends/host_in_place.hpp"

#include <algorithm>
#include <cstring>

namespace checkmpi {

namespace {

// a[c] = a[c + s] for c in [first, first + n), each source read before it is
// overwritten: memmove, or for a run too short to be worth a call a loop
// that starts at the end the sources lie beyond.
template <class Real>
inline void move(Real* a, std::size_t first, std::size_t n, long s) {
  Real* d = a + first;
  const Real* from = d + s;
  if (n >= 16) {
    std::memmove(d, from, n * sizeof(Real));
  } else if (s < 0) {
    for (std::size_t c = n; c-- > 0;) d[c] = from[c];
  } else {
    for (std::size_t c = 0; c < n; ++c) d[c] = from[c];
  }
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
void shift_box_in_place(const Grid& g, Real* a, int axis, const Box& b, bool reverse, int t, int T) {
  if (b.empty()) return;
  const long s = (reverse ? 1L : -1L) * long(g.stride()[std::size_t(axis)]);  // where a cell's value comes from
  const std::size_t width = extent(b, 0), rows = extent(b, 1), planes = extent(b, 2);
  const bool wide = b.lo[0] == 1 && b.hi[0] == g.l;  // a plane's rows are one run but for halo cells
  if (axis == 0) {
    // Rows are independent: a share of them, those of one plane joined into one run when the box is wide.
    const Range mine = share(rows * planes, t, T);
    for (std::size_t r = mine.begin; r < mine.end;) {
      const int k = b.lo[2] + int(r / rows), j = b.lo[1] + int(r % rows);
      const std::size_t end = wide ? std::min(mine.end, (r / rows + 1) * rows) : r + 1;
      const std::size_t first = g.index(b.lo[0], j, k);
      move(a, first, g.index(b.hi[0], j + int(end - r) - 1, k) - first + 1, s);
      r = end;
    }
    return;
  }
  if (axis == 1) {
    // Planes are independent; where threads outnumber them, columns of planes are too.
    const std::size_t columns = std::size_t(T) > planes ? (std::size_t(T) + planes - 1) / planes : 1;
    const Range mine = share(planes * columns, t, T);
    for (std::size_t item = mine.begin; item < mine.end; ++item) {
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
        const int j = reverse ? b.lo[1] + int(r) : b.hi[1] - int(r);
        move(a, g.index(x0, j, k), std::size_t(x1 - x0), s);
      }
    }
    return;
  }
  // Columns along z are independent: a share of the box's cross-section (one run per plane when wide),
  // walked plane by plane against the direction.
  const std::size_t base = g.index(b.lo[0], b.lo[1], 0);
  const std::size_t section = wide ? g.index(b.hi[0], b.hi[1], 0) - base + 1 : rows * width;
  const Range mine = share(section, t, T);
  for (std::size_t p = 0; p < planes && mine.begin < mine.end; ++p) {
    const int k = reverse ? b.lo[2] + int(p) : b.hi[2] - int(p);
    const std::size_t at = base + std::size_t(k) * g.stride()[2];
    if (wide) {
      move(a, at + mine.begin, mine.end - mine.begin, s);
      continue;
    }
    for (std::size_t q = mine.begin; q < mine.end;) {
      const std::size_t row = q / width, x = q % width, n = std::min(width - x, mine.end - q);
      move(a, at + row * g.stride()[1] + x, n, s);
      q += n;
    }
  }
}

template void shift_box_in_place<float>(const Grid&, float*, int, const Box&, bool, int, int);
template void shift_box_in_place<double>(const Grid&, double*, int, const Box&, bool, int, int);

}  // namespace checkmpi
