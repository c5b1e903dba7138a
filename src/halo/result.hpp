// What one strategy's runs produced, as the outputs (table, task log, JSON)
// read it: timer statistics over ranks, the per-step time distribution over
// ranks, steps and repeats, the verdict and the traits.
#pragma once

#include <mpi.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/context.hpp"
#include "core/json.hpp"
#include "core/ranking.hpp"
#include "core/samples.hpp"
#include "grid/fields.hpp"
#include "grid/planes.hpp"
#include "strategies/strategy.hpp"

namespace checkmpi {

struct Stats {
  double min = 0, mean = 0, max = 0;
};

Json stats_json(const Stats& s);

// Minimum, mean and maximum over ranks of each value, in three reductions
// whatever the number of values (each collective costs a round of messages).
std::vector<Stats> over_ranks(const std::vector<double>& v, MPI_Comm comm);

// Per-step times each rank keeps in one round (a reservoir beyond it): at
// most kSampleBudget gathered on rank 0 per run (all its rounds), at least 16
// and at most 4096 per rank and run.
constexpr std::size_t kSampleBudget = std::size_t(1) << 18;
std::size_t samples_per_round(int nprocs, long long rounds);

// One run of one strategy on this rank.
struct StrategyRun {
  bool valid = true;
  std::string error;
  long long steps = 0;
  StepTimers local;         // this rank's timers
  Mismatch mismatch;        // this rank's first wrong cell (count 0: none)
  long long failed_at = 0;  // step at which validation failed on some rank (0: never)
  std::vector<std::vector<double>> round_samples;  // per round: seconds per step, diagnostics excluded (a reservoir)
  double step_sum = 0;      // of every step, not only the kept ones
  Parts parts;              // compute resolved
  Traits traits;
  std::string mpi_buffers;  // "host", "device" or "staged"
  std::string note;         // what the table should say beside the verdict
};

// Everything known of a strategy after all its runs (--repeat).
struct StrategyResult {
  const StrategyInfo* info = nullptr;
  int runs = 0;
  bool valid = true;
  std::string error;        // the first failing run's
  long long steps = 0;      // over all runs
  StepTimers local;         // this rank's timers, summed over runs
  Mismatch mismatch;        // of the last run
  long long failed_at = 0;
  Parts parts;
  Traits traits;
  std::string mpi_buffers;
  std::string note;
  // Rank 0 only, filled as runs are added:
  std::vector<double> pooled;          // every rank's kept step times, all runs
  double step_sum = 0;                 // all ranks' step times, all runs
  std::vector<double> repeat_medians;  // median step time of each run
  Nested rounds;                       // every rank's kept step times, [run][round][step]
  double step_count = 0;               // all ranks' steps, all runs (the mean's denominator)
  // With --samples (add_launches): every launch's rounds, [launch][round][step],
  // this one last (its runs' rounds together); the earlier ones' step-time
  // sum and count; each launch's median.
  Nested launches;
  double earlier_step_sum = 0, earlier_step_count = 0;
  std::vector<double> launch_medians;
  // Filled by summarise():
  std::vector<std::pair<std::string, Stats>> timers;  // over ranks, JSON order
  Distribution step_time;              // rank 0: over ranks, steps and runs
  double repeat_spread = 0;            // rank 0: NaN with one run
  double launch_spread = 0;            // rank 0: NaN with one launch
  std::array<Stats, 3> bandwidth{};    // per direction: payload over that direction's time, B/s
  std::vector<std::string> noise;      // rank 0: why the result is flagged noisy
  VsFastest vs;                        // rank 0, by rank_results (ratio NaN: not ranked)

  const Stats& timer(const std::string& name) const;
};

// Collective: adds a run to `into` (its samples gathered on rank 0).
void add_run(StrategyResult& into, StrategyRun run, MPI_Comm comm);

// Collective: timer statistics over ranks, per-direction bandwidth, and on
// rank 0 the step-time distribution and the noise verdict.
void summarise(StrategyResult& r, MPI_Comm comm);

// Launches the ranking covers (1 without --samples).
int launch_count(const std::vector<StrategyResult>& results);

// Whether the ranking may separate strategies: not in one oversubscribed
// launch, which cannot see how the placement of ranks on CPUs, fixed for a
// launch, changes each strategy; with two launches or more their spread is
// in the intervals.
bool separable(const std::vector<StrategyResult>& results, const RunContext& ctx);

// Rank 0, after summarise: the valid results ranked (core/ranking.hpp), mock
// left out (its exchange is untimed: the floor, not an answer); each
// step_time's median CI becomes the hierarchical bootstrap's. Returns the
// fastest group's indices, fastest first. Not `separable` (an oversubscribed
// run: how the scheduler places ranks on CPUs is fixed for a launch and
// changes each strategy differently, which one launch cannot see): every
// ranked strategy is tied, whatever its ratio's interval.
std::vector<int> rank_results(std::vector<StrategyResult>& results, double threshold, std::uint64_t seed,
                              bool separable);

}  // namespace checkmpi
