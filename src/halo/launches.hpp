// Launches of the same run, ranked together (--samples FILE, docs/halo.md
// "Launches"): a launch fixes things no round can vary (where the ranks
// sit, how the MPI library set itself up), so the ranking's top level is
// the launch when several are kept. FILE (schema checkmpi.samples/1) holds
// every launch's per-round step times; each launch reads it, refuses it if
// it is another run's, ranks its launches and its own together and writes
// it back with its own added.
#pragma once

#include <string>
#include <vector>

#include "core/json.hpp"
#include "core/ranking.hpp"
#include "grid/config.hpp"
#include "grid/decomposition.hpp"
#include "halo/backend_choice.hpp"
#include "halo/result.hpp"

namespace checkmpi {

inline constexpr const char* kSamplesSchema = "checkmpi.samples/1";

struct Launch {
  std::string date;                  // when it started (UTC, ISO 8601)
  unsigned long long seed = 0;       // its --seed
  // By strategy, as the run lists them: every rank's step times per round
  // (at most kBootstrapRoundSteps each, evenly spread; empty if it failed),
  // and the sum and count of all its step times (the mean's).
  std::vector<std::vector<std::vector<double>>> rounds;
  std::vector<double> step_sum, step_count;
};

// What must be the same for launches to be one run's: ranks, grid, block,
// precision, direction, synchronisation, backend, compute and the
// strategies (their compositions), in that order.
Json launch_fingerprint(const HaloConfig& cfg, const Decomposition& dec, BackendKind backend,
                        const std::vector<const StrategyInfo*>& chosen);

// Rank 0: the launches FILE holds (none if it does not exist). UsageError,
// one line, if it cannot be read, is not a samples file, or holds another
// run's launches (naming the first difference), or if FILE cannot be
// written back.
std::vector<Launch> read_launches(const std::string& path, const Json& fingerprint);

// Rank 0, after add_run: the earlier launches' samples join each result.
void add_launches(std::vector<StrategyResult>& results, const std::vector<Launch>& earlier);

// Rank 0, after summarise: this launch as FILE keeps it.
Launch this_launch(const std::vector<StrategyResult>& results, const std::string& date, unsigned long long seed);

// The samples file's document: the earlier launches and this one.
Json samples_json(const Json& fingerprint, const std::vector<Launch>& launches);

}  // namespace checkmpi
