#include "strategies/step3_kernel_pack.hpp"

#include "strategies/strategies.hpp"

namespace checkmpi {

CHECKMPI_DEFINE_FACTORY(kernel_pack, KernelPack)

}  // namespace checkmpi
