// step8 (overlap): step7's exchange with the compute split around it: while
// the messages are in flight the interior of the fields is copied into the
// temporaries; the received halos are unpacked straight into the
// temporaries; then field(i) = temp(i-1).
#pragma once

#include "strategies/kernel_plumbing.hpp"

namespace checkmpi {

template <class Real>
class Overlap : public AllAtOnce<Real> {
 public:
  void step(HaloState<Real>& s) override {
    {
      Timed t(s.timers.comm);
      this->start(s, async());
    }
    {
      Timed t(s.timers.compute);
      s.backend.copy_box(s.grid, this->temp_, as_const(s.f), interior_box(s.grid), kComputeQueue);
      if (!async()) s.backend.wait(kComputeQueue);
    }
    {
      Timed t(s.timers.comm);
      this->finish(s, this->temp_, async());
    }
    Timed t(s.timers.compute);
    s.backend.wait_all();  // step9: the interior copy and the unpacks
    s.backend.shift_box(s.grid, s.f, as_const(this->temp_), interior_box(s.grid), s.config.reverse,
                        kComputeQueue);
    s.backend.wait(kComputeQueue);
  }

 protected:
  virtual bool async() const { return false; }
};

}  // namespace checkmpi
