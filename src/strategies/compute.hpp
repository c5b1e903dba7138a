// The compute part of a step: moving every field, in place (host),
// in one pass into a second buffer, or in CheckMPI's two passes; whole, or
// split around the messages in flight (interior or masked overlap).
#pragma once

#include <array>

#include "strategies/strategy.hpp"

namespace checkmpi {

// Interior cells with at least `border` interior cells between them and each
// face: [1+border, N-border] along every direction (empty when 2*border >= N).
Box inner_box(const Grid& g, long long border);

// Per field, the interior cells whose upstream cell is interior too
// (CheckMPI's forward: field1 i >= 2, field2 j >= 2, field3 k >= 2; reverse:
// <= N-1), which need no halo; the rest is the layers next to the halo.
Boxes halo_free_boxes(const Grid& g, const Motion& m);

// Masked overlap: per field, the inner box less any cell that reads a halo
// (a border narrower than the halo width). In place, extended to the
// interior's downstream end along the field's velocity (those cells read only
// interior cells, and must be shifted before the inner box is, which reads
// the first of them).
Boxes masked_boxes(const Grid& g, long long border, const Motion& m, bool in_place);

template <class Real>
class ComputeStep {
 public:
  ComputeStep() = default;
  ~ComputeStep();
  ComputeStep(const ComputeStep&) = delete;
  ComputeStep& operator=(const ComputeStep&) = delete;

  // Allocates the second buffer (one-pass) or the temporaries (two-pass).
  void setup(HaloState<Real>& s, Compute mode, Overlap overlap);
  // No overlap: the whole step's compute.
  void whole(HaloState<Real>& s);
  // Overlap: the part that runs while messages are in flight, and the rest
  // once the halos are in (in one sweep around what was done: shift_shell).
  // With `async` the in-flight part is left running on the compute queue
  // and the rest waits for every queue first.
  void in_flight(HaloState<Real>& s, bool async);
  void after(HaloState<Real>& s);
  // On a backend that runs its kernels in the caller's thread, the
  // in-flight part can go in slices instead of in_flight(): a few planes of
  // one field's in-flight box each, field after field, while the caller's
  // test says the messages are still in flight. What no slice did is left to
  // after(), whose sweep runs whole rows and planes where the cut left them
  // (rows need not stop at the border, nor planes at the halo plane).
  // next_slice() returns false when every in-flight box is done.
  bool sliced(const HaloState<Real>& s) const;
  void begin_slices();
  bool next_slice(HaloState<Real>& s);
  // Where received halos go: the fields the compute reads next.
  const FieldPtrs<Real>& unpack_target(HaloState<Real>& s) const;
  // The fields move into `current` (values copied) and the second buffer is
  // `next`, empty in place (see Engine::adopt_fields).
  void adopt(HaloState<Real>& s, const FieldPtrs<Real>& current, const FieldPtrs<Real>& next);
  int parity() const { return parity_; }
  const FieldPtrs<Real>& other() const { return other_; }

 private:
  void shift_into_other(HaloState<Real>& s, const Boxes& boxes);
  void swap(HaloState<Real>& s);

  Compute mode_ = Compute::OnePass;
  Overlap overlap_ = Overlap::None;
  Backend<Real>* backend_ = nullptr;
  FieldPtrs<Real> other_;  // one-pass: the second buffer; two-pass: the temporaries
  FieldPtrs<Real> owned_;
  Boxes all_;     // per field, the interior
  Boxes ahead_;   // per field, what is shifted in flight
  Boxes good_;    // what that leaves right: ahead_ but where a halo-free box was widened
  Boxes sliced_;  // the planes of ahead_ shifted so far this step, in slices
  Boxes done_;    // what is right so far this step
  Boxes slice_;   // the one being shifted
  std::vector<int> slice_order_;  // the fields in the order slices take them
  int slice_field_ = 0, slice_planes_ = 1;  // slice_field_: a place in slice_order_
  int parity_ = 0;
};

}  // namespace checkmpi
