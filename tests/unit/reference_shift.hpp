// CheckMPI's CPU loop, literally: the reference the kernels are checked
// against. Forward, field1(i,j,k) = field1(i-1,j,k), field2 from j-1, field3
// from k-1, loops descending so every source is read before it is
// overwritten; reverse takes i+1 (etc.), loops ascending. Any other motion
// the same way: each cell from c - v, the interior walked against v in
// memory order.
#pragma once

#include <vector>

#include "grid/decomposition.hpp"
#include "grid/stencil.hpp"

namespace checkmpi {

// CheckMPI's three fields' motion on a grid of halo width 1.
inline Motion checkmpi_motion(bool reverse) { return Motion(Stencil{}, reverse); }

template <class Real>
void reference_shift(const Grid& g, const std::vector<Real*>& f, const Motion& m) {
  for (std::size_t field = 0; field < f.size(); ++field) {
    const long d = g.offset(m.v[field]);
    const bool down = d < 0;  // sources below: walk down
    for (int kk = 1; kk <= g.n; ++kk)
      for (int jj = 1; jj <= g.m; ++jj)
        for (int ii = 1; ii <= g.l; ++ii) {
          const int i = down ? g.l + 1 - ii : ii, j = down ? g.m + 1 - jj : jj, k = down ? g.n + 1 - kk : kk;
          const std::size_t c = g.index(i, j, k);
          f[field][c] = f[field][long(c) + d];
        }
  }
}

template <class Real>
void reference_shift(const Grid& g, const std::vector<Real*>& f, bool reverse) {
  reference_shift(g, f, checkmpi_motion(reverse));
}

}  // namespace checkmpi
