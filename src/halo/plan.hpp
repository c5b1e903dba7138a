// --plan: what a run with these options would be, worked out by the same
// functions the run uses, for any number of ranks, without running it: the
// one home of every derived fact the Python layer needs before or without a
// run (decomposition, block, plane sizes, message sizes, memory).
#pragma once

#include <vector>

#include "core/cli.hpp"
#include "core/json.hpp"
#include "grid/config.hpp"
#include "halo/backend_choice.hpp"

namespace checkmpi {

// The ranks to plan for: --np, else the grid's product where proc_x, proc_y
// and proc_z are all set, else --default-np. UsageError if none says, or
// if --np and the grid disagree.
int plan_ranks(const CommandLine& cli, const HaloConfig& cfg);

// The document of schema checkmpi.plan/1 (schemas/checkmpi.plan-1.schema.json)
// for `cfg` on `nranks` ranks with the strategies `chosen` (those this
// backend cannot run already moved to `skipped`); `cfg` has its sizes
// resolved and its compute resolved for `backend`. Throws UsageError where
// the run would refuse the same options.
Json plan_json(const HaloConfig& cfg, int nranks, const BackendChoice& backend,
               const std::vector<const StrategyInfo*>& chosen, const std::vector<Skipped>& skipped);

}  // namespace checkmpi
