// The strategy table: numbers, ids and aliases users select by.
#include <set>
#include <sstream>

#include "core/errors.hpp"
#include "strategies/strategies.hpp"

namespace checkmpi {

const std::vector<StrategyInfo>& strategy_catalog() {
  static const std::vector<StrategyInfo> catalog{
      {0, "step0", "sendrecv-dtype", "MPI_Sendrecv per field, direction and sign with derived datatypes (18 calls)",
       make_sendrecv_dtype<float>, make_sendrecv_dtype<double>},
      {1, "step1", "sendrecv-packx", "step0, x planes packed by hand per field",
       make_sendrecv_packx<float>, make_sendrecv_packx<double>},
      {2, "step2", "sendrecv-pack", "all fields packed by hand into one buffer per direction and sign (6 calls)",
       make_sendrecv_pack<float>, make_sendrecv_pack<double>},
  };
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
  out << "id      alias             what it does\n";
  for (const auto& s : strategy_catalog()) {
    std::string id = s.id, alias = s.alias;
    id.resize(7, ' ');
    alias.resize(17, ' ');
    out << id << " " << alias << " " << s.summary << "\n";
  }
  return out.str();
}

}  // namespace checkmpi
