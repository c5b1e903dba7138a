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

template <class Real>
std::unique_ptr<Strategy<Real>> make_isend_irecv() {
  return std::make_unique<IsendIrecv<Real>>();
}
template std::unique_ptr<Strategy<float>> make_isend_irecv<float>();
template std::unique_ptr<Strategy<double>> make_isend_irecv<double>();

}  // namespace checkmpi
