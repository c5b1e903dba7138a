#include "strategies/transport.hpp"

namespace checkmpi {

template <class Real>
void Carrier<Real>::synchronise(Engine<Real>& e) {
  MPI_Barrier(e.state().dec.comm);
}

template <class Real>
std::unique_ptr<Carrier<Real>> make_carrier(Transport kind) {
  switch (kind) {
    case Transport::NeighborAlltoallv:
    case Transport::NeighborAlltoallw:
    case Transport::INeighborAlltoallv:
      return make_collective_carrier<Real>(kind);
    case Transport::RmaFence:
    case Transport::RmaPscw:
      return make_rma_carrier<Real>(kind);
    case Transport::ShmWindow:
      return make_shm_carrier<Real>();
    case Transport::Partitioned:
      return make_partitioned_carrier<Real>();
    default:
      return make_point_to_point_carrier<Real>(kind);
  }
}

template class Carrier<float>;
template class Carrier<double>;
template std::unique_ptr<Carrier<float>> make_carrier<float>(Transport);
template std::unique_ptr<Carrier<double>> make_carrier<double>(Transport);

}  // namespace checkmpi
