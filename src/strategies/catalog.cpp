// The strategy table: CheckMPI's step0-step10 and checkmpi's own rows, each a
// named combination of parts; the selection users make with --strategy.
#include <deque>
#include <map>
#include <set>
#include <sstream>

#include "core/errors.hpp"
#include "strategies/strategy.hpp"

namespace checkmpi {

namespace {

Parts parts(Packing pack, Transport transport, Compute compute = Compute::Auto, Overlap overlap = Overlap::None,
            Completion completion = Completion::Waitall, Buffers buffers = Buffers::Backend) {
  Parts p;
  p.packing = pack;
  p.buffers = buffers;
  p.transport = transport;
  p.schedule = schedule_of(transport);
  p.completion = completion;
  p.overlap = overlap;
  p.compute = compute;
  return p;
}

using P = Packing;
using T = Transport;
using C = Compute;

}  // namespace

const std::vector<StrategyInfo>& strategy_catalog() {
  static const std::vector<StrategyInfo> catalog{
      {0, "step0", "sendrecv-dtype", "MPI_Sendrecv per field, direction and sign with derived datatypes (18 calls)",
       parts(P::Datatype, T::Sendrecv), "", ""},
      {1, "step1", "sendrecv-packx", "step0, x planes packed by hand per field",
       parts(P::HandX, T::Sendrecv), "", ""},
      {2, "step2", "sendrecv-pack", "all fields packed by hand into one buffer per direction and sign (6 calls)",
       parts(P::Hand, T::Sendrecv), "", ""},
      {3, "step3", "kernel-pack", "step2 with kernel packing, MPI on host buffers",
       parts(P::Kernel, T::Sendrecv, C::Auto, Overlap::None, Completion::Waitall, Buffers::Host), "", ""},
      {4, "step4", "kernel-pack-aware", "step3 with the backend's buffers handed to MPI (GPU-aware)",
       parts(P::Kernel, T::Sendrecv), "same work as step3 on the host backend", ""},
      {5, "step5", "isend-recv-x", "step4, x with MPI_Isend + MPI_Recv", parts(P::Kernel, T::IsendRecvX), "", ""},
      {6, "step6", "isend-recv", "step4 with MPI_Isend + MPI_Recv in every direction",
       parts(P::Kernel, T::IsendRecv), "", ""},
      {7, "step7", "isend-irecv", "all six messages in flight: Irecv, Isend, one Waitall",
       parts(P::Kernel, T::IsendIrecv), "", ""},
      {8, "step8", "overlap", "step7, cells that need no halo updated while the messages fly",
       parts(P::Kernel, T::IsendIrecv, C::Auto, Overlap::Interior), "", ""},
      {9, "step9", "overlap-async", "step8 with per-direction queues; each message unpacked as it arrives",
       parts(P::Kernel, T::IsendIrecv, C::Auto, Overlap::Interior, Completion::Waitany), "", ""},
      {10, "step10", "overlap-masked", "double buffer: inner cells updated while messages fly, then the rest",
       parts(P::Kernel, T::IsendIrecv, C::Auto, Overlap::Masked), "", ""},
      {-1, "persistent", "start-all", "step7 with MPI_Send_init/MPI_Recv_init once, MPI_Startall every step",
       parts(P::Kernel, T::Persistent), "", ""},
      {-1, "neighbor-alltoallv", "nbr-v", "kernel-packed buffers, one MPI_Neighbor_alltoallv per step",
       parts(P::Kernel, T::NeighborAlltoallv), "", ""},
      {-1, "neighbor-alltoallw", "nbr-w", "no packing: one MPI_Neighbor_alltoallw of datatypes on the fields",
       parts(P::Datatype, T::NeighborAlltoallw), "", ""},
      {-1, "ineighbor-overlap", "inbr-overlap", "MPI_Ineighbor_alltoallv, cells that need no halo updated meanwhile",
       parts(P::Kernel, T::INeighborAlltoallv, C::Auto, Overlap::Interior), "", ""},
      {-1, "rma-fence", "put-fence", "MPI_Put into the neighbours' receive windows between MPI_Win_fence",
       parts(P::Kernel, T::RmaFence), "", ""},
      {-1, "rma-pscw", "put-pscw", "MPI_Put in post/start/complete/wait epochs with the neighbours only",
       parts(P::Kernel, T::RmaPscw), "", ""},
      {-1, "shm-window", "shared-memory", "neighbours on the node read from a shared window (x faces packed there); others by message",
       parts(P::Kernel, T::ShmWindow), "", ""},
      {-1, "partitioned", "psend", "MPI 4 partitioned send/receive, one partition per field marked ready when packed",
       parts(P::Kernel, T::Partitioned), "", ""},
      {-1, "mpi-pack", "sendrecv-mpi-pack", "step2 with MPI_Pack/MPI_Unpack of derived datatypes",
       parts(P::MpiPack, T::Sendrecv), "", ""},
      {-1, "mock", "no-mpi", "step7's packing, unpacking and compute, no MPI in the timed loop (the floor)",
       parts(P::Kernel, T::Mock), "", "halos delivered by an untimed exchange"},
  };
  return catalog;
}

namespace {

bool is_part(const std::string& item) { return item.find('=') != std::string::npos; }

// Compositions live as long as the program: results point at them.
const StrategyInfo& composed(const Parts& p, const std::string& text) {
  for (const StrategyInfo& s : strategy_catalog())
    if (s.parts == p) return s;
  static std::deque<StrategyInfo> made;
  for (const StrategyInfo& s : made)
    if (s.parts == p) return s;
  const std::string reason = invalid_reason(p);
  if (!reason.empty()) throw UsageError("strategy " + text + " is not a valid combination: " + reason);
  StrategyInfo info;
  info.id = "custom" + std::to_string(made.size() + 1);
  info.alias = text;
  info.summary = "composed: " + composition(p);
  info.parts = p;
  made.push_back(info);
  return made.back();
}

}  // namespace

std::vector<const StrategyInfo*> select_strategies(const std::vector<std::string>& names) {
  std::vector<const StrategyInfo*> chosen;
  std::set<const StrategyInfo*> seen;
  auto add = [&](const StrategyInfo& s) {
    if (seen.insert(&s).second) chosen.push_back(&s);
  };
  for (size_t i = 0; i < names.size();) {
    const std::string& name = names[i];
    if (is_part(name)) {  // KEY=VALUE items up to a non-part or a repeated key
      std::string text;
      std::set<std::string> keys;
      for (; i < names.size() && is_part(names[i]); ++i) {
        if (!keys.insert(names[i].substr(0, names[i].find('='))).second) break;
        text += (text.empty() ? "" : ",") + names[i];
      }
      add(composed(parse_parts(text), text));
      continue;
    }
    ++i;
    if (name == "all") {
      for (const auto& s : strategy_catalog()) add(s);
      continue;
    }
    const StrategyInfo* found = nullptr;
    for (const auto& s : strategy_catalog())
      if (name == s.id || name == s.alias || (s.number >= 0 && name == std::to_string(s.number))) found = &s;
    if (!found) {
      std::string known;
      for (const auto& s : strategy_catalog()) known += (known.empty() ? "" : ", ") + s.id;
      throw UsageError("unknown strategy '" + name + "' (known: " + known +
                       ", all, or a composition such as pack=kernel,transport=persistent)");
    }
    add(*found);
  }
  return chosen;
}

bool chosen_by_all(const StrategyInfo& info, const std::vector<std::string>& names) {
  std::vector<std::string> named;
  for (const auto& n : names)
    if (n != "all") named.push_back(n);
  for (const StrategyInfo* s : select_strategies(named))
    if (s == &info) return false;
  return named.size() < names.size();
}

std::string strategy_listing() {
  std::ostringstream out;
  out << "id                  alias              what it does\n";
  for (const auto& s : strategy_catalog()) {
    std::string id = s.id, alias = s.alias;
    id.resize(19, ' ');
    alias.resize(18, ' ');
    out << id << " " << alias << " " << s.summary;
    if (s.host_only()) out << " [host only]";
    if (!s.host_note.empty()) out << " [" << s.host_note << "]";
    const std::string missing = unavailable_reason(s.parts);
    if (!missing.empty()) out << " [unavailable: " << missing << "]";
    out << "\n" << std::string(39, ' ') << composition(s.parts) << "\n";
  }
  out << "\nCompose your own with --strategy KEY=VALUE,...; keys and values:\n";
  const std::map<std::string, std::string> notes{
      {"buffers", "(kernel packing: MPI on host copies, or on the backend's buffers)"},
      {"schedule", "(default: what the transport needs)"},
      {"compute", "(auto: as --compute)"}};
  for (const auto& [key, names] : part_names()) {
    std::string line = "  " + key;
    line.resize(14, ' ');
    bool first = true;  // of its line: lines wrap under the first value
    for (const std::string& n : names) {
      if (!first && line.size() + 1 + n.size() > 100) {
        out << line << "\n";
        line = std::string(14, ' ');
        first = true;
      }
      line += (first ? "" : " ") + n;
      first = false;
    }
    if (notes.count(key)) line += "  " + notes.at(key);
    out << line << "\n";
  }
  return out.str();
}

Json parts_json(const Parts& p) {
  Json j = Json::object();
  j["pack"] = name(p.packing);
  j["buffers"] = name(p.buffers);
  j["transport"] = name(p.transport);
  j["schedule"] = name(p.schedule);
  j["completion"] = name(p.completion);
  j["overlap"] = name(p.overlap);
  j["compute"] = name(p.compute);
  return j;
}

namespace {

Json or_null(const std::string& text) { return text.empty() ? Json() : Json(text); }

Json traits_json(const PartTraits& t) {
  Json j = Json::object();
  Json dirs = Json::object();
  for (int d = 0; d < 3; ++d) {
    Json dj = Json::object();
    dj["messages_per_sign"] = t.dir[d].messages_per_sign;
    dj["fields_per_message"] = t.dir[d].fields_per_message;
    dj["datatype"] = t.dir[d].datatype;
    dj["packed"] = or_null(t.dir[d].packed);
    dirs[std::string(1, "xyz"[d])] = dj;
  }
  j["directions"] = dirs;
  Json compute = Json::object(), passes = Json::object(), node_barriers = Json::object();
  for (int m = 0; m < 3; ++m) {
    const ComputeTraits& c = t.by_compute[m];
    const char* run = compute_name(kRunComputes[m]);
    compute[run] = name(c.compute);
    passes[run] = kernel_passes(c.compute);
    node_barriers[run] = c.node_barriers;
  }
  j["compute"] = compute;
  j["kernel_passes"] = passes;
  j["overlaps"] = t.overlaps;
  j["barriers"] = t.barriers;
  j["node_barriers"] = node_barriers;
  j["fences"] = t.fences;
  j["mpi"] = t.mpi;
  j["on_node"] = t.on_node;
  j["self"] = t.self;
  j["edges_and_corners"] = t.diagonals;
  return j;
}

}  // namespace

Json catalog_json(const std::vector<const StrategyInfo*>& rows) {
  Json doc = Json::object();
  doc["schema"] = "checkmpi.catalog/2";
  Json defaults = Json::object();  // what --compute auto resolves to on each backend
  for (BackendKind k : {BackendKind::Host, BackendKind::Cuda}) defaults[backend_name(k)] = name(default_compute(k));
  doc["default_compute"] = defaults;
  Json list = Json::array();
  for (const StrategyInfo* s : rows) list.push(catalog_row_json(*s));
  doc["strategies"] = list;
  return doc;
}

Json catalog_row_json(const StrategyInfo& s) {
  Json j = Json::object();
  j["id"] = s.id;
  j["alias"] = s.alias;
  j["number"] = s.number >= 0 ? Json(s.number) : Json();
  j["description"] = s.summary;
  j["composition"] = composition(s.parts);
  j["parts"] = parts_json(s.parts);
  j["host_only"] = or_null(host_only_reason(s.parts));
  j["unavailable"] = or_null(unavailable_reason(s.parts));
  j["traits"] = traits_json(part_traits(s.parts));
  return j;
}

}  // namespace checkmpi
