// Which strategies are fastest, and how sure: medians of nested samples
// (repeats, rounds within a repeat, steps within a round) with a
// hierarchical bootstrap, and the tied group (docs/halo.md, "How checkmpi
// decides"). No MPI: rank 0 ranks what it gathered.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace checkmpi {

// One strategy's samples, [repeat][round][step]. Every strategy ranked
// together has the same repeats and rounds (they ran interleaved, so round
// k of one and round k of another saw the same stretch of the job).
using Nested = std::vector<std::vector<std::vector<double>>>;

struct Estimate {
  double median = 0;              // of every sample
  double ci_low = 0, ci_high = 0; // 95%, hierarchical percentile bootstrap
};

struct VsFastest {
  double ratio = 1;               // median over the fastest's median
  double ci_low = 1, ci_high = 1; // 95%, bootstrap paired by repeat and round
  bool tied = true;               // ci_low <= 1, or ratio - 1 below the threshold
};

struct Ranking {
  std::vector<Estimate> estimate;  // per strategy, as given
  std::vector<VsFastest> vs;       // per strategy
  int fastest = -1;                // lowest median (-1: nothing ranked)
  std::vector<int> group;          // the fastest and those tied with it, by median
};

// Replicates of the bootstrap, and the most steps of one round it resamples
// (a round's steps beyond it are thinned evenly: its CI is then a little
// wide, never narrow).
constexpr int kBootstrapReplicates = 1000;
constexpr std::size_t kBootstrapRoundSteps = 256;

// At most kBootstrapRoundSteps of a round's steps, evenly spread.
std::vector<double> thinned(const std::vector<double>& steps);

// Ranks the strategies whose `ranked` flag is set (the others get NaN).
// Each bootstrap replicate draws repeats with replacement, then rounds
// within each drawn repeat, the same draws for every strategy (paired),
// then each drawn round's steps with replacement, per strategy; its
// statistic is the median of what it drew. The 95% intervals are the
// replicates' 2.5% and 97.5% points, widened about the estimate by
// sqrt(N / (N - 1)) for N rounds in all. `threshold`: the practical
// difference below which a slower median is still tied (0.02: 2%).
// `launches`: the top level is launches (separate processes, --samples).
// Resampling a few of them cannot see how far a launch may fall (three
// launches' percentile interval holds the true median about 3 times in 4),
// so each interval is then at least Student's t interval over the
// launches' medians (the ratio's: over their ratios), in logarithms (a
// launch's factor multiplies its times; never a negative time).
Ranking rank_strategies(const std::vector<Nested>& samples, const std::vector<bool>& ranked, double threshold,
                        std::uint64_t seed, int replicates = kBootstrapReplicates, bool launches = false);

// Student's t 97.5% point for `df` degrees of freedom (df >= 1).
double student_t975(int df);

// The same for one strategy alone: its median and 95% CI.
Estimate bootstrap_median(const Nested& samples, std::uint64_t seed, int replicates = kBootstrapReplicates,
                          bool launches = false);

// splitmix64: the generator the round order and the bootstrap draw from.
inline std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// 0 <= value < n (n far below 2^64: the modulo's bias is negligible).
inline std::size_t draw_below(std::uint64_t& state, std::size_t n) { return std::size_t(splitmix64(state) % n); }

// The order of `n` items in round `round` of repeat `repeat`: a shuffle
// drawn from `seed` (the same on every rank given the same seed).
std::vector<int> round_order(int n, std::uint64_t seed, long long repeat, long long round);

}  // namespace checkmpi
