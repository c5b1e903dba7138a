// Neighbourhood collectives: all of a step's messages in one
// MPI_Neighbor_alltoallv (blocking, or MPI_Ineighbor_alltoallv waited for
// like a message), or MPI_Neighbor_alltoallw with derived datatypes straight
// on the fields, no packing.
//
// The decomposition's neighbour table is where every strategy takes its
// peers from (so the routing check and its misrouting test hook cover every
// transport). With 6 neighbours it is the Cartesian communicator's
// neighbourhood, except under that test hook; with 18 or 26 (edges and
// corners), or under the hook, the same neighbours form a distributed graph
// instead, each a source and a destination.
//
// A slot is a neighbour at offset q: to it a rank sends its message towards
// q, and from it receives the message the neighbour sent towards -q (the
// halo on side q). A Cartesian communicator orders the slots x-, x+, y-, y+,
// z-, z+; the graph takes the stencil's offsets in their order. Channels
// under --self-copy get zero counts (the engine copies them).
#include <array>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/errors.hpp"
#include "strategies/transport.hpp"

namespace checkmpi {

namespace {

// The slots' offsets and the communicator whose neighbourhood they are; a
// new one (to be freed) only when that is not the Cartesian one.
class Neighbourhood {
 public:
  Neighbourhood(const Decomposition& dec, int neighbours) : comm_(dec.comm) {
    std::vector<int> peers;
    int cartesian = neighbours == 6 ? 1 : 0;  // an int: it is reduced as MPI_INT
    for (int d = 0; d < 3; ++d)
      for (int side = 0; side < 2; ++side) {
        int lo = MPI_PROC_NULL, hi = MPI_PROC_NULL;
        MPI_Cart_shift(dec.comm, d, 1, &lo, &hi);
        Offset q{0, 0, 0};
        q[std::size_t(d)] = side == 0 ? -1 : 1;
        if (cartesian && dec.at(q) != (side == 0 ? lo : hi)) cartesian = 0;
      }
    int all = 0;
    MPI_Allreduce(&cartesian, &all, 1, MPI_INT, MPI_LAND, dec.comm);
    if (all) {
      for (int d = 0; d < 3; ++d)
        for (int side = 0; side < 2; ++side) {
          Offset q{0, 0, 0};
          q[std::size_t(d)] = side == 0 ? -1 : 1;
          slots_.push_back(q);
        }
      return;
    }
    slots_ = neighbour_offsets(neighbours);
    for (const Offset& q : slots_) peers.push_back(dec.at(q));
    MPI_Dist_graph_create_adjacent(dec.comm, int(peers.size()), peers.data(), MPI_UNWEIGHTED, int(peers.size()),
                                   peers.data(), MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &owned_);
    comm_ = owned_;
  }
  ~Neighbourhood() {
    if (owned_ != MPI_COMM_NULL) MPI_Comm_free(&owned_);
  }
  Neighbourhood(const Neighbourhood&) = delete;
  Neighbourhood& operator=(const Neighbourhood&) = delete;
  MPI_Comm comm() const { return comm_; }
  const std::vector<Offset>& slots() const { return slots_; }
  int size() const { return int(slots_.size()); }

