// Neighbourhood collectives on the Cartesian communicator: all six messages
// in one MPI_Neighbor_alltoallv (blocking, or MPI_Ineighbor_alltoallv waited
// for like a message), or MPI_Neighbor_alltoallw with derived datatypes
// straight on the fields, no packing.
//
// The decomposition's neighbour table is where every strategy takes its
// peers from (so the routing check and its misrouting test hook cover every
// transport). It is the Cartesian communicator's neighbourhood, except under
// that test hook: then the same six neighbours, in the same order, form a
// distributed graph instead.
//
// A Cartesian communicator orders each rank's neighbours x-, x+, y-, y+, z-,
// z+. Towards the neighbour below a rank sends its Down message (plane 1)
// and from it receives its Up message (halo 0); towards the one above, the
// reverse. Channels under --self-copy get zero counts (the engine copies them).
#include <array>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/errors.hpp"
#include "strategies/transport.hpp"

namespace checkmpi {

namespace {

// The communicator whose neighbourhood is the decomposition's neighbour
// table; a new one (to be freed) only when the table is not the Cartesian one.
class Neighbourhood {
 public:
  explicit Neighbourhood(const Decomposition& dec) : comm_(dec.comm) {
    std::array<int, 6> peers{};
    int cartesian = 1;  // an int: it is reduced as MPI_INT
    for (int d = 0; d < 3; ++d) {
      int lo = MPI_PROC_NULL, hi = MPI_PROC_NULL;
      MPI_Cart_shift(dec.comm, d, 1, &lo, &hi);
      peers[std::size_t(2 * d)] = dec.neighbour[std::size_t(d)][0];
      peers[std::size_t(2 * d + 1)] = dec.neighbour[std::size_t(d)][1];
      cartesian = cartesian && lo == peers[std::size_t(2 * d)] && hi == peers[std::size_t(2 * d + 1)] ? 1 : 0;
    }
    int all = 0;
    MPI_Allreduce(&cartesian, &all, 1, MPI_INT, MPI_LAND, dec.comm);
    if (all) return;
    MPI_Dist_graph_create_adjacent(dec.comm, 6, peers.data(), MPI_UNWEIGHTED, 6, peers.data(), MPI_UNWEIGHTED,
                                   MPI_INFO_NULL, 0, &owned_);
    comm_ = owned_;
  }
  ~Neighbourhood() {
    if (owned_ != MPI_COMM_NULL) MPI_Comm_free(&owned_);
  }
  Neighbourhood(const Neighbourhood&) = delete;
  Neighbourhood& operator=(const Neighbourhood&) = delete;
  MPI_Comm comm() const { return comm_; }

