// One strategy's run: the fields initialised on the chosen backend, the
// routing check (core/routing.hpp), warm-up, the timed loop from CheckMPI's
// initial state with validation and profiles at every check, this rank's
// timers and per-step times. The profile files are left pending in `files`.
// Collective over the decomposition's communicator; OutputError if a profile
// file cannot be written.
#pragma once

#include "core/atomic_file.hpp"
#include "grid/config.hpp"
#include "grid/decomposition.hpp"
#include "halo/backend_choice.hpp"
#include "halo/result.hpp"

namespace checkmpi {

template <class Real>
StrategyRun run_strategy(const StrategyInfo& info, const Decomposition& dec, const HaloConfig& cfg,
                         const BackendChoice& choice, PendingFiles& files);

}  // namespace checkmpi
