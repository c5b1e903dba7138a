#include "strategies/parts.hpp"

#include <mpi.h>

#include <iterator>
#include <sstream>
#include <vector>

#include "core/errors.hpp"

namespace checkmpi {

namespace {

// Every value of a part with its name, in the order --help lists them.
template <class E>
struct Named {
  E value;
  const char* name;
};

const std::vector<Named<Packing>> kPacking{{Packing::Datatype, "dtype"},
                                           {Packing::HandX, "hand-x"},
                                           {Packing::Hand, "hand"},
                                           {Packing::Kernel, "kernel"},
                                           {Packing::MpiPack, "mpi-pack"}};
const std::vector<Named<Buffers>> kBuffers{{Buffers::Host, "host"}, {Buffers::Backend, "backend"}};
const std::vector<Named<Transport>> kTransport{{Transport::Sendrecv, "sendrecv"},
                                               {Transport::IsendRecvX, "isend-recv-x"},
                                               {Transport::IsendRecv, "isend-recv"},
                                               {Transport::IsendIrecv, "isend-irecv"},
                                               {Transport::Persistent, "persistent"},
                                               {Transport::NeighborAlltoallv, "neighbor-alltoallv"},
                                               {Transport::NeighborAlltoallw, "neighbor-alltoallw"},
                                               {Transport::INeighborAlltoallv, "ineighbor-alltoallv"},
                                               {Transport::RmaFence, "rma-fence"},
                                               {Transport::RmaPscw, "rma-pscw"},
                                               {Transport::ShmWindow, "shm-window"},
                                               {Transport::Partitioned, "partitioned"},
                                               {Transport::Mock, "mock"}};
const std::vector<Named<Schedule>> kSchedule{{Schedule::ByDirection, "by-direction"},
                                             {Schedule::AllAtOnce, "all-at-once"}};
const std::vector<Named<Completion>> kCompletion{{Completion::Waitall, "waitall"}, {Completion::Waitany, "waitany"}};
const std::vector<Named<Overlap>> kOverlap{
    {Overlap::None, "none"}, {Overlap::Interior, "interior"}, {Overlap::Masked, "masked"}};
const std::vector<Named<Compute>> kCompute{{Compute::Auto, compute_name(Compute::Auto)},
                                           {Compute::InPlace, compute_name(Compute::InPlace)},
                                           {Compute::OnePass, compute_name(Compute::OnePass)},
                                           {Compute::TwoPass, compute_name(Compute::TwoPass)}};

template <class E>
const char* lookup(const std::vector<Named<E>>& table, E v) {
  for (const auto& n : table)
    if (n.value == v) return n.name;
  return "?";
}

template <class E>
E parse_value(const std::vector<Named<E>>& table, const std::string& key, const std::string& text) {
  std::string known;
  for (const auto& n : table) {
    if (text == n.name) return n.value;
    known += (known.empty() ? "" : ", ") + std::string(n.name);
  }
  throw UsageError("strategy part " + key + "=" + text + " is unknown (" + key + ": " + known + ")");
}

constexpr Grain M = Grain::Message, D = Grain::Direction, S = Grain::Step;
constexpr Schedule ByDir = Schedule::ByDirection, AtOnce = Schedule::AllAtOnce;

// By transport, in the enum's order: grain x/y/z, schedule, request per
// message, returns early, tests, device memory, packs as it sends, bundles
// fields, measured.
const TransportTraits kTransportTraits[] = {
    {{M, M, M}, ByDir, false, false, false, true, false, false, true},    // sendrecv
    {{D, M, M}, ByDir, false, false, false, true, false, false, true},    // isend-recv-x
    {{D, D, D}, ByDir, false, false, false, true, false, false, true},    // isend-recv
    {{D, D, D}, AtOnce, true, true, true, true, false, false, true},      // isend-irecv
    {{D, D, D}, AtOnce, true, true, true, true, false, false, true},      // persistent
    {{S, S, S}, AtOnce, false, false, false, false, false, false, true},  // neighbor-alltoallv
    {{S, S, S}, AtOnce, false, false, false, false, false, true, true},   // neighbor-alltoallw
    {{S, S, S}, AtOnce, false, true, true, false, false, false, true},    // ineighbor-alltoallv
    {{S, S, S}, AtOnce, false, true, false, false, false, false, true},   // rma-fence
    {{S, S, S}, AtOnce, false, true, false, false, false, false, true},   // rma-pscw
    {{D, D, D}, AtOnce, false, false, false, false, false, false, true},  // shm-window
    {{D, D, D}, AtOnce, true, true, false, false, true, false, true},     // partitioned
    {{S, S, S}, AtOnce, false, true, false, true, false, false, false},   // mock (as step7, whose packing it mirrors)
};
static_assert(std::size(kTransportTraits) == std::size_t(Transport::Mock) + 1, "a row per transport");

bool by_direction(Transport t) { return transport_traits(t).schedule == Schedule::ByDirection; }

bool packs_messages(Packing p) { return p == Packing::Hand || p == Packing::Kernel || p == Packing::MpiPack; }

}  // namespace

std::vector<std::pair<std::string, std::vector<std::string>>> part_names() {
  auto names = [](const auto& table) {
    std::vector<std::string> out;
    for (const auto& n : table) out.push_back(n.name);
    return out;
  };
  return {{"pack", names(kPacking)},         {"buffers", names(kBuffers)},   {"transport", names(kTransport)},
          {"schedule", names(kSchedule)},    {"completion", names(kCompletion)}, {"overlap", names(kOverlap)},
          {"compute", names(kCompute)}};
}

const TransportTraits& transport_traits(Transport t) { return kTransportTraits[std::size_t(t)]; }

bool Parts::operator==(const Parts& o) const {
  return packing == o.packing && buffers == o.buffers && transport == o.transport && schedule == o.schedule &&
         completion == o.completion && overlap == o.overlap && compute == o.compute;
}

const char* name(Packing v) { return lookup(kPacking, v); }
const char* name(Buffers v) { return lookup(kBuffers, v); }
const char* name(Transport v) { return lookup(kTransport, v); }
const char* name(Schedule v) { return lookup(kSchedule, v); }
const char* name(Completion v) { return lookup(kCompletion, v); }
const char* name(Overlap v) { return lookup(kOverlap, v); }
const char* name(Compute v) { return lookup(kCompute, v); }

Parts parse_parts(const std::string& text) {
  Parts p;
  bool schedule_given = false;
  std::stringstream items(text);
  std::string item;
  while (std::getline(items, item, ',')) {
    const auto eq = item.find('=');
    if (eq == std::string::npos)
      throw UsageError("strategy part '" + item + "' is not KEY=VALUE (keys: pack, buffers, transport, schedule, "
                       "completion, overlap, compute)");
    const std::string key = item.substr(0, eq), value = item.substr(eq + 1);
    if (key == "pack") p.packing = parse_value(kPacking, key, value);
    else if (key == "buffers") p.buffers = parse_value(kBuffers, key, value);
    else if (key == "transport") p.transport = parse_value(kTransport, key, value);
    else if (key == "schedule") p.schedule = parse_value(kSchedule, key, value), schedule_given = true;
    else if (key == "completion") p.completion = parse_value(kCompletion, key, value);
    else if (key == "overlap") p.overlap = parse_value(kOverlap, key, value);
    else if (key == "compute") p.compute = parse_value(kCompute, key, value);
    else
      throw UsageError("strategy part '" + key + "' is unknown (keys: pack, buffers, transport, schedule, "
                       "completion, overlap, compute)");
  }
  if (!schedule_given) p.schedule = schedule_of(p.transport);
  return p;
}

std::string composition(const Parts& p) {
  return std::string("pack=") + name(p.packing) + ",buffers=" + name(p.buffers) + ",transport=" +
         name(p.transport) + ",schedule=" + name(p.schedule) + ",completion=" + name(p.completion) +
         ",overlap=" + name(p.overlap) + ",compute=" + name(p.compute);
}

std::string invalid_reason(const Parts& p) {
  const std::string t = name(p.transport);
  if (by_direction(p.transport) && p.schedule != Schedule::ByDirection)
    return "transport=" + t + " exchanges one direction at a time (schedule=by-direction)";
  if (!by_direction(p.transport) && p.schedule == Schedule::ByDirection)
    return "transport=" + t + " has all six messages in flight at once (schedule=all-at-once)";
  const TransportTraits& tt = transport_traits(p.transport);
  if (p.completion == Completion::Waitany && !tt.request_per_message)
    return "completion=waitany needs a request per message (transport=isend-irecv, persistent or partitioned)";
  if (p.overlap != Overlap::None && !tt.returns_early)
    return "overlap=" + std::string(name(p.overlap)) + " needs a transport that returns before the data arrive, "
           "not transport=" + t;
  if (p.transport == Transport::NeighborAlltoallw) {
    if (p.packing != Packing::Datatype) return "transport=neighbor-alltoallw sends derived datatypes (pack=dtype)";
  } else if (!by_direction(p.transport) && p.transport != Transport::IsendIrecv && !packs_messages(p.packing)) {
    return "transport=" + t + " sends packed messages (pack=hand, kernel or mpi-pack)";
  }
  if ((p.transport == Transport::Partitioned || p.transport == Transport::ShmWindow) && p.packing != Packing::Kernel)
    return "transport=" + t + " works on the backend's kernels (pack=kernel)";
  if (p.buffers == Buffers::Host && p.packing != Packing::Kernel)
    return "buffers=host (MPI on host copies of kernel-packed buffers) needs pack=kernel";
  if (p.compute == Compute::InPlace && !in_place_reason(p).empty()) return in_place_reason(p);
  if (p.compute == Compute::TwoPass && (p.overlap == Overlap::Masked || p.transport == Transport::ShmWindow))
    return std::string(p.overlap == Overlap::Masked ? "overlap=masked" : "transport=shm-window") +
           " is double-buffered (compute=one-pass)";
  return "";
}

std::string host_only_reason(const Parts& p) {
  if (p.packing != Packing::Kernel)
    return std::string("pack=") + name(p.packing) + " works on host memory";
  if (p.compute == Compute::InPlace) return "compute=in-place works on host memory";
  if (p.transport == Transport::ShmWindow) return "transport=shm-window shares host memory between ranks";
  return "";
}

std::string unavailable_reason(const Parts& p) {
  if (p.transport == Transport::Partitioned && MPI_VERSION < 4)
    return "needs MPI 4 partitioned communication (MPI_Psend_init); this MPI library implements MPI " +
           std::to_string(MPI_VERSION) + "." + std::to_string(MPI_SUBVERSION);
  return "";
}

std::string in_place_reason(const Parts& p) {
  if (p.overlap != Overlap::None && (p.packing == Packing::Datatype || p.packing == Packing::HandX))
    return std::string("pack=") + name(p.packing) + " with overlap=" + name(p.overlap) +
           " has MPI read and write the fields' planes while the compute shifts them: it needs the second "
           "buffer of compute=one-pass";
  return "";
}

Compute resolved_compute(const Parts& p, Compute run) {
  if (p.compute != Compute::Auto) return p.compute;
  if (run == Compute::InPlace) return in_place_reason(p).empty() ? Compute::InPlace : Compute::OnePass;
  if (run != Compute::TwoPass) return Compute::OnePass;
  if (p.overlap == Overlap::Masked || p.transport == Transport::ShmWindow) return Compute::OnePass;
  // CheckMPI's own compute: its host-packing steps (step0-step2) shift in place, its kernel steps copy, then shift.
  return p.packing == Packing::Kernel || p.overlap != Overlap::None ? Compute::TwoPass : Compute::InPlace;
}

DiagonalMessages diagonal_messages(const PartTraits& t, const Grid& g, const Stencil& s, std::size_t real) {
  DiagonalMessages m;
  if (t.neighbours <= 6) return m;
  for (const Offset& o : neighbour_offsets(t.neighbours)) {
    if (order_of(o) < 2) continue;
    const int last = o[2] != 0 ? 2 : 1;
    m.messages += t.dir[last].messages_per_sign;
    m.bytes += std::size_t(s.fields) * region(g, region_box(g, o, false, false), last).count() * real;
  }
  return m;
}

PartTraits part_traits(const Parts& p, const Stencil& s) {
  PartTraits t;
  const bool bundles = transport_traits(p.transport).bundles_fields;
  for (int d = 0; d < 3; ++d) {
    DirectionTraits& dt = t.dir[d];
    const Packing how = p.packing == Packing::HandX ? (d == 0 ? Packing::Hand : Packing::Datatype) : p.packing;
    const bool per_field = p.packing == Packing::Datatype || p.packing == Packing::HandX;
    dt.fields_per_message = per_field && !bundles ? 1 : s.fields;
    dt.messages_per_sign = s.fields / dt.fields_per_message;
    dt.datatype = how == Packing::Datatype;
    dt.packed = how == Packing::Datatype ? "" : name(how);
  }
  for (int m = 0; m < 3; ++m) {
    ComputeTraits& c = t.by_compute[m];
    c.compute = resolved_compute(p, kRunComputes[m]);
    // The window's barrier at each step's start; in place a second once the neighbours' faces are read,
    // before anyone shifts the fields they were read from.
    if (p.transport == Transport::ShmWindow) c.node_barriers = c.compute == Compute::InPlace ? 2 : 1;
  }
  t.overlaps = p.overlap != Overlap::None;
  t.mpi = transport_traits(p.transport).measured;
  t.barriers = !t.mpi ? 0 : p.schedule == Schedule::ByDirection ? 3 : 1;
  t.fences = p.transport == Transport::RmaFence ? 2 : 0;
  if (p.transport == Transport::ShmWindow) {
    t.on_node = "shared-memory";
    t.self = "shared-memory";
  }
  if (!t.mpi) t.on_node = t.self = "none";
  t.neighbours = direct_messages(p, s) ? s.neighbours : 6;
  t.diagonals = p.schedule == Schedule::ByDirection ? "relayed" : "direct";
  return t;
}

}  // namespace checkmpi
