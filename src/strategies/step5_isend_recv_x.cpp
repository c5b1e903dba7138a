#include "strategies/step5_isend_recv_x.hpp"

#include "strategies/strategies.hpp"

namespace checkmpi {

template <class Real>
std::unique_ptr<Strategy<Real>> make_isend_recv_x() {
  return std::make_unique<IsendRecvX<Real>>();
}
template std::unique_ptr<Strategy<float>> make_isend_recv_x<float>();
template std::unique_ptr<Strategy<double>> make_isend_recv_x<double>();

}  // namespace checkmpi
