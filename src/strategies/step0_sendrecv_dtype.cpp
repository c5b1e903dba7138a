#include "strategies/step0_sendrecv_dtype.hpp"

#include "strategies/strategies.hpp"

namespace checkmpi {

template <class Real>
std::unique_ptr<Strategy<Real>> make_sendrecv_dtype() {
  return std::make_unique<SendrecvDatatype<Real>>();
}
template std::unique_ptr<Strategy<float>> make_sendrecv_dtype<float>();
template std::unique_ptr<Strategy<double>> make_sendrecv_dtype<double>();

}  // namespace checkmpi
