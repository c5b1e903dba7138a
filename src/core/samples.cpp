#include "core/samples.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>

namespace checkmpi {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

}  // namespace

Reservoir::Reservoir(std::size_t capacity) : capacity_(std::max<std::size_t>(capacity, 1)) {
  values_.reserve(capacity_);
}

long long median_ci_rank(long long n) {
  // P(B <= k) for B ~ Binomial(n, 1/2), summed in log space; the largest j
  // with P(B <= j - 1) <= 0.025. Below ten standard deviations under the
  // mean the terms add less than 1e-20, so the sum starts there.
  const double log_half_n = double(n) * std::log(0.5);
  const double log_n1 = std::lgamma(double(n) + 1.0);
  const long long first = std::max(0LL, static_cast<long long>(double(n) / 2 - 5 * std::sqrt(double(n))));
  double cdf = 0;
  long long j = first;
  for (long long k = first; k <= n / 2; ++k) {
    cdf += std::exp(log_n1 - std::lgamma(double(k) + 1.0) - std::lgamma(double(n - k) + 1.0) + log_half_n);
    if (cdf > 0.025) break;
    j = k + 1;
  }
  return j;
}

double quantile_sorted(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return kNaN;
  const double at = q * double(sorted.size() - 1);
  const std::size_t lo = std::size_t(std::floor(at));
  const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (at - double(lo)) * (sorted[hi] - sorted[lo]);
}

Distribution distribution(std::vector<double> values) {
  Distribution d;
  d.n = static_cast<long long>(values.size());
  if (values.empty()) {
    d.min = d.p5 = d.median = d.mean = d.p95 = d.max = d.ci_low = d.ci_high = kNaN;
    return d;
  }
  std::sort(values.begin(), values.end());
  d.min = values.front();
  d.max = values.back();
  d.p5 = quantile_sorted(values, 0.05);
  d.median = quantile_sorted(values, 0.5);
  d.p95 = quantile_sorted(values, 0.95);
  d.mean = std::accumulate(values.begin(), values.end(), 0.0) / double(values.size());
  const long long j = median_ci_rank(d.n);
  d.ci_low = j > 0 ? values[std::size_t(j - 1)] : kNaN;
  d.ci_high = j > 0 ? values[std::size_t(d.n - j)] : kNaN;
  return d;
}

Distribution scaled(const Distribution& d, double f) {
  Distribution s = d;
  s.min *= f, s.p5 *= f, s.median *= f, s.mean *= f, s.p95 *= f, s.max *= f, s.ci_low *= f, s.ci_high *= f;
  return s;
}

Json distribution_json(const Distribution& d) {
  Json j = Json::object();
  j["n"] = d.n;
  j["min"] = d.min;
  j["p5"] = d.p5;
  j["median"] = d.median;
  j["mean"] = d.mean;
  j["p95"] = d.p95;
  j["max"] = d.max;
  if (std::isfinite(d.ci_low) && std::isfinite(d.ci_high)) {
    Json ci = Json::array();
    ci.push(d.ci_low);
    ci.push(d.ci_high);
    j["median_ci"] = ci;
  } else {
    j["median_ci"] = Json();
  }
  return j;
}

Json noise_thresholds_json() {
  Json j = Json::object();
  j["p95_over_median"] = kNoiseTailRatio;
  j["mean_over_median"] = kNoiseMeanRatio;
  j["repeat_spread"] = kNoiseRepeatSpread;
  j["fit_r2"] = kNoiseFitR2;
  return j;
}

std::string threshold_crossed(const std::string& what, double value, double limit, bool above, int digits,
                              double scale, const char* unit) {
  const auto fixed = [](double v, int d) {
    char text[64];
    std::snprintf(text, sizeof text, "%.*f", d, v);
    return std::string(text);
  };
  while (digits < 6 && fixed(value * scale, digits) == fixed(limit * scale, digits)) ++digits;
  char bound[64];
  std::snprintf(bound, sizeof bound, "%g", limit * scale);
  return what + " " + fixed(value * scale, digits) + unit + (above ? " above" : " below") + " the threshold " +
         bound + unit;
}

double relative_spread(std::vector<double> values) {
  if (values.size() < 2) return kNaN;
  const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
  const double spread = *hi - *lo;
  std::sort(values.begin(), values.end());
  return spread / quantile_sorted(values, 0.5);
}

}  // namespace checkmpi
