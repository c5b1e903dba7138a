// Per-iteration times kept with bounded memory, and their statistics: the
// order statistics both tools report (median, percentiles, a confidence
// interval of the median) and the noise thresholds that flag a result.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/json.hpp"

namespace checkmpi {

// Noise thresholds (docs/halo.md, "Statistics"): a result is flagged noisy
// when its p95 exceeds kNoiseTailRatio times its median, when its mean does
// (kNoiseMeanRatio: rare but long stalls, e.g. another process taking the
// core for a time slice, that leave the p95 alone), when its repeats'
// medians spread by more than kNoiseRepeatSpread of their median, and a fit
// when its R^2 is below kNoiseFitR2.
constexpr double kNoiseTailRatio = 1.5;
constexpr double kNoiseMeanRatio = 1.5;
constexpr double kNoiseRepeatSpread = 0.10;
constexpr double kNoiseFitR2 = 0.9;

// At most `capacity` values: every value while there are fewer, then a
// uniform random subset of all values seen (Algorithm R, fixed seed, so that
// ranks that see as many values keep the same positions). add() neither
// allocates nor calls anything but a few integer operations.
class Reservoir {
 public:
  explicit Reservoir(std::size_t capacity);
  void add(double value) {
    ++seen_;
    if (values_.size() < capacity_) {
      values_.push_back(value);  // within the capacity reserved at construction
      return;
    }
    const std::uint64_t j = next() % std::uint64_t(seen_);
    if (j < capacity_) values_[std::size_t(j)] = value;
  }
  const std::vector<double>& values() const { return values_; }
  std::vector<double>& values() { return values_; }
  long long seen() const { return seen_; }
  std::size_t capacity() const { return capacity_; }

 private:
  std::uint64_t next() {  // splitmix64
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  std::size_t capacity_;
  std::vector<double> values_;
  long long seen_ = 0;
  std::uint64_t state_ = 0x2545F4914F6CDD1DULL;
};

// Order statistics of a sample. Percentiles interpolate linearly between
// order statistics (numpy's default). median_ci is the distribution-free 95%
// confidence interval of the median: order statistics j and n + 1 - j with j
// the largest rank such that a Binomial(n, 1/2) variable is below j with
// probability at most 2.5%; with fewer than 6 values there is none (NaN).
// An empty sample gives NaN everywhere (null in JSON).
struct Distribution {
  long long n = 0;
  double min = 0, p5 = 0, median = 0, mean = 0, p95 = 0, max = 0;
  double ci_low = 0, ci_high = 0;
  double tail_ratio() const { return p95 / median; }
  double mean_ratio() const { return mean / median; }
};

// Sorts `values`. `mean` is their mean unless the caller knows a better one
// (e.g. from all iterations when `values` is a reservoir).
Distribution distribution(std::vector<double> values);

// 1-based rank j of the lower confidence bound above, 0 when there is none.
long long median_ci_rank(long long n);

// Linear interpolation at quantile q of sorted values.
double quantile_sorted(const std::vector<double>& sorted, double q);

// Every field times `factor`.
Distribution scaled(const Distribution& d, double factor);

// {"n", "min", "p5", "median", "mean", "p95", "max", "median_ci": [lo, hi] or null}
Json distribution_json(const Distribution& d);

// {"p95_over_median", "mean_over_median", "repeat_spread", "fit_r2"}: the thresholds above, for the JSON.
Json noise_thresholds_json();

// A crossed noise threshold as a warning reads it, e.g. "p95/median 1.503
// above the threshold 1.5" or "R^2 0.8123 below the threshold 0.9": the
// value with as many decimals (at least `digits`, at most 6) as it takes to
// read differently from the threshold; both times `scale`, followed by `unit`
// (e.g. 100 and "%" for a spread).
std::string threshold_crossed(const std::string& what, double value, double limit, bool above, int digits = 2,
                              double scale = 1.0, const char* unit = "");

// (max - min) / median of the values (per-repeat medians); NaN with fewer than two.
double relative_spread(std::vector<double> values);

}  // namespace checkmpi
