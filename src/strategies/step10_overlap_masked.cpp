#include "strategies/step10_overlap_masked.hpp"

#include "strategies/strategies.hpp"

namespace checkmpi {

template <class Real>
std::unique_ptr<Strategy<Real>> make_overlap_masked() {
  return std::make_unique<OverlapMasked<Real>>();
}
template std::unique_ptr<Strategy<float>> make_overlap_masked<float>();
template std::unique_ptr<Strategy<double>> make_overlap_masked<double>();

}  // namespace checkmpi
