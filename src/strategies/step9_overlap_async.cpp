// step9 (overlap-async): step8 with nothing waited for before it must be.
// Each direction packs and unpacks on its own queue (a CUDA stream) and is
// synchronised just before its send; the interior copy runs on the compute
// queue alongside the communication; each message is unpacked as soon as it
// arrives (MPI_Waitany) while the others are still in flight.
#include "strategies/step8_overlap.hpp"
#include "strategies/strategies.hpp"

namespace checkmpi {

template <class Real>
class OverlapAsync : public Overlap<Real> {
 protected:
  bool async() const override { return true; }
};

CHECKMPI_DEFINE_FACTORY(overlap_async, OverlapAsync)

}  // namespace checkmpi
