#include "core/ranking.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "core/samples.hpp"

namespace checkmpi {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Median as quantile_sorted(0.5) computes it, of `v` reordered in place.
double median_of(std::vector<double>& v) {
  if (v.empty()) return kNaN;
  const std::size_t mid = (v.size() - 1) / 2;
  std::nth_element(v.begin(), v.begin() + std::ptrdiff_t(mid), v.end());
  const double lo = v[mid];
  if (v.size() % 2 == 1) return lo;
  return lo + (*std::min_element(v.begin() + std::ptrdiff_t(mid) + 1, v.end()) - lo) / 2;
}

double all_median(const Nested& s) {
  std::vector<double> all;
  for (const auto& repeat : s)
    for (const auto& round : repeat) all.insert(all.end(), round.begin(), round.end());
  return median_of(all);
}

// Each top-level unit's median (NaN where it has no samples).
std::vector<double> unit_medians(const Nested& s) {
  std::vector<double> out;
  for (const auto& unit : s) out.push_back(all_median(Nested{unit}));
  return out;
}

// Student's t 95% interval of the mean of the finite values (in logarithms
// if `logs`), or {NaN, NaN} below two of them.
std::pair<double, double> t_interval(std::vector<double> v, bool logs) {
  v.erase(std::remove_if(v.begin(), v.end(), [](double x) { return !std::isfinite(x) || x <= 0; }), v.end());
  if (v.size() < 2) return {kNaN, kNaN};
  if (logs)
    for (double& x : v) x = std::log(x);
  const double n = double(v.size());
  const double mean = std::accumulate(v.begin(), v.end(), 0.0) / n;
  double ss = 0;
  for (const double x : v) ss += (x - mean) * (x - mean);
  const double half = student_t975(int(v.size()) - 1) * std::sqrt(ss / (n - 1) / n);
  if (logs) return {std::exp(mean - half), std::exp(mean + half)};
  return {mean - half, mean + half};
}

// [lo, hi] grown to hold `t` (when it is known).
void hull(double& lo, double& hi, const std::pair<double, double>& t) {
  if (!std::isfinite(t.first)) return;
  lo = std::min(lo, t.first);
  hi = std::max(hi, t.second);
}

// 2.5% and 97.5% points of the replicates, their distances from `centre`
// times `widen`.
std::pair<double, double> percentile_ci(std::vector<double> replicates, double centre, double widen) {
  replicates.erase(std::remove_if(replicates.begin(), replicates.end(), [](double v) { return !(v == v); }),
                   replicates.end());
  if (replicates.empty()) return {kNaN, kNaN};
  std::sort(replicates.begin(), replicates.end());
  const double lo = quantile_sorted(replicates, 0.025), hi = quantile_sorted(replicates, 0.975);
  return {centre - (centre - std::min(lo, centre)) * widen, centre + (std::max(hi, centre) - centre) * widen};
}

}  // namespace

std::vector<double> thinned(const std::vector<double>& steps) {
  if (steps.size() <= kBootstrapRoundSteps) return steps;
  std::vector<double> kept(kBootstrapRoundSteps);
  for (std::size_t i = 0; i < kept.size(); ++i) kept[i] = steps[i * steps.size() / kept.size()];
  return kept;
}

double student_t975(int df) {
  static const double table[] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
                                 2.201,  2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
                                 2.080,  2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042};
  if (df < 1) return kNaN;
  if (df <= 30) return table[df - 1];
  return 1.96 + 2.5 / df;  // within 0.002 of the exact value
}

std::vector<int> round_order(int n, std::uint64_t seed, long long repeat, long long round) {
  std::vector<int> order(std::size_t(std::max(n, 0)));
  std::iota(order.begin(), order.end(), 0);
  std::uint64_t state = seed ^ (0x9E3779B97F4A7C15ULL * std::uint64_t(repeat + 1)) ^
                        (0xD1B54A32D192ED03ULL * std::uint64_t(round + 1));
  for (std::size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[draw_below(state, i)]);
  return order;
}

