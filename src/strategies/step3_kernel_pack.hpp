// step3 (kernel-pack): step2's message pattern with the packing done by the
// backend's kernels: per direction and sign the three fields' planes are
// packed into one buffer, sent with MPI_Sendrecv and unpacked, 6 calls per
// step; the compute is the two-pass copy-and-shift. MPI gets the buffers in
// host memory: on a GPU they are staged through pinned host buffers.
#pragma once

#include "strategies/kernel_plumbing.hpp"

namespace checkmpi {

template <class Real>
class KernelPack : public KernelStrategy<Real> {
 protected:
  bool direct_mpi() const override { return false; }
  void exchange_direction(HaloState<Real>& s, int dir) override {
    for (int sign : {Up, Down}) {
      this->pack(s, dir, sign, direction_queue(dir));
      this->sendrecv(s, dir, sign);
      this->unpack(s, dir, sign, s.f, direction_queue(dir));
    }
  }
};

}  // namespace checkmpi
