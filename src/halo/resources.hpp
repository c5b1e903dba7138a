// Checks that depend on the machine, made before anything is allocated or
// written: memory (host and GPU), message sizes, output locations.
#pragma once

#include <vector>

#include "core/config.hpp"
#include "core/decomposition.hpp"
#include "halo/backend_choice.hpp"

namespace checkmpi {

// Memory one rank needs at most: three fields and three temporaries (or a
// second buffer), plus one three-field message per direction, sign and way.
double bytes_per_rank(const Grid& g, Precision p);

// Collective; throws UsageError on every rank if any rank finds a problem.
void check_resources(const HaloConfig& cfg, const Decomposition& dec, const BackendChoice& backend,
                     const std::vector<const StrategyInfo*>& chosen);

}  // namespace checkmpi
