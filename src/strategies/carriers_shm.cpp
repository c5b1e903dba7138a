// Shared memory: the fields of the ranks of a node live in one
// MPI_Win_allocate_shared window (with the one-pass compute, both of its
// buffers), and a rank copies each halo straight from the neighbour's plane
// when the neighbour is on its node (itself included); neighbours on other
// nodes get kernel-packed messages (MPI_Irecv/MPI_Isend).
//
// A node barrier at step t's first post (after this rank's packing, which
// reads only its own fields): every rank of the node has finished step t-1,
// so each neighbour's fields are complete. One-pass, that is
// enough: nobody is still reading the buffer it is about to write (the one
// that was current at t-1), and every rank swaps buffers every step, so the
// neighbour's current buffer is the one with this rank's parity. In place, a
// rank shifts the very fields its neighbours read, so a second barrier,
// once every rank has read its halos, comes before the compute.
#include <vector>

#include "strategies/transport.hpp"

namespace checkmpi {

namespace {

template <class Real>
class ShmCarrier final : public Carrier<Real> {
 public:
  ~ShmCarrier() override {
    if (window_ != MPI_WIN_NULL) {
      MPI_Win_unlock_all(window_);
      MPI_Win_free(&window_);
    }
    if (node_ != MPI_COMM_NULL) MPI_Comm_free(&node_);
  }

  void setup(Engine<Real>& e) override {
    HaloState<Real>& s = e.state();
    const std::size_t cells = s.grid.cells();
    MPI_Comm_split_type(s.dec.comm, MPI_COMM_TYPE_SHARED, s.dec.rank, MPI_INFO_NULL, &node_);
    Real* base = nullptr;
    in_place_ = e.parts().compute == Compute::InPlace;
    const std::size_t copies = in_place_ ? 1 : 2;
    MPI_Win_allocate_shared(MPI_Aint(copies * 3 * cells * sizeof(Real)), int(sizeof(Real)), MPI_INFO_NULL, node_,
                            &base, &window_);
    MPI_Win_lock_all(MPI_MODE_NOCHECK, window_);
    const FieldPtrs<Real> next = in_place_ ? FieldPtrs<Real>{}
                                           : FieldPtrs<Real>{base + 3 * cells, base + 4 * cells, base + 5 * cells};
    e.adopt_fields({base, base + cells, base + 2 * cells}, next);

    // Where each halo comes from: the neighbour's window on this node (itself
    // included, even under --self-copy), or a message.
    MPI_Group world, node;
    MPI_Comm_group(s.dec.comm, &world);
    MPI_Comm_group(node_, &node);
    source_.assign(e.channels().size(), nullptr);
    for (const Channel& c : e.channels()) {
      int peer = recv_peer(s.dec, c.dir, c.sign), node_rank = MPI_UNDEFINED;
      MPI_Group_translate_ranks(world, 1, &peer, node, &node_rank);
      if (node_rank == MPI_UNDEFINED) continue;
      MPI_Aint size = 0;
      int unit = 0;
      MPI_Win_shared_query(window_, node_rank, &size, &unit, &source_[std::size_t(c.index)]);
      e.share(c);
    }
    MPI_Group_free(&world);
    MPI_Group_free(&node);
    requests_.resize(e.channels().size());
  }

  // The step's first post (x's: all-at-once posts direction by direction)
  // starts with the node barrier; then the halos of neighbours on the node
  // are read, the others' messages posted.
  void post_recvs(Engine<Real>& e, Channels set) override {
    if (set.index() == 0) node_barrier();
    HaloState<Real>& s = e.state();
    for (const Channel& c : set) {
      if (e.route(c) == Route::Shared) {  // the neighbour's current buffer, plane by plane into the halo
        Real* theirs = static_cast<Real*>(source_[std::size_t(c.index)]) + std::size_t(e.parity()) * 3 * s.grid.cells();
        const FieldPtrs<const Real> from{theirs, theirs + s.grid.cells(), theirs + 2 * s.grid.cells()};
        s.backend.copy_plane(s.grid, s.f, plane(s.grid, c.dir, recv_index(s.grid, c.dir, c.sign)), from,
                             plane(s.grid, c.dir, send_index(s.grid, c.dir, c.sign)), direction_queue(c.dir));
        s.backend.wait(direction_queue(c.dir));
      } else if (e.through_mpi(c)) {
        const auto w = e.recv_wire(c);
        MPI_Irecv(w.ptr, w.count, w.type, recv_peer(s.dec, c.dir, c.sign), c.tag(), s.dec.comm,
                  requests_.recv(c.index));
      }
    }
  }

  void post_sends(Engine<Real>& e, Channels set) override {
    const Decomposition& dec = e.state().dec;
    for (const Channel& c : set) {
      if (!e.through_mpi(c)) continue;
      const auto w = e.send_wire(c);
      MPI_Isend(w.ptr, w.count, w.type, send_peer(dec, c.dir, c.sign), c.tag(), dec.comm, requests_.send(c.index));
    }
  }

  void wait(Engine<Real>& e, Channels set) override {
    requests_.complete(e, set);
    if (in_place_) node_barrier();  // every neighbour's faces read before anyone shifts them
  }

 private:
  void node_barrier() {
    MPI_Win_sync(window_);
    MPI_Barrier(node_);
    MPI_Win_sync(window_);
  }

  bool in_place_ = false;
  MPI_Comm node_ = MPI_COMM_NULL;
  MPI_Win window_ = MPI_WIN_NULL;
  std::vector<void*> source_;  // by channel: the neighbour's window on this node, or null
  RequestSet requests_;
};

}  // namespace

template <class Real>
std::unique_ptr<Carrier<Real>> make_shm_carrier() {
  return std::make_unique<ShmCarrier<Real>>();
}
template std::unique_ptr<Carrier<float>> make_shm_carrier<float>();
template std::unique_ptr<Carrier<double>> make_shm_carrier<double>();

}  // namespace checkmpi
