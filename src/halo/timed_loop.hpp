// The rounds of a run: the fields of this rank, kept on the chosen backend
// for the whole job, and one round of one strategy on them — a fresh
// strategy set up, the routing check (in a repeat's first round), warm-up,
// then the timed steps first+1..last from the exact state after step
// `first`, with validation and profiles at every check and at the round's
// end. Collective over the decomposition's communicator; OutputError if a
// profile file cannot be written.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/atomic_file.hpp"
#include "grid/config.hpp"
#include "grid/decomposition.hpp"
#include "grid/profiles.hpp"
#include "halo/backend_choice.hpp"
#include "halo/result.hpp"

namespace checkmpi {

// The rounds' split of the timed loop: round k (0-based) of `rounds` runs
// steps round_start(k)+1 .. round_start(k+1).
long long round_start(long long itfin, long long rounds, long long k);

class RoundRunner {
 public:
  virtual ~RoundRunner() = default;
  // Adds steps first+1..last of `info` to `run` (its first round when
  // `first_round`: routing check, parts and traits recorded). Leaves `run`
  // invalid, with its error, if the routing check or validation fails.
  virtual void run(const StrategyInfo& info, long long first, long long last, bool first_round, StrategyRun& run,
                   ProfileFiles& profiles) = 0;
  // The compute probe's turn in a round (halo/probes.hpp) on this launch's
  // fields: `steps` steps of each kernel, every rank at once.
  virtual std::vector<std::pair<std::string, double>> probe(long long steps, long long round) = 0;
};

// Allocates and first-touches the fields on the backend (collective only
// through what the backend does). `hostnames` (by rank, the run context's)
// name the neighbours on other nodes in what the watchdog prints.
std::unique_ptr<RoundRunner> make_round_runner(const Decomposition& dec, const HaloConfig& cfg,
                                               const BackendChoice& choice,
                                               const std::vector<std::string>& hostnames = {});

}  // namespace checkmpi
