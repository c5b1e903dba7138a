// checkmpi-halo's results as JSON (schema checkmpi.halo/2, docs/halo.md;
// checkmpi/schemas/checkmpi.halo-2.schema.json).
#pragma once

#include <vector>

#include "core/context.hpp"
#include "core/json.hpp"
#include "grid/config.hpp"
#include "grid/decomposition.hpp"
#include "halo/backend_choice.hpp"
#include "halo/result.hpp"

namespace checkmpi {

Json results_json(const HaloConfig& cfg, const Decomposition& dec, const RunContext& ctx,
                  const BackendChoice& backend, const std::vector<StrategyResult>& results,
                  const std::vector<Skipped>& skipped);

}  // namespace checkmpi
