// The strategy table: numbers, ids and aliases users select by.
#include <set>
#include <sstream>

#include "core/errors.hpp"
#include "strategies/strategies.hpp"

namespace checkmpi {

const std::vector<StrategyInfo>& strategy_catalog() {
#define CHECKMPI_MAKERS(name) make_##name<float>, make_##name<double>
  static const std::vector<StrategyInfo> catalog{
      {0, "step0", "sendrecv-dtype", "MPI_Sendrecv per field, direction and sign with derived datatypes (18 calls)",
       true, "", CHECKMPI_MAKERS(sendrecv_dtype)},
      {1, "step1", "sendrecv-packx", "step0, x planes packed by hand per field", true, "",
       CHECKMPI_MAKERS(sendrecv_packx)},
      {2, "step2", "sendrecv-pack", "all fields packed by hand into one buffer per direction and sign (6 calls)",
       true, "", CHECKMPI_MAKERS(sendrecv_pack)},
      {3, "step3", "kernel-pack", "step2 with kernel packing, MPI on host buffers; two-pass compute", false, "",
       CHECKMPI_MAKERS(kernel_pack)},
      {4, "step4", "kernel-pack-aware", "step3 with the backend's buffers handed to MPI (GPU-aware)", false,
       "same work as step3 on the host backend", CHECKMPI_MAKERS(kernel_pack_aware)},
      {5, "step5", "isend-recv-x", "step4, x with MPI_Isend + MPI_Recv", false, "", CHECKMPI_MAKERS(isend_recv_x)},
      {6, "step6", "isend-recv", "step4 with MPI_Isend + MPI_Recv in every direction", false, "",
       CHECKMPI_MAKERS(isend_recv)},
      {7, "step7", "isend-irecv", "all six messages in flight: Irecv, Isend, one Waitall", false, "",
       CHECKMPI_MAKERS(isend_irecv)},
      {8, "step8", "overlap", "step7, interior copied while messages fly; halos unpacked into the copy", false, "",
       CHECKMPI_MAKERS(overlap)},
      {9, "step9", "overlap-async", "step8 with per-direction queues; each message unpacked as it arrives", false,
       "", CHECKMPI_MAKERS(overlap_async)},
      {10, "step10", "overlap-masked", "double buffer: inner cells updated while messages fly, then the border",
       false, "", CHECKMPI_MAKERS(overlap_masked)},
  };
#undef CHECKMPI_MAKERS
  return catalog;
}

std::vector<const StrategyInfo*> select_strategies(const std::vector<std::string>& names) {
  std::vector<const StrategyInfo*> chosen;
  std::set<int> seen;
  auto add = [&](const StrategyInfo& s) {
    if (seen.insert(s.number).second) chosen.push_back(&s);
  };
  for (const auto& name : names) {
    if (name == "all") {
      for (const auto& s : strategy_catalog()) add(s);
      continue;
    }
    const StrategyInfo* found = nullptr;
    for (const auto& s : strategy_catalog())
      if (name == s.id || name == s.alias || name == std::to_string(s.number)) found = &s;
    if (!found) {
      std::string known;
      for (const auto& s : strategy_catalog()) known += (known.empty() ? "" : ", ") + s.id;
      throw UsageError("unknown strategy '" + name + "' (known: " + known + ", all)");
    }
    add(*found);
  }
  return chosen;
}

std::string strategy_listing() {
  std::ostringstream out;
  out << "id      alias              what it does\n";
  for (const auto& s : strategy_catalog()) {
    std::string id = s.id, alias = s.alias;
    id.resize(7, ' ');
    alias.resize(18, ' ');
    out << id << " " << alias << " " << s.summary;
    if (s.host_only) out << " [host only]";
    if (!s.host_note.empty()) out << " [" << s.host_note << "]";
    out << "\n";
  }
  return out.str();
}

}  // namespace checkmpi
