// One strategy's run: fields initialised on the chosen backend, warm-up, the
// timed loop with validation and profiles at every check, this rank's timers
// and per-step times. Collective over the decomposition's communicator.
#pragma once

#include "core/config.hpp"
#include "core/decomposition.hpp"
#include "halo/backend_choice.hpp"
#include "halo/result.hpp"

namespace checkmpi {

template <class Real>
StrategyRun run_strategy(const StrategyInfo& info, const Decomposition& dec, const HaloConfig& cfg,
                         const BackendChoice& choice);

}  // namespace checkmpi
