// CheckMPI's CPU loop, literally: the reference the kernels are checked
// against. Forward, field1(i,j,k) = field1(i-1,j,k), field2 from j-1, field3
// from k-1, loops descending so every source is read before it is
// overwritten; reverse takes i+1 (etc.), loops ascending.
#pragma once

#include <array>

#include "grid/decomposition.hpp"

namespace checkmpi {

template <class Real>
void reference_shift(const Grid& g, const std::array<Real*, 3>& f, bool reverse) {
  const auto st = g.stride();
  const long s = reverse ? 1 : -1;
  for (int kk = 1; kk <= g.n; ++kk)
    for (int jj = 1; jj <= g.m; ++jj)
      for (int ii = 1; ii <= g.l; ++ii) {
        const int i = reverse ? ii : g.l + 1 - ii, j = reverse ? jj : g.m + 1 - jj, k = reverse ? kk : g.n + 1 - kk;
        const std::size_t c = g.index(i, j, k);
        for (int d = 0; d < 3; ++d) f[d][c] = f[d][long(c) + s * long(st[d])];
      }
}

}  // namespace checkmpi