Ranking rank_strategies(const std::vector<Nested>& samples, const std::vector<bool>& ranked, double threshold,
                        std::uint64_t seed, int replicates, bool launches) {
  const std::size_t n = samples.size();
  Ranking out;
  out.estimate.assign(n, Estimate{kNaN, kNaN, kNaN});
  out.vs.assign(n, VsFastest{kNaN, kNaN, kNaN, false});
  std::vector<std::size_t> which;  // ranked strategies with samples
  for (std::size_t s = 0; s < n; ++s)
    if (ranked[s] && !std::isnan(all_median(samples[s]))) which.push_back(s);
  if (which.empty()) return out;

  // The structure (repeats, rounds per repeat) is the first ranked strategy's.
  const Nested& shape = samples[which.front()];
  std::vector<Nested> thin(n);
  for (std::size_t s : which) {
    thin[s].resize(shape.size());
    for (std::size_t r = 0; r < shape.size() && r < samples[s].size(); ++r)
      for (const auto& round : samples[s][r]) thin[s][r].push_back(thinned(round));
  }
  std::vector<std::vector<double>> medians(n);
  std::uint64_t state = seed ^ 0xA0761D6478BD642FULL;
  std::vector<std::pair<std::size_t, std::size_t>> drawn;  // (repeat, round)
  std::vector<double> pool;
  for (int b = 0; b < replicates; ++b) {
    drawn.clear();
    for (std::size_t i = 0; i < shape.size(); ++i) {
      const std::size_t r = draw_below(state, shape.size());
      for (std::size_t j = 0; j < shape[r].size(); ++j) drawn.emplace_back(r, draw_below(state, shape[r].size()));
    }
    for (std::size_t s : which) {
      pool.clear();
      for (const auto& [r, k] : drawn) {
        if (r >= thin[s].size() || k >= thin[s][r].size()) continue;
        const std::vector<double>& steps = thin[s][r][k];
        for (std::size_t i = 0; i < steps.size(); ++i) pool.push_back(steps[draw_below(state, steps.size())]);
      }
      medians[s].push_back(median_of(pool));
    }
  }

  // Resampling N rounds underestimates their variance by (N - 1) / N: the
  // intervals are widened by the square root of its inverse.
  std::size_t rounds = 0;
  for (const auto& repeat : shape) rounds += repeat.size();
  const double widen = rounds > 1 ? std::sqrt(double(rounds) / double(rounds - 1)) : 1.0;
  for (std::size_t s : which) {
    const double median = all_median(samples[s]);
    auto [lo, hi] = percentile_ci(medians[s], median, widen);
    if (launches) hull(lo, hi, t_interval(unit_medians(samples[s]), true));
    out.estimate[s] = Estimate{median, lo, hi};
  }
  std::size_t best = which.front();
  for (std::size_t s : which)
    if (out.estimate[s].median < out.estimate[best].median) best = s;
  out.fastest = int(best);
  for (std::size_t s : which) {
    std::vector<double> ratio(medians[s].size());
    for (std::size_t b = 0; b < ratio.size(); ++b) ratio[b] = medians[s][b] / medians[best][b];
    VsFastest& v = out.vs[s];
    v.ratio = out.estimate[s].median / out.estimate[best].median;
    auto [lo, hi] = percentile_ci(ratio, v.ratio, widen);
    if (launches) {
      const std::vector<double> mine = unit_medians(samples[s]), theirs = unit_medians(samples[best]);
      std::vector<double> by_launch;
      for (std::size_t l = 0; l < mine.size() && l < theirs.size(); ++l) by_launch.push_back(mine[l] / theirs[l]);
      hull(lo, hi, t_interval(by_launch, true));
    }
    v.ci_low = s == best ? 1.0 : lo;
    v.ci_high = s == best ? 1.0 : hi;
    v.tied = s == best || !(v.ci_low > 1.0) || v.ratio - 1.0 < threshold;
    if (v.tied) out.group.push_back(int(s));
  }
  std::sort(out.group.begin(), out.group.end(),
            [&](int a, int b) { return out.estimate[size_t(a)].median < out.estimate[size_t(b)].median; });
  return out;
}

Estimate bootstrap_median(const Nested& samples, std::uint64_t seed, int replicates, bool launches) {
  return rank_strategies({samples}, {true}, 0.0, seed, replicates, launches).estimate.front();
}

}  // namespace checkmpi
