// Shared memory: the fields of the ranks of a node live in one
// MPI_Win_allocate_shared window (with the one-pass compute, both of its
// buffers), and a rank reads each halo from the neighbour's part of the
// window when the neighbour is on its node (itself included); neighbours on
// other nodes get kernel-packed messages (MPI_Irecv/MPI_Isend).
//
// y and z faces are read straight from the neighbour's fields: they are rows
// and planes, whole cache lines. An x face has one element per line, and a
// neighbour reading it from the fields would pull one line per element into
// its core, every one of which the owner's next shift must take back: on a
// machine whose cores share no cache (sockets, a VM's scattered vCPUs) that
// made the owner's compute up to ten times slower (docs/halo.md,
// "shm-window's slow mode"). So each rank packs its two x faces into its
// part of the window, and the neighbour unpacks from there: a line per 16
// elements (single).
//
// A node barrier at step t's first post, after this rank packed its x faces
// (its own fields only): every rank of the node has finished step t-1, so
// each neighbour's fields and faces are complete. One-pass, that is enough:
// nobody is still reading the buffer it is about to write (the one that was
// current at t-1), and every rank swaps buffers every step, so the
// neighbour's current buffer is the one with this rank's parity; the packed
// faces alternate between two slots for the same reason. In place, a rank
// shifts the very fields its neighbours read, so a second barrier, once
// every rank has read its halos, comes before the compute.
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
    fields_ = std::size_t(e.fields());
    faces_at_ = (in_place_ ? 1 : 2) * fields_ * cells;  // the packed x faces follow the fields
    for (int sign = 0; sign < 2; ++sign) x_face_[sign] = e.send_plane(x_channel(e, sign));
    face_ = fields_ * x_face_[0].count();
    MPI_Win_allocate_shared(MPI_Aint((faces_at_ + 4 * face_) * sizeof(Real)), int(sizeof(Real)), MPI_INFO_NULL, node_,
                            &base, &window_);
    MPI_Win_lock_all(MPI_MODE_NOCHECK, window_);
    FieldPtrs<Real> current, next;
    for (std::size_t f = 0; f < fields_; ++f) {
      current.push_back(base + f * cells);
      if (!in_place_) next.push_back(base + (fields_ + f) * cells);
    }
    e.adopt_fields(current, next);
    faces_ = base + faces_at_;

    // Where each halo comes from: the neighbour's window on this node (itself
    // included, even under --self-copy), or a message.
    MPI_Group world, node;
    MPI_Comm_group(s.dec.comm, &world);
    MPI_Comm_group(node_, &node);
    source_.assign(e.channels().size(), nullptr);
    // A channel's receive and send are shared or not each on its own: at the
    // edge of a node one neighbour is on it and the other is not.
    for (const Channel& c : e.channels()) {
      int peers[2] = {recv_peer(s.dec, c), send_peer(s.dec, c)};
      int on_node[2] = {MPI_UNDEFINED, MPI_UNDEFINED};
      MPI_Group_translate_ranks(world, 2, peers, node, on_node);
      if (on_node[0] != MPI_UNDEFINED) {
        MPI_Aint size = 0;
        int unit = 0;
        MPI_Win_shared_query(window_, on_node[0], &size, &unit, &source_[std::size_t(c.index)]);
      }
      e.share(c, on_node[0] != MPI_UNDEFINED, on_node[1] != MPI_UNDEFINED);
      if (x_face(c)) pack_x_[c.sign] = on_node[1] != MPI_UNDEFINED;  // the rank that reads this x face is on the node
    }
    MPI_Group_free(&world);
    MPI_Group_free(&node);
    requests_.resize(e.channels().size());
  }

  // The step's first post (x's: all-at-once posts direction by direction)
  // packs this rank's x faces for the neighbours on the node and holds the
  // node barrier; then the halos of neighbours on the node are read, the
  // others' messages posted.
  void post_recvs(Engine<Real>& e, Channels set) override {
    HaloState<Real>& s = e.state();
    const Grid& g = s.grid;
    if (set.index() == 0) {
      slot_ ^= 1;
      for (int sign = 0; sign < 2; ++sign) {
        if (!pack_x_[sign]) continue;
        Timed timed(s.timers.pack, &s.timers.pack_dir[0]);
        s.backend.pack(g, s.f, x_face_[sign], face(faces_, sign), direction_queue(0), FieldRange{});
        s.backend.wait(direction_queue(0));
      }
      node_barrier();
    }
    for (const Channel& c : set) {
      if (e.route(c) == Route::Shared && x_face(c)) {  // the neighbour's packed face into the halo
        Timed timed(s.timers.unpack, &s.timers.unpack_dir[0]);
        const Real* packed = face(static_cast<Real*>(source_[std::size_t(c.index)]) + faces_at_, c.sign);
        s.backend.unpack(g, packed, e.recv_plane(c), s.f, direction_queue(0), FieldRange{});
        s.backend.wait(direction_queue(0));
      } else if (e.route(c) == Route::Shared) {  // the neighbour's current buffer, block by block into the halo
        Real* theirs = static_cast<Real*>(source_[std::size_t(c.index)]) + std::size_t(e.parity()) * fields_ * g.cells();
        FieldPtrs<Real> from;
        for (std::size_t f = 0; f < fields_; ++f) from.push_back(theirs + f * g.cells());
        s.backend.copy_plane(g, s.f, e.recv_plane(c), from, e.send_plane(c), direction_queue(c.dir));
        s.backend.wait(direction_queue(c.dir));
      } else if (e.through_mpi(c)) {
        const auto w = e.recv_wire(c);
        MPI_Irecv(w.ptr, w.count, w.type, recv_peer(s.dec, c), c.tag, s.dec.comm,
                  requests_.recv(c.index));
      }
    }
  }

  void post_sends(Engine<Real>& e, Channels set) override {
    const Decomposition& dec = e.state().dec;
    for (const Channel& c : set) {
      if (!e.sends_through_mpi(c)) continue;
      const auto w = e.send_wire(c);
      MPI_Isend(w.ptr, w.count, w.type, send_peer(dec, c), c.tag, dec.comm, requests_.send(c.index));
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

  // This step's slot of a rank's packed x face of `sign` (the layers it
  // sends that way, every field) in the faces that start at `faces`.
  Real* face(Real* faces, int sign) const { return faces + std::size_t(2 * slot_ + sign) * face_; }
  static bool x_face(const Channel& c) { return c.face() && c.dir == 0; }
  static const Channel& x_channel(const Engine<Real>& e, int sign) {
    for (const Channel& c : e.channels())
      if (x_face(c) && c.sign == sign) return c;
    return e.channels().front();
  }

  bool in_place_ = false;
  std::size_t fields_ = 3;
  Plane x_face_[2];  // this rank's x faces, by sign
  std::size_t faces_at_ = 0, face_ = 0;  // where a rank's packed x faces start in its part; one face's elements
  Real* faces_ = nullptr;               // this rank's
  bool pack_x_[2] = {false, false};     // by sign: a rank on the node reads that face from us
  int slot_ = 1;                        // alternates every step (the first post makes it 0)
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
