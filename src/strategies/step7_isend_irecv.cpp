// step7 (isend-irecv): all six buffers packed, all six MPI_Irecv posted, then
// all six MPI_Isend, one MPI_Waitall, all six unpacked; then the two-pass
// compute. Directions no longer run one after another, so the halo edges and
// corners are not relayed between directions, which the shift never reads.
#include "strategies/kernel_plumbing.hpp"
#include "strategies/strategies.hpp"

namespace checkmpi {

template <class Real>
class IsendIrecv : public AllAtOnce<Real> {
 protected:
  void exchange(HaloState<Real>& s) override {
    this->start(s, /*async=*/false);
    this->finish(s, s.f, /*as_they_arrive=*/false);
  }
};

CHECKMPI_DEFINE_FACTORY(isend_irecv, IsendIrecv)

}  // namespace checkmpi
