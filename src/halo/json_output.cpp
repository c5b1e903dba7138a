#include "halo/json_output.hpp"

#include "core/samples.hpp"
#include "halo/neighbours.hpp"
#include "halo/text_output.hpp"
#include "strategies/strategy.hpp"

namespace checkmpi {

namespace {

Json traits_json(const Traits& t) {
  Json j = Json::object();
  j["messages"] = t.messages;
  j["mpi_bytes"] = by_direction(t.mpi_bytes);
  j["halo_bytes"] = by_direction(t.halo_bytes);
  j["message_bytes"] = by_direction(t.message_bytes);
  j["diagonal_bytes"] = static_cast<unsigned long long>(t.diagonal_bytes);
  j["kernel_passes"] = t.kernel_passes;
  j["overlaps"] = t.overlaps;
  return j;
}

}  // namespace

Json results_json(const HaloConfig& cfg, const Decomposition& dec, const RunContext& ctx,
                  const BackendChoice& backend, const std::vector<StrategyResult>& results,
                  const std::vector<Skipped>& skipped, const std::vector<int>& fastest_group) {
  Json root = Json::object();
  root["schema"] = kHaloSchema;
  Json context = context_json(ctx);
  context["dims"] = Json::array_of(std::vector<int>(dec.dims.begin(), dec.dims.end()));
  context["neighbours"] = neighbours_json(neighbour_counts(dec, ctx));
  context["backend"] = backend_name(backend.kind);
  context["omp_threads"] = host_threads();
  context["oversubscribed"] = oversubscribed(ctx, host_threads());
  context["placement_advice"] = placement_advice(ctx, host_threads());
  Json gpus;  // null on the host backend
  if (backend.kind == BackendKind::Cuda) {
    gpus = Json::array();
    for (size_t r = 0; r < backend.devices.size(); ++r) {
      Json g = Json::object();
      g["node"] = ctx.node_of_rank[r];
      g["device"] = backend.devices[r];
      g["name"] = backend.names[r];
      gpus.push(g);
    }
  }
  context["gpus"] = gpus;
  context["gpu_aware_mpi"] = backend.gpu_aware ? Json(*backend.gpu_aware) : Json();
  root["context"] = context;
  Json config = Json::object();
  config["input"] = cfg.input.empty() ? Json() : Json(cfg.input);
  config["lx"] = cfg.lx;
  config["ly"] = cfg.ly;
  config["lz"] = cfg.lz;
  config["proc_x"] = dec.dims[0];
  config["proc_y"] = dec.dims[1];
  config["proc_z"] = dec.dims[2];
  config["l"] = dec.grid.l;
  config["m"] = dec.grid.m;
  config["n"] = dec.grid.n;
  config["itfin"] = cfg.itfin;
  config["icheck"] = cfg.icheck;
  config["border"] = cfg.border;
  config["precision"] = precision_name(cfg.precision);
  config["reverse"] = cfg.reverse;
  config["warmup"] = cfg.warmup;
  config["repeat"] = cfg.repeat;
  config["rounds"] = cfg.rounds;
  config["seed"] = static_cast<unsigned long long>(cfg.seed);
  config["tie_threshold"] = cfg.tie_threshold;
  config["samples"] = cfg.samples.empty() ? Json() : Json(cfg.samples);
  config["launches"] = launch_count(results);
  config["sync"] = sync_name(cfg.sync);
  config["self_copy"] = cfg.self_copy;
  config["self_exchange"] = self_exchange(cfg, dec);
  config["outdir"] = cfg.outdir;
  config["strategies"] = Json::array_of(cfg.strategies);
  config["backend"] = backend_request_name(cfg.backend);
  config["require_gpu_aware"] = cfg.require_gpu_aware;
  config["stage"] = cfg.stage;
  config["compute"] = compute_name(cfg.compute);
  add_geometry(config, dec.grid, cfg.stencil, cfg.precision);
  config["noise_thresholds"] = noise_thresholds_json();
  root["config"] = config;
  Json list = Json::array();
  for (const auto& r : results) {
    Json j = Json::object();
    j["strategy"] = r.info->id;
    j["catalog"] = catalog_row_json(*r.info);
    j["valid"] = r.valid;
    j["error"] = r.error.empty() ? Json() : Json(r.error);
    j["steps"] = r.steps;
    j["runs"] = r.runs;
    j["mpi_buffers"] = r.mpi_buffers;
    j["note"] = r.note.empty() ? Json() : Json(r.note);
    Json timers = Json::object();
    for (const auto& [name, s] : r.timers) timers[name] = stats_json(s);
    j["timers"] = timers;
    j["parts"] = parts_json(r.parts);
    j["traits"] = traits_json(r.traits);
    j["step_time"] = distribution_json(r.step_time);
    j["repeat_medians"] = Json::array_of(r.repeat_medians);
    j["repeat_spread"] = r.repeat_spread;
    Json rounds = Json::array();  // per run, each round's median over ranks and steps
    for (const auto& run : r.rounds) {
      Json medians = Json::array();
      for (const auto& round : run) medians.push(distribution(round).median);
      rounds.push(medians);
    }
    j["round_medians"] = rounds;
    // Each launch's median, this one last (one launch: its own alone).
    j["launch_medians"] = Json::array_of(r.launch_medians.empty() ? std::vector<double>{r.step_time.median}
                                                                  : r.launch_medians);
    j["launch_spread"] = r.launch_spread;
    Json vs;  // null: not ranked (invalid)
    if (r.vs.ratio == r.vs.ratio) {
      vs = Json::object();
      vs["ratio"] = r.vs.ratio;
      Json ci = Json::array();
      ci.push(r.vs.ci_low);
      ci.push(r.vs.ci_high);
      vs["ci95"] = ci;
      vs["tied"] = r.vs.tied;
    }
    j["vs_fastest"] = vs;
    Json directions = Json::object();
    for (int d = 0; d < 3; ++d) {
      Json dir = Json::object();
      dir["bandwidth"] = stats_json(r.bandwidth[size_t(d)]);
      directions[std::string(1, "xyz"[d])] = dir;
    }
    j["directions"] = directions;
    j["noise"] = Json::array_of(r.noise);
    list.push(j);
  }
  root["results"] = list;
  Json group = Json::array();
  for (int i : fastest_group) group.push(results[size_t(i)].info->id);
  root["fastest_group"] = group;
  root["separable"] = separable(results, ctx);
  root["skipped"] = skipped_json(skipped);
  return root;
}

Json skipped_json(const std::vector<Skipped>& skipped) {
  Json skips = Json::array();
  for (const Skipped& k : skipped) {
    Json j = Json::object();
    j["strategy"] = k.info->id;
    j["catalog"] = catalog_row_json(*k.info);
    j["reason"] = k.reason;
    skips.push(j);
  }
  return skips;
}

Json by_direction(const std::size_t (&v)[3]) {
  Json j = Json::object();
  j["x"] = static_cast<unsigned long long>(v[0]);
  j["y"] = static_cast<unsigned long long>(v[1]);
  j["z"] = static_cast<unsigned long long>(v[2]);
  return j;
}

void add_geometry(Json& j, const Grid& g, const Stencil& s, Precision p) {
  const std::size_t real = real_bytes(p);
  j["halo_width"] = s.width;
  j["fields"] = s.fields;
  j["neighbours"] = s.neighbours;
  j["real_bytes"] = static_cast<unsigned long long>(real);
  const std::size_t planes[3] = {plane_count(g, 0), plane_count(g, 1), plane_count(g, 2)};
  j["plane_elements"] = by_direction(planes);
  j["field_bytes"] = static_cast<unsigned long long>(field_bytes(g, s.fields, real));
  j["shift_bytes"] = static_cast<unsigned long long>(shift_bytes(g, s.fields, real));
  if (s.neighbours == 6) return;
  // Where edges and corners go direct: one field's face (the interior beside
  // it), and each edge's and corner's block.
  const std::size_t faces[3] = {face_elements(g, 0, true), face_elements(g, 1, true), face_elements(g, 2, true)};
  j["face_elements"] = by_direction(faces);
  Json diagonal = Json::object();
  for (const Offset& o : neighbour_offsets(s.neighbours))
    if (order_of(o) > 1)
      diagonal[offset_name(o)] =
          static_cast<unsigned long long>(region(g, region_box(g, o, false, false), o[2] != 0 ? 2 : 1).count());
  j["diagonal_elements"] = diagonal;
}

}  // namespace checkmpi
