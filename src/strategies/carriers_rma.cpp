// One-sided carriers: every rank's receive messages are a window,
// and each packed message is an MPI_Put into the matching message of the
// neighbour (every rank lays its messages out the same way, so a message's
// offset is the same at the origin and the target). The epochs are either
// collective fences or post/start/complete/wait with the neighbours only.
#include <algorithm>
#include <vector>

#include "strategies/transport.hpp"

namespace checkmpi {

namespace {

template <class Real>
class RmaCarrier final : public Carrier<Real> {
 public:
  explicit RmaCarrier(bool fence) : fence_(fence) {}
  ~RmaCarrier() override {
    if (window_ != MPI_WIN_NULL) MPI_Win_free(&window_);
    for (MPI_Group* g : {&origins_, &targets_})
      if (*g != MPI_GROUP_NULL) MPI_Group_free(g);
  }

  Real* receive_memory(Engine<Real>& e, std::size_t elements) override {
    Real* base = nullptr;
    MPI_Win_allocate(MPI_Aint(elements * sizeof(Real)), int(sizeof(Real)), MPI_INFO_NULL, e.state().dec.comm, &base,
                     &window_);
    return base;
  }

  void setup(Engine<Real>& e) override {
    const Decomposition& dec = e.state().dec;
    if (fence_) return;
    // Post/start/complete/wait: the ranks that put into this one, and those it puts into.
    std::vector<int> from, to;
    for (const Channel& c : e.channels()) {
      if (!e.through_mpi(c)) continue;
      from.push_back(recv_peer(dec, c));
      to.push_back(send_peer(dec, c));
    }
    MPI_Group all;
    MPI_Comm_group(dec.comm, &all);
    origins_ = group_of(all, from);
    targets_ = group_of(all, to);
    MPI_Group_free(&all);
    remote_ = !from.empty();
  }

  // The epoch opens, and every message is put.
  void post_sends(Engine<Real>& e, Channels set) override {
    if (fence_) {
      MPI_Win_fence(MPI_MODE_NOPRECEDE, window_);
    } else if (remote_) {
      MPI_Win_post(origins_, 0, window_);
      MPI_Win_start(targets_, 0, window_);
    }
    const Decomposition& dec = e.state().dec;
    for (const Channel& c : set) {
      if (!e.through_mpi(c)) continue;
      const auto w = e.send_wire(c);
      MPI_Put(w.ptr, w.count, w.type, send_peer(dec, c), MPI_Aint(e.offset(c)), w.count, w.type,
              window_);
    }
  }

  // The epoch closes: the puts into this rank are in its window.
  void wait(Engine<Real>& e, Channels set) override {
    if (fence_) {
      MPI_Win_fence(MPI_MODE_NOSUCCEED, window_);
    } else if (remote_) {
      MPI_Win_complete(window_);
      MPI_Win_wait(window_);
    }
    e.arrived(set);
  }

 private:
  static MPI_Group group_of(MPI_Group all, std::vector<int> ranks) {
    std::sort(ranks.begin(), ranks.end());
    ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
    MPI_Group g;
    MPI_Group_incl(all, int(ranks.size()), ranks.data(), &g);
    return g;
  }

  bool fence_;
  bool remote_ = false;
  MPI_Win window_ = MPI_WIN_NULL;
  MPI_Group origins_ = MPI_GROUP_NULL, targets_ = MPI_GROUP_NULL;
};

}  // namespace

template <class Real>
std::unique_ptr<Carrier<Real>> make_rma_carrier(Transport kind) {
  return std::make_unique<RmaCarrier<Real>>(kind == Transport::RmaFence);
}
template std::unique_ptr<Carrier<float>> make_rma_carrier<float>(Transport);
template std::unique_ptr<Carrier<double>> make_rma_carrier<double>(Transport);

}  // namespace checkmpi
