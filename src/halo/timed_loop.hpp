// One strategy's run: the routing check (core/routing.hpp), warm-up, the
// timed loop from CheckMPI's initial state with validation and profiles at
// every check, and the timers' statistics over ranks. The profile files are
// left pending in `files`. Collective over the decomposition's communicator;
// OutputError if a profile file cannot be written.
#pragma once

#include "core/atomic_file.hpp"
#include "core/config.hpp"
#include "core/decomposition.hpp"
#include "halo/backend_choice.hpp"
#include "halo/result.hpp"

namespace checkmpi {

template <class Real>
StrategyResult run_strategy(const StrategyInfo& info, const Decomposition& dec, const HaloConfig& cfg,
                            const BackendChoice& choice, PendingFiles& files);

}  // namespace checkmpi
