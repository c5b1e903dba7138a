#include "strategies/transport.hpp"

namespace checkmpi {

RequestSet::~RequestSet() {
  for (auto* list : {&recvs_, &sends_})
    for (MPI_Request& r : *list)
      if (r != MPI_REQUEST_NULL) MPI_Request_free(&r);
}

void RequestSet::resize(std::size_t channels) {
  recvs_.assign(channels, MPI_REQUEST_NULL);
  sends_.assign(channels, MPI_REQUEST_NULL);
}

// A persistent request exists for every channel through MPI; --self-copy
// and shared reads are per direction and sign, so a set's are contiguous
// runs, started run by run.
namespace {
void start_all(std::vector<MPI_Request>& requests, Channels set) {
  int i = set.index();
  const int end = i + set.size();
  while (i < end) {
    int n = 0;
    while (i + n < end && requests[std::size_t(i + n)] != MPI_REQUEST_NULL) ++n;
    if (n) MPI_Startall(n, &requests[std::size_t(i)]);
    i += n + (n == 0);
  }
}
}  // namespace

void RequestSet::start_recvs(Channels set) { start_all(recvs_, set); }
void RequestSet::start_sends(Channels set) { start_all(sends_, set); }

template <class Real>
void RequestSet::complete(Engine<Real>& e, Channels set) {
  MPI_Request* recvs = recv(set.index());
  if (e.parts().completion == Completion::Waitall) {
    MPI_Waitall(set.size(), recvs, MPI_STATUSES_IGNORE);
    e.arrived(set);
  } else {
    for (;;) {
      int i = MPI_UNDEFINED;
      MPI_Waitany(set.size(), recvs, &i, MPI_STATUS_IGNORE);
      if (i == MPI_UNDEFINED) break;
      e.arrived(*(set.first + i));
    }
  }
  MPI_Waitall(set.size(), send(set.index()), MPI_STATUSES_IGNORE);
}

bool RequestSet::all_received() const {
  for (MPI_Request r : recvs_) {
    int flag = 1;
    MPI_Request_get_status(r, &flag, MPI_STATUS_IGNORE);
    if (!flag) return false;
  }
  return true;
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

template void RequestSet::complete(Engine<float>&, Channels);
template void RequestSet::complete(Engine<double>&, Channels);
template std::unique_ptr<Carrier<float>> make_carrier<float>(Transport);
template std::unique_ptr<Carrier<double>> make_carrier<double>(Transport);

}  // namespace checkmpi