 private:
  MPI_Comm comm_;
  MPI_Comm owned_ = MPI_COMM_NULL;
  std::vector<Offset> slots_;
};

// The channel of neighbour index `neighbour` in the engine (its first: the
// collectives carry packed messages, all fields in one).
template <class Real>
const Channel& channel_to(const Engine<Real>& e, const Offset& to) {
  for (const Channel& c : e.channels())
    if (c.to == to) return c;
  throw std::logic_error("no channel for a neighbour");
}

// Where a rank and its neighbour are the same rank through two slots (a
// direction of one or two ranks; more with edges and corners), the messages
// exchanged with it can only be told apart by which slot they fill. Some
// libraries match them by position instead (this rank's message to the
// neighbour below lands in that neighbour's slot for the rank below it):
// Open MPI 4.1's non-blocking neighbourhood collectives, MPICH 4.0's
// MPI_Neighbor_alltoallw. A one-integer exchange at set-up finds out how
// this library matches: each rank sends its slot numbers, and receive slot j
// sees which slot of the sender filled it. Slot j must receive the message
// sent towards -q_j; the send layout returned puts in each send slot the
// offset whose message must leave there (its own, where the library matches
// by side, as the standard says). Every rank must see the same.
std::vector<Offset> send_layout(const Neighbourhood& hood, Transport kind) {
  const int n = hood.size();
  const std::size_t slots = hood.slots().size();
  std::vector<int> out(slots), in(slots, -1), ones(slots, 1), at(slots);
  for (int i = 0; i < n; ++i) out[std::size_t(i)] = at[std::size_t(i)] = i;
  MPI_Comm comm = hood.comm();
  if (kind == Transport::NeighborAlltoallw) {
    std::vector<MPI_Aint> bytes(slots);
    std::vector<MPI_Datatype> ints(slots, MPI_INT);
    for (int i = 0; i < n; ++i) bytes[std::size_t(i)] = MPI_Aint(i * sizeof(int));
    MPI_Neighbor_alltoallw(out.data(), ones.data(), bytes.data(), ints.data(), in.data(), ones.data(), bytes.data(),
                           ints.data(), comm);
  } else if (kind == Transport::INeighborAlltoallv) {
    MPI_Request r;
    MPI_Ineighbor_alltoallv(out.data(), ones.data(), at.data(), MPI_INT, in.data(), ones.data(), at.data(), MPI_INT,
                            comm, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
  } else {
    MPI_Neighbor_alltoallv(out.data(), ones.data(), at.data(), MPI_INT, in.data(), ones.data(), at.data(), MPI_INT,
                           comm);
  }
  std::vector<int> lo(slots), hi(slots);
  MPI_Allreduce(in.data(), lo.data(), n, MPI_INT, MPI_MIN, comm);
  MPI_Allreduce(in.data(), hi.data(), n, MPI_INT, MPI_MAX, comm);
  const std::vector<Offset>& q = hood.slots();
  std::vector<Offset> layout(slots);
  std::vector<bool> filled(slots, false);
  for (int j = 0; j < n; ++j) {
    const int i = in[std::size_t(j)];
    if (lo != hi || i < 0 || i >= n || filled[std::size_t(i)])
      throw std::runtime_error("the MPI library delivers neighbourhood messages to the wrong slots");
    layout[std::size_t(i)] = opposite(q[std::size_t(j)]);  // the message slot j must receive leaves from send slot i
    filled[std::size_t(i)] = true;
  }
  return layout;
}

// "" where every message leaves from its own slot; else which directions'
// faces (and how many edge and corner slots) were sent in another's.
std::string layout_note(const Neighbourhood& hood, const std::vector<Offset>& layout) {
  std::string dirs;
  int diagonal = 0;
  for (int d = 0; d < 3; ++d) {
    bool moved = false;
    for (int i = 0; i < hood.size(); ++i) {
      const Offset& q = hood.slots()[std::size_t(i)];
      if (order_of(q) == 1 && q[std::size_t(d)] != 0 && layout[std::size_t(i)] != q) moved = true;
    }
    if (moved) dirs += std::string(dirs.empty() ? "" : ",") + "xyz"[d];
  }
  for (int i = 0; i < hood.size(); ++i)
    if (order_of(hood.slots()[std::size_t(i)]) > 1 && layout[std::size_t(i)] != hood.slots()[std::size_t(i)]) ++diagonal;
  if (dirs.empty() && diagonal == 0) return "";
  std::string note = "MPI matches a twice-neighbour's messages by position: sent swapped";
  if (!dirs.empty()) note += " in " + dirs;
  if (diagonal > 0) note += std::string(dirs.empty() ? " in " : " and in ") + std::to_string(diagonal) + " edge and corner slots";
  return note;
}

// Neighbor_alltoallv on kernel-packed messages (one channel per neighbour).
template <class Real>
class AlltoallvCarrier final : public Carrier<Real> {
 public:
  explicit AlltoallvCarrier(bool nonblocking) : nonblocking_(nonblocking) {}

  std::string note() const override { return note_; }

  void setup(Engine<Real>& e) override {
    if (e.block_elements() > std::size_t(2147483647))
      throw UsageError("local block too large for " + std::string(name(e.parts().transport)) +
                       ": its message displacements exceed 2^31 elements");
    hood_ = std::make_unique<Neighbourhood>(e.state().dec, e.direct() ? e.state().stencil.neighbours : 6);
    const std::vector<Offset> layout = send_layout(*hood_, e.parts().transport);
    note_ = layout_note(*hood_, layout);
    const int n = hood_->size();
    for (auto& way : counts_) way.assign(std::size_t(n), 0);
    for (auto& way : displs_) way.assign(std::size_t(n), 0);
    for (int slot = 0; slot < n; ++slot)
      for (int way = 0; way < 2; ++way) {
        // Sent: the message the layout puts here; received: the halo on this slot's side.
        const Offset to = way == 0 ? layout[std::size_t(slot)] : opposite(hood_->slots()[std::size_t(slot)]);
        const Channel& c = channel_to(e, to);
        counts_[way][std::size_t(slot)] = e.through_mpi(c) ? int(e.send_wire(c).count) : 0;
        displs_[way][std::size_t(slot)] = int(e.offset(c));
      }
  }

  // Non-blocking, the collective is posted; blocking, it is all wait.
  void post_sends(Engine<Real>& e, Channels) override {
    if (nonblocking_)
      MPI_Ineighbor_alltoallv(e.send_block(), counts_[0].data(), displs_[0].data(), mpi_type<Real>(), e.recv_block(),
                              counts_[1].data(), displs_[1].data(), mpi_type<Real>(), hood_->comm(), &request_);
  }

  bool test(Engine<Real>&) override {
    int flag = 1;
    MPI_Request_get_status(request_, &flag, MPI_STATUS_IGNORE);
    return flag != 0;
  }

  void wait(Engine<Real>& e, Channels set) override {
    if (nonblocking_)
      MPI_Wait(&request_, MPI_STATUS_IGNORE);
    else
      MPI_Neighbor_alltoallv(e.send_block(), counts_[0].data(), displs_[0].data(), mpi_type<Real>(), e.recv_block(),
                             counts_[1].data(), displs_[1].data(), mpi_type<Real>(), hood_->comm());
    e.arrived(set);
  }

 private:
  bool nonblocking_;
  std::unique_ptr<Neighbourhood> hood_;
  std::string note_;
  std::array<std::vector<int>, 2> counts_, displs_;  // [send, recv][slot]
  MPI_Request request_ = MPI_REQUEST_NULL;
};

// Neighbor_alltoallw: per slot one struct datatype made of the fields'
// blocks at their absolute addresses, sent from and received into
// MPI_BOTTOM. One set of datatypes per buffer the fields live in (one-pass
// swaps two), chosen by the engine's parity.
template <class Real>
class AlltoallwCarrier final : public Carrier<Real> {
 public:
  ~AlltoallwCarrier() override {
    for (auto& by_parity : types_)
      for (auto& by_way : by_parity)
        for (MPI_Datatype& t : by_way)
          if (t != MPI_DATATYPE_NULL) MPI_Type_free(&t);
  }

  std::string note() const override { return note_; }

  void setup(Engine<Real>& e) override {
    HaloState<Real>& s = e.state();
    hood_ = std::make_unique<Neighbourhood>(s.dec, e.direct() ? s.stencil.neighbours : 6);
    const std::vector<Offset> layout = send_layout(*hood_, Transport::NeighborAlltoallw);
    note_ = layout_note(*hood_, layout);
    displs_.assign(std::size_t(hood_->size()), 0);
    describe(e, s.f, layout, types_[0]);
    if (e.parts().compute == Compute::OnePass) describe(e, e.second_buffer(), layout, types_[1]);
  }

  // A blocking call: all wait, received in place (nothing to unpack).
  void post_sends(Engine<Real>&, Channels) override {}
  void wait(Engine<Real>& e, Channels) override {
    const auto& types = types_[std::size_t(e.parity())];
    MPI_Neighbor_alltoallw(MPI_BOTTOM, counts_[0].data(), displs_.data(), types[0].data(), MPI_BOTTOM,
                           counts_[1].data(), displs_.data(), types[1].data(), hood_->comm());
  }

 private:
  using Types = std::array<std::vector<MPI_Datatype>, 2>;  // [send, recv][slot]

  void describe(Engine<Real>& e, const FieldPtrs<Real>& f, const std::vector<Offset>& layout, Types& types) {
    const HaloState<Real>& s = e.state();
    const int n = hood_->size(), fields = e.fields();
    for (auto& way : types) way.assign(std::size_t(n), MPI_DATATYPE_NULL);
    for (auto& way : counts_) way.assign(std::size_t(n), 0);
    for (int slot = 0; slot < n; ++slot)
      for (int way = 0; way < 2; ++way) {
        const Offset to = way == 0 ? layout[std::size_t(slot)] : opposite(hood_->slots()[std::size_t(slot)]);
        const Channel& c = channel_to(e, to);
        const Plane p = way == 0 ? e.send_plane(c) : e.recv_plane(c);
        MPI_Datatype block = make_plane_datatype(p, mpi_type<Real>());
        const std::size_t count = std::size_t(fields);
        std::vector<int> lengths(count, 1);
        std::vector<MPI_Aint> where(count);
        std::vector<MPI_Datatype> member(count, block);
        for (int field = 0; field < fields; ++field) MPI_Get_address(f[std::size_t(field)] + p.offset, &where[std::size_t(field)]);
        MPI_Type_create_struct(fields, lengths.data(), where.data(), member.data(), &types[way][std::size_t(slot)]);
        MPI_Type_commit(&types[way][std::size_t(slot)]);
        MPI_Type_free(&block);
        counts_[way][std::size_t(slot)] = s.copies_locally(c.to) ? 0 : 1;
      }
  }

  std::unique_ptr<Neighbourhood> hood_;
  std::string note_;
  std::array<Types, 2> types_{};  // by parity: the fields as set up, and the second buffer
  std::array<std::vector<int>, 2> counts_;
  std::vector<MPI_Aint> displs_;  // all zero: the types hold the addresses
};

}  // namespace

template <class Real>
std::unique_ptr<Carrier<Real>> make_collective_carrier(Transport kind) {
  if (kind == Transport::NeighborAlltoallw) return std::make_unique<AlltoallwCarrier<Real>>();
  return std::make_unique<AlltoallvCarrier<Real>>(kind == Transport::INeighborAlltoallv);
}
template std::unique_ptr<Carrier<float>> make_collective_carrier<float>(Transport);
template std::unique_ptr<Carrier<double>> make_collective_carrier<double>(Transport);

}  // namespace checkmpi
