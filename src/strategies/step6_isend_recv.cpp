// step6 (isend-recv): step5's MPI_Isend + MPI_Recv in all three directions.
#include "strategies/step5_isend_recv_x.hpp"
#include "strategies/strategies.hpp"

namespace checkmpi {

template <class Real>
class IsendRecv : public IsendRecvX<Real> {
 protected:
  bool isend_recv(int) const override { return true; }
};

CHECKMPI_DEFINE_FACTORY(isend_recv, IsendRecv)

}  // namespace checkmpi
