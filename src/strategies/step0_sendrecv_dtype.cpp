#include "strategies/step0_sendrecv_dtype.hpp"

#include "strategies/strategies.hpp"

namespace checkmpi {

CHECKMPI_DEFINE_FACTORY(sendrecv_dtype, SendrecvDatatype)

}  // namespace checkmpi
