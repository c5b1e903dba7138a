#include "strategies/compute.hpp"

#include <algorithm>
#include <numeric>
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

Boxes halo_free_boxes(const Grid& g, const Motion& m) {
  Boxes out;
  for (const Offset& v : m.v) {
    Box b = interior_box(g);
    for (std::size_t a = 0; a < 3; ++a) {
      if (v[a] > 0) b.lo[a] += v[a];
      if (v[a] < 0) b.hi[a] += v[a];
    }
    out.push_back(b);
  }
  return out;
}

Boxes masked_boxes(const Grid& g, long long border, const Motion& m, bool in_place) {
  const Boxes free = halo_free_boxes(g, m);
  Boxes out;
  for (std::size_t f = 0; f < m.v.size(); ++f) {
    Box b = inner_box(g, border);
    for (std::size_t a = 0; a < 3; ++a) {
      b.lo[a] = std::max(b.lo[a], free[f].lo[a]);
      b.hi[a] = std::min(b.hi[a], free[f].hi[a]);
    }
    if (in_place && !b.empty())
      for (std::size_t a = 0; a < 3; ++a) {
        if (m.v[f][a] < 0) b.lo[a] = 1;
        if (m.v[f][a] > 0) b.hi[a] = g.interior()[a];
      }
    out.push_back(b);
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
  const int fields = s.motion.fields();
  if (mode != Compute::InPlace) {
    owned_.assign(std::size_t(fields), nullptr);
    for (Real*& p : owned_) p = s.backend.allocate(s.grid.cells());
    other_ = owned_;
  }
  all_.assign(std::size_t(fields), interior_box(s.grid));
  if (overlap == Overlap::Interior) ahead_ = halo_free_boxes(s.grid, s.motion);
  else ahead_ = masked_boxes(s.grid, s.options.border, s.motion, mode == Compute::InPlace);
  good_ = ahead_;
  if (overlap == Overlap::Interior && mode == Compute::InPlace) {
    // Rows along x whole, one run per plane rather than one per row: the cells next to the halo take stale
    // halo values (after their old values were read), and after() shifts those layers again from the halo
    // received.
    for (int f = 0; f < fields; ++f)
      if (s.motion.axis(f) == 0) ahead_[std::size_t(f)] = interior_box(s.grid);
  }
  done_ = good_;
  sliced_.assign(std::size_t(fields), Box{});
  // Slices of about 512 KiB of one field (tens of microseconds; a test of
  // the messages costs a fraction of one). 128 KiB and 2 MiB measured the
  // same on one rank's thread; fewer slices are fewer OpenMP fork-joins.
  const auto plane_bytes = s.grid.extent()[0] * s.grid.extent()[1] * sizeof(Real);
  slice_planes_ = int(std::max<std::size_t>(1, (std::size_t(512) << 10) / plane_bytes));
  // Fields moving along x last: a field cut short in its slices leaves after() the upstream face of every row
  // it did, one cell and so one cache line per row (about 0.1 ms a step at 128^3 per field), where a field
  // moving in y leaves a row per plane and one moving in z a plane. Messages that arrive within the other
  // fields' slices leave an x-moving field whole to after().
  slice_order_.resize(std::size_t(fields));
  std::iota(slice_order_.begin(), slice_order_.end(), 0);
  std::stable_partition(slice_order_.begin(), slice_order_.end(), [&](int f) { return s.motion.axis(f) != 0; });
}

template <class Real>
void ComputeStep<Real>::whole(HaloState<Real>& s) {
  const Grid& g = s.grid;
  switch (mode_) {
    case Compute::InPlace:
      s.backend.shift_in_place(g, s.f, all_, s.motion, kComputeQueue);
      s.backend.wait(kComputeQueue);
      return;
    case Compute::TwoPass:  // CheckMPI's FAST variant: copy everything, then shift back
      s.backend.copy_box(g, other_, s.f, whole_box(g), kComputeQueue);
      s.backend.shift(g, s.f, other_, all_, s.motion, kComputeQueue);
      s.backend.wait(kComputeQueue);
      return;
    default:
      shift_into_other(s, all_);
      swap(s);
  }
}

template <class Real>
void ComputeStep<Real>::in_flight(HaloState<Real>& s, bool async) {
  if (mode_ == Compute::TwoPass)  // the interior into the temporaries; halos are unpacked there
    s.backend.copy_box(s.grid, other_, s.f, interior_box(s.grid), kComputeQueue);
  else if (mode_ == Compute::InPlace)
    s.backend.shift_in_place(s.grid, s.f, ahead_, s.motion, kComputeQueue);
  else
    s.backend.shift(s.grid, other_, s.f, ahead_, s.motion, kComputeQueue);
  done_ = good_;
  if (!async) s.backend.wait(kComputeQueue);
}

template <class Real>
bool ComputeStep<Real>::sliced(const HaloState<Real>& s) const {
  return overlap_ != Overlap::None && mode_ != Compute::TwoPass && s.backend.kind() == BackendKind::Host;
}

template <class Real>
void ComputeStep<Real>::begin_slices() {
  for (Box& b : done_) b = Box{};  // empty boxes
  for (Box& b : sliced_) b = Box{};
  slice_field_ = 0;
}

template <class Real>
bool ComputeStep<Real>::next_slice(HaloState<Real>& s) {
  const int fields = int(slice_order_.size());
  const auto skip_empty = [&] {
    while (slice_field_ < fields && ahead_[std::size_t(slice_order_[std::size_t(slice_field_)])].empty()) ++slice_field_;
  };
  skip_empty();
  if (slice_field_ == fields) return false;
  const std::size_t f = std::size_t(slice_order_[std::size_t(slice_field_)]);
  const Box& ahead = ahead_[f];
  Box& done = sliced_[f];
  // Planes in z, from the bottom; in place, a field moving up in z from the top, its downstream end (what is
  // left for after() must lie upstream of what was done).
  const bool down = mode_ == Compute::InPlace && s.motion.v[f][2] > 0;
  Boxes& slice = slice_;
  slice.assign(ahead_.size(), Box{});  // empty but the field's
  Box& b = slice[f] = ahead;
  if (down) {
    b.hi[2] = done.empty() ? ahead.hi[2] : done.lo[2] - 1;
    b.lo[2] = std::max(ahead.lo[2], b.hi[2] - slice_planes_ + 1);
  } else {
    b.lo[2] = done.empty() ? ahead.lo[2] : done.hi[2] + 1;
    b.hi[2] = std::min(ahead.hi[2], b.lo[2] + slice_planes_ - 1);
  }
  if (mode_ == Compute::InPlace) s.backend.shift_in_place(s.grid, s.f, slice, s.motion, kComputeQueue);
  else s.backend.shift(s.grid, other_, s.f, slice, s.motion, kComputeQueue);
  if (done.empty()) done = b;
  done.lo[2] = std::min(done.lo[2], b.lo[2]);
  done.hi[2] = std::max(done.hi[2], b.hi[2]);
  Box& good = done_[f] = good_[f];  // right so far: its planes
  good.lo[2] = std::max(good.lo[2], done.lo[2]);
  good.hi[2] = std::min(good.hi[2], done.hi[2]);
  if (done.lo[2] == ahead.lo[2] && done.hi[2] == ahead.hi[2]) ++slice_field_;
  skip_empty();
  return slice_field_ < fields;
}

template <class Real>
void ComputeStep<Real>::after(HaloState<Real>& s) {
  s.backend.wait_all();  // the in-flight part and, with async unpacking, every halo
  if (mode_ == Compute::TwoPass) {
    s.backend.shift(s.grid, s.f, other_, all_, s.motion, kComputeQueue);
    s.backend.wait(kComputeQueue);
    return;
  }
  // The halos were in before any slice ran (a rank exchanging with itself,
  // or a fast link): nothing is left to overlap, and the whole step's
  // kernel is the fastest way to move the fields.
  if (std::all_of(done_.begin(), done_.end(), [](const Box& b) { return b.empty(); })) {
    whole(s);
    return;
  }
  if (mode_ == Compute::InPlace) {
    s.backend.shift_shell_in_place(s.grid, s.f, done_, s.motion, kComputeQueue);
    s.backend.wait(kComputeQueue);
    return;
  }
  s.backend.shift_shell(s.grid, other_, s.f, done_, s.motion, kComputeQueue);
  s.backend.wait(kComputeQueue);
  swap(s);
}

template <class Real>
const FieldPtrs<Real>& ComputeStep<Real>::unpack_target(HaloState<Real>& s) const {
  return mode_ == Compute::TwoPass && overlap_ != Overlap::None ? other_ : s.f;
}

template <class Real>
void ComputeStep<Real>::adopt(HaloState<Real>& s, const FieldPtrs<Real>& current, const FieldPtrs<Real>& next) {
  for (std::size_t f = 0; f < current.size(); ++f) {
    s.backend.copy(current[f], s.f[f], s.grid.cells(), kComputeQueue);
    if (!next.empty()) s.backend.copy(next[f], s.f[f], s.grid.cells(), kComputeQueue);
  }
  s.backend.wait(kComputeQueue);
  s.f = current;
  other_ = next;
}

template <class Real>
void ComputeStep<Real>::shift_into_other(HaloState<Real>& s, const Boxes& boxes) {
  s.backend.shift(s.grid, other_, s.f, boxes, s.motion, kComputeQueue);
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
