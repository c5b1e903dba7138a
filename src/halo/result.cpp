#include "halo/result.hpp"

namespace checkmpi {

Json stats_json(const Stats& s) {
  Json j = Json::object();
  j["min"] = s.min;
  j["mean"] = s.mean;
  j["max"] = s.max;
  return j;
}

std::vector<Stats> over_ranks(const std::vector<double>& v, MPI_Comm comm) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  const int n = int(v.size());
  std::vector<double> lo(v.size()), hi(v.size()), sum(v.size());
  MPI_Allreduce(v.data(), lo.data(), n, MPI_DOUBLE, MPI_MIN, comm);
  MPI_Allreduce(v.data(), hi.data(), n, MPI_DOUBLE, MPI_MAX, comm);
  MPI_Allreduce(v.data(), sum.data(), n, MPI_DOUBLE, MPI_SUM, comm);
  std::vector<Stats> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) out[i] = Stats{lo[i], sum[i] / size, hi[i]};
  return out;
}

const Stats& StrategyResult::timer(const std::string& name) const {
  for (const auto& t : timers)
    if (t.first == name) return t.second;
  static const Stats none;
  return none;
}

void summarise_timers(StrategyResult& r, MPI_Comm comm) {
  const StepTimers& t = r.local;
  const std::pair<const char*, double> values[] = {
      {"loop", t.loop},     {"compute", t.compute},     {"diag", t.diag},           {"comm", t.comm},
      {"x", t.dir[0]},      {"y", t.dir[1]},            {"z", t.dir[2]},            {"pack", t.pack},
      {"unpack", t.unpack}, {"mpi", t.mpi()},           {"pack_x", t.pack_dir[0]},  {"pack_y", t.pack_dir[1]},
      {"pack_z", t.pack_dir[2]}, {"unpack_x", t.unpack_dir[0]}, {"unpack_y", t.unpack_dir[1]},
      {"unpack_z", t.unpack_dir[2]}};
  std::vector<double> local;
  for (const auto& value : values) local.push_back(value.second);
  const std::vector<Stats> stats = over_ranks(local, comm);
  r.timers.clear();
  for (size_t i = 0; i < stats.size(); ++i) r.timers.emplace_back(values[i].first, stats[i]);
}

}  // namespace checkmpi
