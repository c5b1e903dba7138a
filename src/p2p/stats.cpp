#include "p2p/stats.hpp"

#include <algorithm>
#include <limits>
#include <numeric>

namespace checkmpi::p2p {

double median(std::vector<double> v) {
  if (v.empty()) return std::numeric_limits<double>::quiet_NaN();
  const size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<long>(mid), v.end());
  const double upper = v[mid];
  if (v.size() % 2 == 1) return upper;
  const double lower = *std::max_element(v.begin(), v.begin() + static_cast<long>(mid));
  return 0.5 * (lower + upper);
}

Stats summarize(std::vector<double> v) {
  Stats s;
  if (v.empty()) {
    s.min = s.median = s.mean = s.max = std::numeric_limits<double>::quiet_NaN();
    return s;
  }
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  s.min = *lo;
  s.max = *hi;
  s.mean = std::accumulate(v.begin(), v.end(), 0.0) / double(v.size());
  s.median = median(std::move(v));
  return s;
}

Stats scaled(const Stats& s, double factor) {
  return {s.min * factor, s.median * factor, s.mean * factor, s.max * factor};
}

Json stats_json(const Stats& s) {
  Json j = Json::object();
  j["min"] = s.min;
  j["median"] = s.median;
  j["mean"] = s.mean;
  j["max"] = s.max;
  return j;
}

}  // namespace checkmpi::p2p
