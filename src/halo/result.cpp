#include "halo/result.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

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

std::size_t samples_per_round(int nprocs, long long rounds) {
  const std::size_t run = std::clamp<std::size_t>(kSampleBudget / std::size_t(std::max(nprocs, 1)), 16, 4096);
  return std::max<std::size_t>(run / std::size_t(std::max(rounds, 1LL)), 16);
}

const Stats& StrategyResult::timer(const std::string& name) const {
  for (const auto& t : timers)
    if (t.first == name) return t.second;
  static const Stats none;
  return none;
}

namespace {

// Every rank's samples on rank 0, in rank order.
std::vector<double> gather_samples(const std::vector<double>& mine, MPI_Comm comm) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const int count = int(mine.size());
  std::vector<int> counts(rank == 0 ? size_t(size) : 0), offsets(counts.size());
  MPI_Gather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, comm);
  std::vector<double> all;
  if (rank == 0) {
    long long total = 0;
    for (int r = 0; r < size; ++r) offsets[size_t(r)] = int(total), total += counts[size_t(r)];
    all.resize(size_t(total));
  }
  MPI_Gatherv(mine.data(), count, MPI_DOUBLE, all.data(), counts.data(), offsets.data(), MPI_DOUBLE, 0, comm);
  return all;
}

}  // namespace

void add_run(StrategyResult& into, StrategyRun run, MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  // Every rank ran the same rounds (a failed check stops all of them alike).
  std::vector<std::vector<double>> rounds;
  std::vector<double> all;
  for (const auto& mine : run.round_samples) {
    rounds.push_back(gather_samples(mine, comm));
    all.insert(all.end(), rounds.back().begin(), rounds.back().end());
  }
  double sum = 0;
  MPI_Reduce(&run.step_sum, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, comm);
  int size = 1;
  MPI_Comm_size(comm, &size);
  into.step_count += double(run.steps) * size;
  if (rank == 0) {
    into.repeat_medians.push_back(distribution(all).median);
    into.pooled.insert(into.pooled.end(), all.begin(), all.end());
    into.rounds.push_back(std::move(rounds));
    into.step_sum += sum;
  }
  if (into.runs == 0) {
    into.parts = run.parts;
    into.traits = run.traits;
    into.mpi_buffers = run.mpi_buffers;
    into.note = run.note;
  }
  ++into.runs;
  into.steps += run.steps;
  into.local += run.local;
  into.mismatch = run.mismatch;
  if (!run.valid && into.valid) {
    into.valid = false;
    into.error = into.runs > 1 ? "run " + std::to_string(into.runs) + ": " + run.error : run.error;
    into.failed_at = run.failed_at;
  }
}

