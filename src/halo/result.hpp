// What one strategy's run produced, as the outputs (table, task log, JSON)
// read it: timer statistics over ranks, the verdict and the traits.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "core/fields.hpp"
#include "core/halo.hpp"
#include "core/json.hpp"
#include "strategies/strategy.hpp"

namespace checkmpi {

struct Stats {
  double min = 0, mean = 0, max = 0;
};

Json stats_json(const Stats& s);

// Minimum, mean and maximum over ranks of each value, in three reductions
// whatever the number of values (each collective costs a round of messages).
std::vector<Stats> over_ranks(const std::vector<double>& v, MPI_Comm comm);

struct StrategyResult {
  const StrategyInfo* info = nullptr;
  bool valid = true;
  std::string error;
  long long steps = 0;
  StepTimers local;         // this rank's timers
  Mismatch mismatch;        // this rank's first wrong cell (count 0: none)
  long long failed_at = 0;  // step at which validation failed on some rank (0: never)
  std::vector<std::pair<std::string, Stats>> timers;  // over ranks, JSON order
  Parts parts;              // compute resolved
  Traits traits;
  std::string mpi_buffers;  // "host", "device" or "staged"
  std::string note;         // what the table should say beside the verdict
  std::size_t bytes_per_step = 0;  // through MPI (traits)
  std::size_t compute_bytes_per_step = 0;

  const Stats& timer(const std::string& name) const;
};

// Fills r.timers from r.local: every timer's statistics over ranks.
void summarise_timers(StrategyResult& r, MPI_Comm comm);

}  // namespace checkmpi
