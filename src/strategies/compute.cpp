#include "strategies/compute.hpp"

#include <algorithm>
#include <utility>

namespace checkmpi {

Box inner_box(const Grid& g, long long border) {
  Box b;
  const auto n = g.interior();
  for (int d = 0; d < 3; ++d) {
    const long long lo = 1 + border, hi = n[d] - border;
    b.lo[d] = int(std::min<long long>(lo, n[d] + 1));
    b.hi[d] = int(std::max<long long>(hi, 0));
  }
  return b;
}

std::array<Box, 3> halo_free_boxes(const Grid& g, bool reverse) {
  std::array<Box, 3> out;
  for (int f = 0; f < 3; ++f) {
    out[f] = interior_box(g);
    if (reverse) out[f].hi[f] -= 1;
    else out[f].lo[f] += 1;
  }
  return out;
}

std::array<Box, 3> in_place_masked_boxes(const Grid& g, long long border, bool reverse) {
  std::array<Box, 3> out;
  for (int f = 0; f < 3; ++f) {
    out[f] = inner_box(g, border);
    if (out[f].empty()) continue;
    if (reverse) out[f].lo[f] = 1;
    else out[f].hi[f] = g.interior()[f];
  }
  return out;
}

template <class Real>
ComputeStep<Real>::~ComputeStep() {
  if (backend_)
    for (Real* p : owned_)
      if (p) backend_->release(p);
}

template <class Real>
void ComputeStep<Real>::setup(HaloState<Real>& s, Compute mode, Overlap overlap) {
  mode_ = mode;
  overlap_ = overlap;
  backend_ = &s.backend;
  if (mode != Compute::InPlace) {
    for (Real*& p : owned_) p = s.backend.allocate(s.grid.cells());
    other_ = owned_;
  }
  const Box inner = inner_box(s.grid, s.options.border);
  if (overlap == Overlap::Interior) ahead_ = halo_free_boxes(s.grid, s.options.reverse);
  else if (mode == Compute::InPlace) ahead_ = in_place_masked_boxes(s.grid, s.options.border, s.options.reverse);
  else ahead_ = {inner, inner, inner};
  good_ = ahead_;
  if (overlap == Overlap::Interior && mode == Compute::InPlace) {
    // Field1's rows whole, one run per plane rather than one per row: the cell next to the halo takes a stale
    // halo value (after its old value was read), and after() shifts that plane again from the halo received.
    ahead_[0] = interior_box(s.grid);
  }
  done_ = good_;
  // Slices of about 512 KiB of one field (tens of microseconds; a test of
  // the messages costs a fraction of one). 128 KiB and 2 MiB measured the
  // same on one rank's thread; fewer slices are fewer OpenMP fork-joins.
  const auto plane_bytes = std::size_t(s.grid.l + 2) * std::size_t(s.grid.m + 2) * sizeof(Real);
  slice_planes_ = int(std::max<std::size_t>(1, (std::size_t(512) << 10) / plane_bytes));
}

template <class Real>
void ComputeStep<Real>::whole(HaloState<Real>& s) {
  const Grid& g = s.grid;
  switch (mode_) {
    case Compute::InPlace: {
      const Box all = interior_box(g);
      s.backend.shift_in_place(g, s.f, {all, all, all}, s.options.reverse, kComputeQueue);
      s.backend.wait(kComputeQueue);
      return;
    }
    case Compute::TwoPass:  // CheckMPI's FAST variant: copy everything, then shift back
      s.backend.copy_box(g, other_, as_const(s.f), whole_box(g), kComputeQueue);
      s.backend.shift(g, s.f, as_const(other_), interior_box(g), s.options.reverse, kComputeQueue);
      s.backend.wait(kComputeQueue);
      return;
    default:
      shift_into_other(s, {interior_box(g), interior_box(g), interior_box(g)});
      swap(s);
  }
}

template <class Real>
void ComputeStep<Real>::in_flight(HaloState<Real>& s, bool async) {
  if (mode_ == Compute::TwoPass)  // the interior into the temporaries; halos are unpacked there
    s.backend.copy_box(s.grid, other_, as_const(s.f), interior_box(s.grid), kComputeQueue);
  else if (mode_ == Compute::InPlace)
    s.backend.shift_in_place(s.grid, s.f, ahead_, s.options.reverse, kComputeQueue);
  else
    s.backend.shift(s.grid, other_, as_const(s.f), ahead_, s.options.reverse, kComputeQueue);
  done_ = good_;
  if (!async) s.backend.wait(kComputeQueue);
}

template <class Real>
bool ComputeStep<Real>::sliced(const HaloState<Real>& s) const {
  return overlap_ != Overlap::None && mode_ != Compute::TwoPass && s.backend.kind() == BackendKind::Host;
}

template <class Real>
void ComputeStep<Real>::begin_slices() {
  done_ = sliced_ = {};  // empty boxes
  slice_field_ = 0;
}

template <class Real>
bool ComputeStep<Real>::next_slice(HaloState<Real>& s) {
  const auto skip_empty = [&] {
    while (slice_field_ < 3 && ahead_[std::size_t(slice_field_)].empty()) ++slice_field_;
  };
  skip_empty();
  if (slice_field_ == 3) return false;
  const Box& ahead = ahead_[std::size_t(slice_field_)];
  Box& done = sliced_[std::size_t(slice_field_)];
  // Planes in z, from the bottom; field3 in place forward from the top, its downstream end (what is left for
  // after() must lie upstream of what was done).
  const bool down = mode_ == Compute::InPlace && slice_field_ == 2 && !s.options.reverse;
  std::array<Box, 3> slice{};
  Box& b = slice[std::size_t(slice_field_)] = ahead;
  if (down) {
    b.hi[2] = done.empty() ? ahead.hi[2] : done.lo[2] - 1;
    b.lo[2] = std::max(ahead.lo[2], b.hi[2] - slice_planes_ + 1);
  } else {
    b.lo[2] = done.empty() ? ahead.lo[2] : done.hi[2] + 1;
    b.hi[2] = std::min(ahead.hi[2], b.lo[2] + slice_planes_ - 1);
  }
  if (mode_ == Compute::InPlace) s.backend.shift_in_place(s.grid, s.f, slice, s.options.reverse, kComputeQueue);
  else s.backend.shift(s.grid, other_, as_const(s.f), slice, s.options.reverse, kComputeQueue);
  if (done.empty()) done = b;
  done.lo[2] = std::min(done.lo[2], b.lo[2]);
  done.hi[2] = std::max(done.hi[2], b.hi[2]);
  Box& good = done_[std::size_t(slice_field_)] = good_[std::size_t(slice_field_)];  // right so far: its planes
  good.lo[2] = std::max(good.lo[2], done.lo[2]);
  good.hi[2] = std::min(good.hi[2], done.hi[2]);
  if (done.lo[2] == ahead.lo[2] && done.hi[2] == ahead.hi[2]) ++slice_field_;
  skip_empty();
  return slice_field_ < 3;
}

template <class Real>
void ComputeStep<Real>::after(HaloState<Real>& s) {
  s.backend.wait_all();  // the in-flight part and, with async unpacking, every halo
  if (mode_ == Compute::TwoPass) {
    s.backend.shift(s.grid, s.f, as_const(other_), interior_box(s.grid), s.options.reverse, kComputeQueue);
    s.backend.wait(kComputeQueue);
    return;
  }
  if (mode_ == Compute::InPlace) {
    s.backend.shift_shell_in_place(s.grid, s.f, done_, s.options.reverse, kComputeQueue);
    s.backend.wait(kComputeQueue);
    return;
  }
  s.backend.shift_shell(s.grid, other_, as_const(s.f), done_, s.options.reverse, kComputeQueue);
  s.backend.wait(kComputeQueue);
  swap(s);
}

template <class Real>
FieldPtrs<Real> ComputeStep<Real>::unpack_target(HaloState<Real>& s) const {
  return mode_ == Compute::TwoPass && overlap_ != Overlap::None ? other_ : s.f;
}

template <class Real>
void ComputeStep<Real>::adopt(HaloState<Real>& s, FieldPtrs<Real> current, FieldPtrs<Real> next) {
  for (int f = 0; f < 3; ++f) {
    s.backend.copy(current[f], s.f[f], s.grid.cells(), kComputeQueue);
    if (next[f]) s.backend.copy(next[f], s.f[f], s.grid.cells(), kComputeQueue);
  }
  s.backend.wait(kComputeQueue);
  s.f = current;
  other_ = next;
}

template <class Real>
void ComputeStep<Real>::shift_into_other(HaloState<Real>& s, const std::array<Box, 3>& boxes) {
  s.backend.shift(s.grid, other_, as_const(s.f), boxes, s.options.reverse, kComputeQueue);
  s.backend.wait(kComputeQueue);
}

template <class Real>
void ComputeStep<Real>::swap(HaloState<Real>& s) {
  std::swap(s.f, other_);
  parity_ ^= 1;
}

template class ComputeStep<float>;
template class ComputeStep<double>;

}  // namespace checkmpi
