#include "strategies/step8_overlap.hpp"

#include "strategies/strategies.hpp"

namespace checkmpi {

CHECKMPI_DEFINE_FACTORY(overlap, Overlap)

}  // namespace checkmpi
