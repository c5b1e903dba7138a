// Summary statistics of timing samples: the order statistics of
// core/samples.hpp, with the mean of every timed iteration (OSU's figure).
#pragma once

#include <vector>

#include "core/json.hpp"
#include "core/samples.hpp"

namespace checkmpi::p2p {

using Stats = Distribution;

// Median of an even count is the mean of the two middle values. An empty
// sample gives NaN everywhere (written as null in JSON).
Stats summarize(std::vector<double> values);
double median(std::vector<double> values);

using checkmpi::scaled;

// {"n", "min", "p5", "median", "mean", "p95", "max", "median_ci"}
Json stats_json(const Stats& s);

}  // namespace checkmpi::p2p
