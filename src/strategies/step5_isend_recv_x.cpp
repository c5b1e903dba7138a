#include "strategies/step5_isend_recv_x.hpp"

#include "strategies/strategies.hpp"

namespace checkmpi {

CHECKMPI_DEFINE_FACTORY(isend_recv_x, IsendRecvX)

}  // namespace checkmpi
