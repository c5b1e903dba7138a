#include "strategies/step8_overlap.hpp"

#include "strategies/strategies.hpp"

namespace checkmpi {

template <class Real>
std::unique_ptr<Strategy<Real>> make_overlap() {
  return std::make_unique<Overlap<Real>>();
}
template std::unique_ptr<Strategy<float>> make_overlap<float>();
template std::unique_ptr<Strategy<double>> make_overlap<double>();

}  // namespace checkmpi