void summarise(StrategyResult& r, MPI_Comm comm) {
  const StepTimers& t = r.local;
  const std::pair<const char*, double> values[] = {
      {"loop", t.loop},     {"compute", t.compute},     {"diag", t.diag},           {"comm", t.comm},
      {"x", t.dir[0]},      {"y", t.dir[1]},            {"z", t.dir[2]},            {"pack", t.pack},
      {"unpack", t.unpack}, {"mpi", t.mpi()},           {"pack_x", t.pack_dir[0]},  {"pack_y", t.pack_dir[1]},
      {"pack_z", t.pack_dir[2]}, {"unpack_x", t.unpack_dir[0]}, {"unpack_y", t.unpack_dir[1]},
      {"unpack_z", t.unpack_dir[2]}, {"post", t.post}, {"wait", t.wait}};
  std::vector<double> local;
  for (const auto& value : values) local.push_back(value.second);
  for (int d = 0; d < 3; ++d)  // this rank's payload over its time in that direction (0: no time)
    local.push_back(t.dir[d] > 0 ? double(r.traits.halo_bytes[d]) * double(r.steps) / t.dir[d] : 0.0);
  const std::vector<Stats> stats = over_ranks(local, comm);
  r.timers.clear();
  for (size_t i = 0; i < std::size(values); ++i) r.timers.emplace_back(values[i].first, stats[i]);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (int d = 0; d < 3; ++d) {
    Stats& bw = r.bandwidth[size_t(d)];
    bw = stats[std::size(values) + size_t(d)];
    // Some rank spent no time, or the direction's time is not the messages': no bandwidth (null).
    if (bw.min == 0 || !times_each_direction(r.parts.transport)) bw = Stats{nan, nan, nan};
  }

  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  if (rank != 0) return;
  r.step_time = distribution(r.pooled);  // every launch's, with --samples
  // The kept samples are a subset when steps outnumber the reservoir; the
  // mean is over every step of every rank (and launch).
  const double count = r.step_count + r.earlier_step_count;
  if (count > 0) r.step_time.mean = (r.step_sum + r.earlier_step_sum) / count;
  r.repeat_spread = relative_spread(r.repeat_medians);
  std::vector<double> launched;  // a launch where it failed has no median
  for (const double m : r.launch_medians)
    if (m == m) launched.push_back(m);
  r.launch_spread = relative_spread(launched);
  r.noise.clear();
  if (r.step_time.tail_ratio() > kNoiseTailRatio)
    r.noise.push_back(threshold_crossed("p95/median", r.step_time.tail_ratio(), kNoiseTailRatio, true));
  if (r.step_time.mean_ratio() > kNoiseMeanRatio)
    r.noise.push_back(threshold_crossed("mean/median", r.step_time.mean_ratio(), kNoiseMeanRatio, true));
  if (r.repeat_spread > kNoiseRepeatSpread)
    r.noise.push_back(threshold_crossed("repeat spread", r.repeat_spread, kNoiseRepeatSpread, true, 1, 100, "%"));
  if (r.launch_spread > kNoiseRepeatSpread)
    r.noise.push_back(threshold_crossed("launch spread", r.launch_spread, kNoiseRepeatSpread, true, 1, 100, "%"));
  std::vector<double>().swap(r.pooled);
}

int launch_count(const std::vector<StrategyResult>& results) {
  return results.empty() ? 1 : std::max<int>(1, int(results.front().launches.size()));
}

bool separable(const std::vector<StrategyResult>& results, const RunContext& ctx) {
  return !oversubscribed(ctx, host_threads()) || launch_count(results) > 1;
}

std::vector<int> rank_results(std::vector<StrategyResult>& results, double threshold, std::uint64_t seed,
                              bool separable) {
  std::vector<Nested> samples;
  std::vector<bool> ranked;
  bool launches = false;
  for (const auto& r : results) {  // mock moves no data through MPI: the floor, not an answer
    launches = launches || !r.launches.empty();
    samples.push_back(r.launches.empty() ? r.rounds : r.launches);
    ranked.push_back(r.valid && r.parts.transport != Transport::Mock);
  }
  Ranking rk = rank_strategies(samples, ranked, threshold, seed, kBootstrapReplicates, launches);
  if (!separable) {  // every ranked strategy in the group, by median
    rk.group.clear();
    for (size_t i = 0; i < results.size(); ++i)
      if (!std::isnan(rk.vs[i].ratio)) rk.vs[i].tied = true, rk.group.push_back(int(i));
    std::sort(rk.group.begin(), rk.group.end(),
              [&](int a, int b) { return rk.estimate[size_t(a)].median < rk.estimate[size_t(b)].median; });
  }
  for (size_t i = 0; i < results.size(); ++i) {
    results[i].vs = rk.vs[i];
    if (!ranked[i] || std::isnan(rk.estimate[i].ci_low)) continue;
    results[i].step_time.ci_low = rk.estimate[i].ci_low;
    results[i].step_time.ci_high = rk.estimate[i].ci_high;
  }
  return rk.group;
}

}  // namespace checkmpi
