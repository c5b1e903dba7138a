#include "halo/plan.hpp"

#include <string>

#include "core/errors.hpp"
#include "core/saturating.hpp"
#include "grid/fields.hpp"
#include "grid/planes.hpp"
#include "halo/json_output.hpp"
#include "halo/resources.hpp"
#include "strategies/strategy.hpp"

namespace checkmpi {

int plan_ranks(const CommandLine& cli, const HaloConfig& cfg) {
  constexpr long long kMaxRanks = 1LL << 30;
  auto ranks = [&](const char* option) {
    const long long n = cli.get_int(option, 0);
    if (n < 1 || n > kMaxRanks)
      throw UsageError(std::string("--") + option + " must be between 1 and " + std::to_string(kMaxRanks) +
                       ", got " + std::to_string(n));
    return int(n);
  };
  const bool whole_grid = cfg.proc_x > 0 && cfg.proc_y > 0 && cfg.proc_z > 0;
  if (cli.has("np")) return ranks("np");  // choose_dims says if the grid disagrees
  if (whole_grid) {
    const long long n = sat_mul(sat_mul(cfg.proc_x, cfg.proc_y), cfg.proc_z);
    if (n > kMaxRanks)
      throw UsageError("proc_x*proc_y*proc_z = " + std::to_string(cfg.proc_x) + "*" + std::to_string(cfg.proc_y) +
                       "*" + std::to_string(cfg.proc_z) + " is more than " + std::to_string(kMaxRanks) + " ranks");
    return int(n);
  }
  if (cli.has("default-np")) return ranks("default-np");
  throw UsageError("--plan: give the ranks to plan for (--np N), or the whole grid (--procs PXxPYxPZ)");
}

namespace {

Json triple(long long a, long long b, long long c) {
  Json j = Json::array();
  j.push(a);
  j.push(b);
  j.push(c);
  return j;
}

// What one strategy does per step on a rank of this block: its compute
// resolved for the run, and per direction (both signs) the messages to one
// neighbour, one message's payload and the halo planes it refreshes.
Json run_json(const StrategyInfo& s, Compute run, const Grid& g, const Stencil& stencil, std::size_t real) {
  const PartTraits t = part_traits(s.parts, stencil);
  const bool direct = direct_messages(s.parts, stencil);
  const Compute c = resolved_compute(s.parts, run);
  Json j = Json::object();
  j["compute"] = name(c);
  j["kernel_passes"] = kernel_passes(c);
  Json dirs = Json::object();
  for (int d = 0; d < 3; ++d) {
    Json dj = Json::object();
    dj["messages_per_sign"] = t.dir[d].messages_per_sign;
    dj["message_bytes"] = static_cast<unsigned long long>(message_bytes(t, g, d, real, direct));
    dj["halo_bytes"] = static_cast<unsigned long long>(halo_bytes(g, d, stencil.fields, real));
    dirs[std::string(1, "xyz"[d])] = dj;
  }
  j["directions"] = dirs;
  const DiagonalMessages diagonal = diagonal_messages(t, g, stencil, real);
  Json dj = Json::object();
  dj["neighbours"] = t.neighbours;
  dj["relayed"] = std::string(t.diagonals) == "relayed";
  dj["messages"] = diagonal.messages;
  dj["bytes"] = static_cast<unsigned long long>(diagonal.bytes);
  j["diagonals"] = dj;
  return j;
}

}  // namespace

Json plan_json(const HaloConfig& cfg, int nranks, const BackendChoice& backend,
               const std::vector<const StrategyInfo*>& chosen, const std::vector<Skipped>& skipped) {
  const std::array<int, 3> dims = choose_dims(cfg, nranks);
  const Grid g{int(cfg.lx / dims[0]), int(cfg.ly / dims[1]), int(cfg.lz / dims[2]), cfg.stencil.width};
  check_block(g);
  check_plane_sizes(g, cfg.stencil);
  Json doc = Json::object();
  doc["schema"] = "checkmpi.plan/1";
  doc["ranks"] = nranks;
  doc["procs"] = triple(dims[0], dims[1], dims[2]);
  doc["size"] = triple(cfg.lx, cfg.ly, cfg.lz);
  doc["local"] = triple(g.l, g.m, g.n);
  doc["precision"] = precision_name(cfg.precision);
  doc["backend"] = backend_name(backend.kind);
  doc["compute"] = compute_name(cfg.compute);
  doc["itfin"] = cfg.itfin;
  doc["icheck"] = cfg.icheck;
  add_geometry(doc, g, cfg.stencil, cfg.precision);
  doc["memory_per_rank"] = static_cast<unsigned long long>(
      bytes_per_rank(g, cfg.stencil, cfg.precision, host_field_copies(chosen, cfg.compute, backend.kind)));
  doc["least_seconds"] = fastest_run_seconds(cfg, g, backend.kind, chosen.size());
  Json list = Json::array();
  for (const StrategyInfo* s : chosen) {
    Json j = Json::object();
    j["catalog"] = catalog_row_json(*s);
    j["run"] = run_json(*s, cfg.compute, g, cfg.stencil, real_bytes(cfg.precision));
    list.push(j);
  }
  doc["strategies"] = list;
  doc["skipped"] = skipped_json(skipped);
  return doc;
}

}  // namespace checkmpi