 private:
  MPI_Comm comm_;
  MPI_Comm owned_ = MPI_COMM_NULL;
};

// The channel sent to (way 0) or received from (way 1) neighbour slot
// 2 * dir + side (side 0: below, 1: above).
int slot_sign(int side, int way) { return (side == 0) == (way == 0) ? Down : Up; }

// In a direction of one or two ranks the neighbour below and the one above
// are the same rank, and the two messages exchanged with it can only be told
// apart by which slot they fill. Some libraries match them by position
// instead (this rank's message to the neighbour below lands in that
// neighbour's slot for the rank below it): Open MPI 4.1's non-blocking
// neighbourhood collectives, MPICH 4.0's MPI_Neighbor_alltoallw. A
// one-integer exchange at set-up finds out, per direction, how this library
// matches; where it matches by position, the two messages are sent in each
// other's slot, which delivers them where the standard says.
std::array<bool, 3> matches_by_position(MPI_Comm cart, Transport kind) {
  std::array<int, 6> out{0, 1, 2, 3, 4, 5}, in{-1, -1, -1, -1, -1, -1}, ones{1, 1, 1, 1, 1, 1}, at{0, 1, 2, 3, 4, 5};
  if (kind == Transport::NeighborAlltoallw) {
    std::array<MPI_Aint, 6> bytes;
    std::array<MPI_Datatype, 6> ints;
    for (int i = 0; i < 6; ++i) bytes[std::size_t(i)] = MPI_Aint(i * sizeof(int)), ints[std::size_t(i)] = MPI_INT;
    MPI_Neighbor_alltoallw(out.data(), ones.data(), bytes.data(), ints.data(), in.data(), ones.data(), bytes.data(),
                           ints.data(), cart);
  } else if (kind == Transport::INeighborAlltoallv) {
    MPI_Request r;
    MPI_Ineighbor_alltoallv(out.data(), ones.data(), at.data(), MPI_INT, in.data(), ones.data(), at.data(), MPI_INT,
                            cart, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
  } else {
    MPI_Neighbor_alltoallv(out.data(), ones.data(), at.data(), MPI_INT, in.data(), ones.data(), at.data(), MPI_INT,
                           cart);
  }
  std::array<int, 3> verdict{};  // 0: by side, 1: by position, 2: neither
  for (int d = 0; d < 3; ++d) {
    const bool by_side = in[2 * d] == 2 * d + 1 && in[2 * d + 1] == 2 * d;
    const bool by_position = in[2 * d] == 2 * d && in[2 * d + 1] == 2 * d + 1;
    verdict[d] = by_side ? 0 : by_position ? 1 : 2;
  }
  std::array<int, 3> all{};
  MPI_Allreduce(verdict.data(), all.data(), 3, MPI_INT, MPI_MAX, cart);
  std::array<bool, 3> swap{};
  for (int d = 0; d < 3; ++d) {
    if (all[d] == 2) throw std::runtime_error("the MPI library delivers neighbourhood messages to the wrong slots");
    swap[d] = all[d] == 1;
  }
  return swap;
}

std::string swap_note(const std::array<bool, 3>& swap) {
  std::string dirs;
  for (int d = 0; d < 3; ++d)
    if (swap[std::size_t(d)]) dirs += std::string(dirs.empty() ? "" : ",") + "xyz"[d];
  return dirs.empty() ? "" : "MPI matches a twice-neighbour's messages by position: sent swapped in " + dirs;
}

// Neighbor_alltoallv on kernel-packed messages (one channel per direction and sign).
template <class Real>
class AlltoallvCarrier final : public Carrier<Real> {
 public:
  explicit AlltoallvCarrier(bool nonblocking) : nonblocking_(nonblocking) {}

  std::string note() const override { return swap_note(swap_); }

  void setup(Engine<Real>& e) override {
    if (e.block_elements() > std::size_t(2147483647))
      throw UsageError("local block too large for " + std::string(name(e.parts().transport)) +
                       ": its message displacements exceed 2^31 elements");
    hood_ = std::make_unique<Neighbourhood>(e.state().dec);
    swap_ = matches_by_position(hood_->comm(), e.parts().transport);
    for (int slot = 0; slot < 6; ++slot)
      for (int way = 0; way < 2; ++way) {
        const bool swapped = way == 0 && swap_[std::size_t(slot / 2)];
        const Channel& c = find(e, slot / 2, slot_sign(slot % 2, way) ^ int(swapped));
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
  static const Channel& find(Engine<Real>& e, int dir, int sign) {
    for (const Channel& c : e.channels())
      if (c.dir == dir && c.sign == sign) return c;
    throw std::logic_error("no channel for a neighbour");
  }

  bool nonblocking_;
  std::unique_ptr<Neighbourhood> hood_;
  std::array<bool, 3> swap_{};
  std::array<std::array<int, 6>, 2> counts_{}, displs_{};  // [send, recv][slot]
  MPI_Request request_ = MPI_REQUEST_NULL;
};

// Neighbor_alltoallw: per neighbour one struct datatype made of the three
// fields' planes at their absolute addresses, sent from and received into
// MPI_BOTTOM. One set of datatypes per buffer the fields live in (one-pass
// swaps two), chosen by the engine's parity.
template <class Real>
class AlltoallwCarrier final : public Carrier<Real> {
 public:
  AlltoallwCarrier() {
    for (auto& by_parity : types_)
      for (auto& by_way : by_parity) by_way.fill(MPI_DATATYPE_NULL);
  }
  ~AlltoallwCarrier() override {
    for (auto& by_parity : types_)
      for (auto& by_way : by_parity)
        for (MPI_Datatype& t : by_way)
          if (t != MPI_DATATYPE_NULL) MPI_Type_free(&t);
  }

  std::string note() const override { return swap_note(swap_); }

  void setup(Engine<Real>& e) override {
    HaloState<Real>& s = e.state();
    hood_ = std::make_unique<Neighbourhood>(s.dec);
    swap_ = matches_by_position(hood_->comm(), Transport::NeighborAlltoallw);
    describe(s, s.f, types_[0]);
    if (e.parts().compute == Compute::OnePass) describe(s, e.second_buffer(), types_[1]);
  }

  // A blocking call: all wait, received in place (nothing to unpack).
  void post_sends(Engine<Real>&, Channels) override {}
  void wait(Engine<Real>& e, Channels) override {
    const auto& types = types_[std::size_t(e.parity())];
    MPI_Neighbor_alltoallw(MPI_BOTTOM, counts_[0].data(), displs_.data(), types[0].data(), MPI_BOTTOM,
                           counts_[1].data(), displs_.data(), types[1].data(), hood_->comm());
  }

 private:
  using Types = std::array<std::array<MPI_Datatype, 6>, 2>;  // [send, recv][slot]

  void describe(const HaloState<Real>& s, const FieldPtrs<Real>& f, Types& types) {
    for (int slot = 0; slot < 6; ++slot) {
      const int dir = slot / 2;
      MPI_Datatype plane_type = make_plane_datatype(s.grid, dir, mpi_type<Real>());
      for (int way = 0; way < 2; ++way) {
        const int sign = slot_sign(slot % 2, way) ^ int(way == 0 && swap_[std::size_t(dir)]);
        const Plane p = plane(s.grid, dir, way == 0 ? send_index(s.grid, dir, sign) : recv_index(s.grid, dir, sign));
        int lengths[3] = {1, 1, 1};
        MPI_Aint where[3];
        MPI_Datatype member[3] = {plane_type, plane_type, plane_type};
        for (int field = 0; field < 3; ++field) MPI_Get_address(f[field] + p.offset, &where[field]);
        MPI_Type_create_struct(3, lengths, where, member, &types[way][std::size_t(slot)]);
        MPI_Type_commit(&types[way][std::size_t(slot)]);
        counts_[way][std::size_t(slot)] = s.copies_locally(dir) ? 0 : 1;
      }
      MPI_Type_free(&plane_type);
    }
  }

  std::unique_ptr<Neighbourhood> hood_;
  std::array<bool, 3> swap_{};
  std::array<Types, 2> types_{};  // by parity: the fields as set up, and the second buffer
  std::array<std::array<int, 6>, 2> counts_{};
  std::array<MPI_Aint, 6> displs_{};  // all zero: the types hold the addresses
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
