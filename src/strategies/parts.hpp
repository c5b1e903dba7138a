// A strategy is a combination of parts: how messages are packed, how they
// travel, in what order, how their completion is awaited, what compute runs
// while they fly, and how the fields are moved. The engine runs any valid
// combination; the catalog names some of them.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "grid/config.hpp"  // Compute
#include "grid/planes.hpp"  // Grid, plane_count

namespace checkmpi {

// How a message is built.
enum class Packing {
  Datatype,  // no copy: MPI derived datatypes describe each field's plane in place (one message per field)
  HandX,     // x planes packed by hand, one field per message; y and z as Datatype (CheckMPI's step1)
  Hand,      // the three fields' planes packed by hand on the host into one message
  Kernel,    // the three fields' planes packed by the backend's kernels into one message
  MpiPack,   // MPI_Pack / MPI_Unpack of the three planes' datatypes into one message
};

// What MPI is handed with kernel packing: host buffers (staged from the GPU:
// CheckMPI's step3) or the backend's own buffers (GPU-aware: step4 on).
enum class Buffers { Host, Backend };

enum class Transport {
  Sendrecv,           // MPI_Sendrecv per message
  IsendRecvX,         // x: MPI_Isend + MPI_Recv of both signs; y, z: Sendrecv (CheckMPI's step5)
  IsendRecv,          // MPI_Isend + MPI_Recv in every direction
  IsendIrecv,         // MPI_Irecv and MPI_Isend for every message, then wait
  Persistent,         // IsendIrecv with MPI_Send_init/MPI_Recv_init once, MPI_Startall every step
  NeighborAlltoallv,  // one MPI_Neighbor_alltoallv on the Cartesian communicator
  NeighborAlltoallw,  // one MPI_Neighbor_alltoallw, derived datatypes straight on the fields
  INeighborAlltoallv, // MPI_Ineighbor_alltoallv, waited for like a message
  RmaFence,           // MPI_Put into the neighbours' receive windows between MPI_Win_fence
  RmaPscw,            // MPI_Put in post/start/complete/wait epochs with the neighbours only
  ShmWindow,          // neighbours on this node read from an MPI_Win_allocate_shared window; others by message
  Partitioned,        // MPI 4 MPI_Psend_init/MPI_Precv_init, one partition per field
  Mock,               // no MPI in the timed loop: halos delivered by an untimed exchange
};

enum class Schedule { ByDirection, AllAtOnce };
enum class Completion { Waitall, Waitany };
enum class Overlap { None, Interior, Masked };

// How many messages one post of a transport covers: one (each message
// packed, exchanged and unpacked in turn), a direction's, or the whole step's
// (one call carries every message: collectives, RMA epochs, mock).
enum class Grain { Message, Direction, Step };

// What a transport is and can do, as data: the one table that the engine's
// schedules, the checks of a composition and part_traits read.
struct TransportTraits {
  Grain grain[3];            // by direction x, y, z
  Schedule schedule;         // by-direction: each direction completes before the next starts
  bool request_per_message;  // each message has requests of its own (completion=waitany can wait for any)
  bool returns_early;        // the posts return before the data arrive (an overlapped compute can run)
  bool tests;                // it can tell, without waiting, whether every receive is in
  bool device_memory;        // MPI may be handed device memory (GPU-aware MPI)
  bool packs_as_it_sends;    // it packs while it sends (partitioned: each field's partition as it is ready)
  bool bundles_fields;       // one message per neighbour whatever the packing (struct datatypes)
  bool measured;             // its MPI calls are in the timed loop (not so for mock)
};
const TransportTraits& transport_traits(Transport t);

struct Parts {
  Packing packing = Packing::Kernel;
  Buffers buffers = Buffers::Backend;
  Transport transport = Transport::IsendIrecv;
  Schedule schedule = Schedule::AllAtOnce;
  Completion completion = Completion::Waitall;
  Overlap overlap = Overlap::None;
  Compute compute = Compute::Auto;
  bool operator==(const Parts& o) const;
};

// Names as used in compositions and JSON ("kernel", "isend-irecv", ...).
const char* name(Packing);
const char* name(Buffers);
const char* name(Transport);
const char* name(Schedule);
const char* name(Completion);
const char* name(Overlap);
const char* name(Compute);

// Every part's key and the names of its values, in the order compositions,
// --list-strategies and the JSON use them: the one list of part names.
std::vector<std::pair<std::string, std::vector<std::string>>> part_names();

// The schedule a transport needs (its traits' schedule): by direction for
// those that exchange one direction after the other (sendrecv, isend-recv-x,
// isend-recv), else all at once. A composition that names no schedule gets it.
inline Schedule schedule_of(Transport t) { return transport_traits(t).schedule; }

// "pack=kernel,transport=persistent,overlap=interior": parts not named take
// the defaults above (schedule by-direction when the transport needs it).
// Throws UsageError naming the unknown key or value.
Parts parse_parts(const std::string& text);

// The composition that parse_parts reads back to `p`, every part named.
std::string composition(const Parts& p);

// Why `p` cannot run, or "" when it can (independent of the machine).
std::string invalid_reason(const Parts& p);

// Whether the parts need host memory (no cuda backend), and why.
std::string host_only_reason(const Parts& p);

// Whether this MPI library can run `p` at all ("" if it can): partitioned
// communication needs MPI 4.
std::string unavailable_reason(const Parts& p);

// Whether the per-direction timers of a transport cover its messages (so
// payload over that time is a bandwidth): not where one call carries every
// direction (neighbourhood collectives, RMA epochs), nor for mock, whose
// exchange is untimed.
inline bool times_each_direction(Transport t) {
  const TransportTraits& tt = transport_traits(t);
  return tt.measured && tt.grain[0] != Grain::Step;
}

// Why `p` cannot shift the fields in place ("" when it can): MPI reads and
// writes the fields' planes themselves (datatypes) while an overlapped
// compute shifts them. Auto then takes one-pass, and compute=in-place is refused.
std::string in_place_reason(const Parts& p);

// `p.compute` with Auto resolved by the run's --compute `run` (itself
// resolved: in-place, one-pass or two-pass). in-place: in place wherever
// in_place_reason allows, else one-pass; one-pass: one-pass; two-pass:
// CheckMPI's own compute (in place for host packing without overlap, else
// two-pass; masked overlap and shm-window are one-pass).
Compute resolved_compute(const Parts& p, Compute run);
// Sweeps over the fields per step of a resolved compute.
inline int kernel_passes(Compute c) { return c == Compute::TwoPass ? 2 : 1; }
// The run's --compute once resolved, in the order the catalog lists them.
inline constexpr Compute kRunComputes[3] = {Compute::InPlace, Compute::OnePass, Compute::TwoPass};

// What a strategy does per step on one rank, as the engine set it up: the
// facts the Python layer's model reads instead of a copy of the catalog.
struct Traits {
  int messages = 0;                      // MPI messages (collective blocks, puts) per step in the timed loop
  std::size_t mpi_bytes[3] = {0, 0, 0};  // bytes they carry, by direction (both signs; edges and corners in their last axis's)
  std::size_t diagonal_bytes = 0;        // of those, the bytes of messages to edge and corner neighbours
  std::size_t halo_bytes[3] = {0, 0, 0}; // halo planes moved per step, by direction, however they travel
  std::size_t message_bytes[3] = {0, 0, 0};  // one message's payload, by direction
  int kernel_passes = 1;                 // sweeps over the fields per step
  bool overlaps = false;                 // compute runs while messages are in flight
};

// What a combination of parts does per step whatever the grid: the traits of
// the catalog (--list-strategies --json) that the model reads. The engine's
// Traits of a real set-up follow from them and the neighbours' placement.
struct DirectionTraits {
  int messages_per_sign = 1;   // messages to one neighbour (direction and sign) when it goes through MPI
  int fields_per_message = 3;  // fields whose planes one message carries (all of them, or one)
  bool datatype = false;       // MPI handed the fields' planes as derived datatypes (no packing copy)
  const char* packed = "";     // who packs the message: "hand", "kernel", "mpi-pack", or "" (datatype)
};

// What it does with one --compute.
struct ComputeTraits {
  Compute compute = Compute::OnePass;  // its compute part, resolved
  int node_barriers = 0;               // barriers of the node's ranks every step, whatever --sync
};

struct PartTraits {
  DirectionTraits dir[3];
  ComputeTraits by_compute[3];     // with each of kRunComputes
  bool overlaps = false;           // compute runs while messages are in flight
  int barriers = 0;                // MPI_Barrier calls per step with --sync barrier
  int fences = 0;                  // MPI_Win_fence calls per step
  bool mpi = true;                 // whether the timed loop calls MPI at all
  const char* on_node = "message";  // how a neighbour on the same node is reached: "message" or "shared-memory"
  const char* self = "message";     // a direction of one rank: "message" (to itself through MPI, a local copy
                                    // with --self-copy), "shared-memory" or "none"
  int neighbours = 6;               // neighbours messages go to each step with the stencil
  const char* diagonals = "relayed";  // edge and corner halos: "relayed" through the faces' whole layers (by
                                      // direction), or sent "direct" to their neighbours (all at once, where the
                                      // stencil has them: 18 or 26 neighbours)
};

// With the stencil's fields (CheckMPI's three by default) and neighbours.
PartTraits part_traits(const Parts& p, const Stencil& s = Stencil{});

// Whether edges and corners travel as messages of their own: all at once
// with 18 or 26 neighbours. By direction the faces' whole layers relay them.
inline bool direct_messages(const Parts& p, const Stencil& s) {
  return p.schedule == Schedule::AllAtOnce && s.neighbours > 6;
}

// In direction d of a block `g` of numbers of `real` bytes: the halo layers
// of the fields refreshed per step (both signs, whole faces), and one face
// message's payload with these traits (only the interior's cells beside the
// face where edges and corners go direct). The engine's traits, the plan and
// the task log all count them so.
inline std::size_t halo_bytes(const Grid& g, int d, int fields, std::size_t real) {
  return 2 * std::size_t(fields) * plane_count(g, d) * real;
}
inline std::size_t face_elements(const Grid& g, int d, bool direct) {
  return region(g, region_box(g, face_offset(d, Up), false, !direct), d).count();
}
inline std::size_t message_bytes(const PartTraits& t, const Grid& g, int d, std::size_t real, bool direct = false) {
  return std::size_t(t.dir[d].fields_per_message) * face_elements(g, d, direct) * real;
}

// The messages to edge and corner neighbours a step sends where they go
// direct (none otherwise), each neighbour through MPI: how many, and the
// bytes they carry.
struct DiagonalMessages {
  int messages = 0;
  std::size_t bytes = 0;
};
DiagonalMessages diagonal_messages(const PartTraits& t, const Grid& g, const Stencil& s, std::size_t real);

}  // namespace checkmpi
