#include "strategies/step3_kernel_pack.hpp"

#include "strategies/strategies.hpp"

namespace checkmpi {

template <class Real>
std::unique_ptr<Strategy<Real>> make_kernel_pack() {
  return std::make_unique<KernelPack<Real>>();
}
template std::unique_ptr<Strategy<float>> make_kernel_pack<float>();
template std::unique_ptr<Strategy<double>> make_kernel_pack<double>();

}  // namespace checkmpi
