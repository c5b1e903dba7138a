// Summary statistics of timing samples.
#pragma once

#include <vector>

#include "core/json.hpp"

namespace checkmpi::p2p {

struct Stats {
  double min = 0, median = 0, mean = 0, max = 0;
};

// Median of an even count is the mean of the two middle values. An empty
// sample gives NaN everywhere (written as null in JSON).
Stats summarize(std::vector<double> values);
double median(std::vector<double> values);

// Every field times `factor` (e.g. 0.5 for half round trips).
Stats scaled(const Stats& s, double factor);

// {"min", "median", "mean", "max"}
Json stats_json(const Stats& s);

}  // namespace checkmpi::p2p
