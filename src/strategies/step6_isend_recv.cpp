// step6 (isend-recv): step5's MPI_Isend + MPI_Recv in all three directions.
#include "strategies/step5_isend_recv_x.hpp"
#include "strategies/strategies.hpp"

namespace checkmpi {

template <class Real>
class IsendRecv : public IsendRecvX<Real> {
 protected:
  bool isend_recv(int) const override { return true; }
};

template <class Real>
std::unique_ptr<Strategy<Real>> make_isend_recv() {
  return std::make_unique<IsendRecv<Real>>();
}
template std::unique_ptr<Strategy<float>> make_isend_recv<float>();
template std::unique_ptr<Strategy<double>> make_isend_recv<double>();

}  // namespace checkmpi
