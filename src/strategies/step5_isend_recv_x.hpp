// step5 (isend-recv-x): step4, but in x both signs are packed, sent with
// MPI_Isend, received with a blocking MPI_Recv, unpacked, and only then are
// the sends waited for. y and z stay as in step4.
#pragma once

#include <array>

#include "strategies/step4_kernel_pack_aware.hpp"

namespace checkmpi {

template <class Real>
class IsendRecvX : public KernelPackAware<Real> {
 protected:
  virtual bool isend_recv(int dir) const { return dir == 0; }

  void exchange_direction(HaloState<Real>& s, int dir) override {
    if (!isend_recv(dir)) return KernelPackAware<Real>::exchange_direction(s, dir);
    std::array<MPI_Request, 2> sends{};
    for (int sign : {Up, Down}) this->pack(s, dir, sign, direction_queue(dir));
    for (int sign : {Up, Down}) this->post_send(s, dir, sign, &sends[sign]);
    for (int sign : {Up, Down}) this->recv(s, dir, sign);
    for (int sign : {Up, Down}) this->unpack(s, dir, sign, s.f, direction_queue(dir));
    MPI_Waitall(2, sends.data(), MPI_STATUSES_IGNORE);
  }
};

}  // namespace checkmpi
