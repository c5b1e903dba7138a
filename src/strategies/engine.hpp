// The engine that runs any valid combination of parts: it owns the messages
// (channels, buffers, packing, local copies) and the compute, and drives the
// transport's carrier (transport.hpp: post receives, post sends, wait) through
// one of two schedules, as the transport's traits say. Carriers call back
// into it to unpack what arrived, so each states only how its messages travel.
#pragma once

#include <mpi.h>

#include <array>
#include <memory>
#include <vector>

#include "strategies/compute.hpp"
#include "strategies/strategy.hpp"

namespace checkmpi {

// One message of a step: the cells next to one side (a face, an edge or a
// corner) of one field, or of all of them, sent to the neighbour there, and
// the halo on the opposite side received from the neighbour there; built as
// the packing says.
struct Channel {
  int dir = 0, sign = 0;  // the direction it is timed in (an edge or corner: its last axis) and that axis's sign
  Offset to{};            // the neighbour it sends to (it receives from the opposite one)
  int neighbour = 0;      // to's index in neighbour_offsets()
  int field = -1;         // the one field it carries, or -1 for all of them
  Packing how = Packing::Kernel;  // Datatype, Hand, Kernel or MpiPack
  int index = 0;          // position in Engine::channels()
  int tag = 0;            // halo_tag(field, neighbour, fields)
  FieldRange fields() const { return field < 0 ? FieldRange{} : FieldRange{field, 1}; }
  bool face() const { return order_of(to) == 1; }
};

// The channels of a packing to `neighbours` neighbours (6: the faces) of a
// rank with `fields` fields, direction by direction (faces, then the edges
// and corners whose last axis it is), neighbour by neighbour, field by
// field: the order every schedule works in.
std::vector<Channel> make_channels(Packing p, int fields, int neighbours);

inline int send_peer(const Decomposition& d, const Channel& c) { return d.at(c.to); }
inline int recv_peer(const Decomposition& d, const Channel& c) { return d.at(opposite(c.to)); }

// A set of channels the schedule hands a carrier: a contiguous run of
// Engine::channels() (one channel, a direction's, or all of them).
struct Channels {
  const Channel* first = nullptr;
  const Channel* last = nullptr;
  const Channel* begin() const { return first; }
  const Channel* end() const { return last; }
  int size() const { return int(last - first); }
  int index() const { return first == last ? 0 : first->index; }  // of its first channel
};

// How a channel's halo gets here: a message through MPI; a local copy by the
// engine (--self-copy, a direction of one rank); or read by the carrier
// straight from the neighbour's memory (shm-window), nothing packed.
enum class Route { Mpi, Self, Shared };

template <class Real>
class Carrier;

template <class Real>
class Engine final : public Strategy<Real> {
 public:
  Engine(const StrategyInfo& info, Compute run);
  ~Engine() override;
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  void setup(HaloState<Real>& s) override;
  void step(HaloState<Real>& s) override;
  std::string mpi_buffers() const override;
  Traits traits() const override { return traits_; }
  std::string note() const override;

  // ---- for carriers ----
  HaloState<Real>& state() { return *s_; }
  const Parts& parts() const { return info_.parts; }
  const std::vector<Channel>& channels() const { return channels_; }
  Channels all() const { return {channels_.data(), channels_.data() + channels_.size()}; }
  Channels in_direction(int dir) const { return by_dir_[std::size_t(dir)]; }
  // How `c`'s halo gets here (its receive), and how its send leaves: the two
  // differ where one neighbour shares this rank's memory and the other does
  // not (shm-window at a node's edge).
  Route route(const Channel& c) const { return routes_[std::size_t(c.index)]; }
  bool through_mpi(const Channel& c) const { return route(c) == Route::Mpi; }
  bool sends_through_mpi(const Channel& c) const { return send_routes_[std::size_t(c.index)] == Route::Mpi; }
  // At setup: the carrier reads `c` from the neighbour's memory (`receive`),
  // and the neighbour reads this rank's (`send`).
  void share(const Channel& c, bool receive, bool send) {
    if (receive) routes_[std::size_t(c.index)] = Route::Shared;
    if (send) send_routes_[std::size_t(c.index)] = Route::Shared;
  }

