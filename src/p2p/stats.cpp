#include "p2p/stats.hpp"

#include <utility>

namespace checkmpi::p2p {

Stats summarize(std::vector<double> v) { return distribution(std::move(v)); }

double median(std::vector<double> v) { return distribution(std::move(v)).median; }

Json stats_json(const Stats& s) { return distribution_json(s); }

}  // namespace checkmpi::p2p
