#include "strategies/step4_kernel_pack_aware.hpp"

#include "strategies/strategies.hpp"

namespace checkmpi {

CHECKMPI_DEFINE_FACTORY(kernel_pack_aware, KernelPackAware)

}  // namespace checkmpi
