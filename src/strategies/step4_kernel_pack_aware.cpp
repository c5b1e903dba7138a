#include "strategies/step4_kernel_pack_aware.hpp"

#include "strategies/strategies.hpp"

namespace checkmpi {

template <class Real>
std::unique_ptr<Strategy<Real>> make_kernel_pack_aware() {
  return std::make_unique<KernelPackAware<Real>>();
}
template std::unique_ptr<Strategy<float>> make_kernel_pack_aware<float>();
template std::unique_ptr<Strategy<double>> make_kernel_pack_aware<double>();

}  // namespace checkmpi
