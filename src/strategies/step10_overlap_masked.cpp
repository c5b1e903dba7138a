#include "strategies/step10_overlap_masked.hpp"

#include "strategies/strategies.hpp"

namespace checkmpi {

CHECKMPI_DEFINE_FACTORY(overlap_masked, OverlapMasked)

}  // namespace checkmpi
