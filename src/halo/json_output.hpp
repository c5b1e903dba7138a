// checkmpi-halo's results as JSON (schema checkmpi.halo/5, docs/halo.md;
// schemas/checkmpi.halo-5.schema.json).
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
                  const std::vector<Skipped>& skipped, const std::vector<int>& fastest_group);

// The strategies a run (or a plan) leaves out, each {"strategy", "catalog", "reason"}.
Json skipped_json(const std::vector<Skipped>& skipped);

// {"x": v[0], "y": v[1], "z": v[2]}
Json by_direction(const std::size_t (&v)[3]);

// The block in bytes, as the results' config and a plan both give it:
// the stencil (halo_width, fields, neighbours), real_bytes, plane_elements,
// field_bytes, shift_bytes; with 18 or 26 neighbours face_elements and
// diagonal_elements (what direct messages carry per field).
void add_geometry(Json& j, const Grid& g, const Stencil& s, Precision p);

}  // namespace checkmpi
