// step10 (overlap-masked): double-buffered fields. While the messages are in
// flight, every cell at least `border` cells from each face of the block is
// updated into the second buffer (its upstream cell is interior, so it needs
// no halo); once the halos are in, the remaining shell of border cells is
// updated; then the buffers swap. No copy-back pass: each cell is written once.
#pragma once

#include <utility>
#include <vector>

#include "strategies/kernel_plumbing.hpp"

namespace checkmpi {

// Interior cells with at least `border` interior cells between them and each
// face: [1+border, N-border] along every direction (empty when 2*border >= N).
inline Box inner_box(const Grid& g, long long border) {
  Box b;
  const auto n = g.interior();
  for (int d = 0; d < 3; ++d) {
    const long long lo = 1 + border, hi = n[d] - border;
    b.lo[d] = int(std::min<long long>(lo, n[d] + 1));
    b.hi[d] = int(std::max<long long>(hi, 0));
  }
  return b;
}

// The interior minus `inner`, as at most six disjoint boxes: slabs below and
// above in z, then in y within inner's z range, then in x within both.
inline std::vector<Box> shell_boxes(const Grid& g, const Box& inner) {
  const Box all = interior_box(g);
  if (inner.empty()) return {all};
  std::vector<Box> out;
  Box core = all;  // narrowed to inner one direction at a time
  for (int d = 2; d >= 0; --d) {
    Box below = core, above = core;
    below.hi[d] = inner.lo[d] - 1;
    above.lo[d] = inner.hi[d] + 1;
    for (const Box& b : {below, above})
      if (!b.empty()) out.push_back(b);
    core.lo[d] = inner.lo[d];
    core.hi[d] = inner.hi[d];
  }
  return out;
}

template <class Real>
class OverlapMasked : public AllAtOnce<Real> {
 public:
  void setup(HaloState<Real>& s) override {
    AllAtOnce<Real>::setup(s);
    inner_ = inner_box(s.grid, s.config.border);
    shell_ = shell_boxes(s.grid, inner_);
  }

  void step(HaloState<Real>& s) override {
    FieldPtrs<Real>& next = this->temp_;
    {
      Timed t(s.timers.comm);
      this->start(s, /*async=*/false);
    }
    {
      Timed t(s.timers.compute);
      s.backend.shift_box(s.grid, next, as_const(s.f), inner_, s.config.reverse, kComputeQueue);
    }
    {
      Timed t(s.timers.comm);
      this->finish(s, s.f, /*as_they_arrive=*/false);
    }
    Timed t(s.timers.compute);
    for (const Box& b : shell_) s.backend.shift_box(s.grid, next, as_const(s.f), b, s.config.reverse, kComputeQueue);
    s.backend.wait(kComputeQueue);
    std::swap(s.f, next);
  }

 private:
  Box inner_;
  std::vector<Box> shell_;
};

}  // namespace checkmpi