  // Timed packing (pack, pack_<dir>) of the current fields into the send
  // buffer, staged to host memory when MPI needs it there. Datatype channels
  // have nothing to pack. Without `finish` the work is left on the queue.
  void pack(const Channel& c, bool finish = true, FieldRange which = {});
  // Timed unpacking (unpack, unpack_<dir>) of a received channel, unstaged
  // first, into the halos the compute reads next.
  void unpack(const Channel& c, bool finish = true);
  // A carrier's wait hands over each channel as it arrives: unpacked (in
  // an all-at-once step also timed in the channel's direction, since waits
  // belong to no direction), left running on its queue with completion=waitany.
  void arrived(const Channel& c);
  // Every channel of the set that went through MPI, after one wait for all.
  void arrived(Channels set) {
    for (const Channel& c : set)
      if (through_mpi(c)) arrived(c);
  }

  // What MPI reads for a send and writes for a receive.
  struct Wire {
    void* ptr;
    int count;
    MPI_Datatype type;
  };
  Wire send_wire(const Channel& c);
  Wire recv_wire(const Channel& c);
  // The wire buffers of all messages, one contiguous block per way, and a
  // channel's offset in elements (collectives and RMA address them so).
  Real* send_block() const { return wire_[0]; }
  Real* recv_block() const { return wire_[1]; }
  std::size_t block_elements() const { return block_; }
  std::size_t offset(const Channel& c) const;
  // The cells a channel sends, and the halo cells it receives into.
  Plane send_plane(const Channel& c) const;
  Plane recv_plane(const Channel& c) const;
  // Whether edges and corners travel as messages of their own (all at once
  // with 18 or 26 neighbours), or are relayed through the faces, whose whole
  // layers carry the halos of the directions before them.
  bool direct() const { return direct_; }
  // A transport that keeps the fields itself (shared memory) hands its
  // buffers over (`next` empty in place); the current values move into `current`.
  void adopt_fields(const FieldPtrs<Real>& current, const FieldPtrs<Real>& next) { compute_.adopt(*s_, current, next); }
  // Number of buffer swaps so far, modulo 2 (the same on every rank).
  int parity() const { return compute_.parity(); }
  // One-pass, at setup (parity 0): the second buffer, where the fields are at parity 1.
  const FieldPtrs<Real>& second_buffer() const { return compute_.other(); }
  int fields() const { return fields_; }

 private:
  std::size_t count(const Channel& c) const;  // elements of the channel's message
  int queue(const Channel& c) const { return direction_queue(c.dir); }
  bool staged(const Channel& c) const { return staged_ && through_mpi(c); }
  bool async() const { return info_.parts.completion == Completion::Waitany; }
  const FieldPtrs<Real>& target() { return compute_.unpack_target(*s_); }
  // Whether the engine packs `c` (not where the carrier reads the
  // neighbour's memory, nor a message the transport packs as it sends).
  bool packs(const Channel& c) const {
    return route(c) == Route::Self || (sends_through_mpi(c) && !transport_.packs_as_it_sends);
  }
  // The send side becomes the receive side without MPI (--self-copy).
  void copy_locally(const Channel& c);
  // The steps of the schedules on a set: the carrier's posts and wait (timed
  // as post and wait) and the local copies around them.
  void post_recvs(Channels set);
  void post_sends(Channels set);
  void wait(Channels set);
  void exchange(Channels set);  // by direction: packed, posted and waited for
  void post_all_at_once(HaloState<Real>& s);
  void compute_in_flight(HaloState<Real>& s, bool async);

  StrategyInfo info_;
  std::unique_ptr<Carrier<Real>> carrier_;
  ComputeStep<Real> compute_;
  HaloState<Real>* s_ = nullptr;
  const TransportTraits& transport_;
  std::vector<Channel> channels_;
  std::vector<Route> routes_, send_routes_;  // by channel
  std::array<Channels, 3> by_dir_;
  int fields_ = 3;
  bool direct_ = false;
  std::vector<std::size_t> message_offset_;  // by neighbour: its message's place in a block
  std::vector<std::size_t> message_size_;    // its elements
  std::vector<Plane> send_planes_, recv_planes_;  // by neighbour
  std::size_t block_ = 0;
  std::array<Real*, 2> data_{};  // [send, recv]: where packing works
  std::array<Real*, 2> wire_{};  // what MPI sees: data_ itself, or host copies
  Real* given_ = nullptr;        // receive memory the carrier owns
  bool staged_ = false;
  std::vector<MPI_Datatype> plane_types_;  // by neighbour: one field's block
  std::vector<int> packed_bytes_;  // MpiPack: each channel's packed size
  Traits traits_;
};

}  // namespace checkmpi
