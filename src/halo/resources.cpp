#include "halo/resources.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "backends/cuda.hpp"
#include "core/atomic_file.hpp"
#include "core/context.hpp"
#include "core/errors.hpp"
#include "core/saturating.hpp"
#include "core/text.hpp"
#include "grid/routing.hpp"
#include "strategies/parts.hpp"  // halo_bytes

namespace checkmpi {

double bytes_per_rank(const Grid& g, const Stencil& s, Precision p, int copies) {
  const std::size_t real = real_bytes(p);
  double halos = 0;  // every direction's halo layers, held once to send and once to receive
  for (int d = 0; d < 3; ++d) halos += double(halo_bytes(g, d, s.fields, real));
  return double(copies) * double(field_bytes(g, s.fields, real)) + 2.0 * halos;
}

namespace {

// Bytes per second one rank moves at best (host memory, or a GPU's), and
// the least a step of six messages can take: lower bounds, so that only a
// run that surely takes hours is refused.
constexpr double kFastHostRate = 50e9, kFastGpuRate = 3e12, kFastestStep = 2e-6;
// What a rank still gets on a crowded node: the watchdog's yardstick.
constexpr double kSlowNodeRate = 2e8;
constexpr double kLongRun = 3600;

std::string duration_text(double seconds) {
  if (seconds < 120) return fixed(seconds, 0) + " s";
  if (seconds < 7200) return fixed(seconds / 60, 0) + " min";
  return fixed(seconds / 3600, 1) + " h";
}

}  // namespace

int field_copies(const std::vector<const StrategyInfo*>& chosen, Compute run) {
  for (const auto* s : chosen)
    if (resolved_compute(s->parts, run) != Compute::InPlace) return 2;
  return 1;
}

int host_field_copies(const std::vector<const StrategyInfo*>& chosen, Compute run, BackendKind kind) {
  return kind == BackendKind::Cuda ? 1 : 1 + field_copies(chosen, run);
}

void check_plane_sizes(const Grid& g, const Stencil& s) {
  for (int d = 0; d < 3; ++d)
    if (double(s.fields) * double(plane_count(g, d)) > 2147483647.0)
      throw UsageError("local block " + std::to_string(g.l) + "x" + std::to_string(g.m) + "x" + std::to_string(g.n) +
                       " is too large: one " + "xyz"[d] + " halo message would hold " +
                       std::to_string(std::size_t(s.fields) * plane_count(g, d)) +
                       " elements, more than MPI's count limit 2147483647");
}

double fastest_run_seconds(const HaloConfig& cfg, const Grid& g, BackendKind kind, std::size_t strategies) {
  const double rate = kind == BackendKind::Cuda ? kFastGpuRate : kFastHostRate;
  const double step = std::max(kFastestStep, bytes_per_rank(g, cfg.stencil, cfg.precision) / rate);
  const double steps = double(cfg.itfin) + double(cfg.warmup) * double(cfg.rounds) + kRoutingSteps;
  return double(strategies) * double(cfg.repeat) * steps * step;
}

double watchdog_seconds(const HaloConfig& cfg, const Grid& g, int ranks_on_node) {
  if (cfg.watchdog >= 0) return cfg.watchdog;
  // The longest quiet stretch of a healthy run is one step, a check or a
  // strategy's set-up: each touches every array about once.
  return std::max(60.0, 10.0 * bytes_per_rank(g, cfg.stencil, cfg.precision) * ranks_on_node / kSlowNodeRate);
}

void check_resources(const HaloConfig& cfg, const Decomposition& dec, const BackendChoice& backend,
                     const std::vector<const StrategyInfo*>& chosen, int& local_size) {
  int local_rank = 0;
  node_local(dec.comm, local_rank, local_size);
  // The estimate is made before allocating so an oversized run fails cleanly
  // rather than in the allocator.
  collectively(dec.comm, [&] {
    check_plane_sizes(dec.grid, cfg.stencil);
    const int copies = field_copies(chosen, cfg.compute);
    const double need =
        bytes_per_rank(dec.grid, cfg.stencil, cfg.precision, host_field_copies(chosen, cfg.compute, backend.kind)) *
        local_size;
    const unsigned long long have = available_memory_bytes();
    if (have > 0 && need > double(have)) {
      throw UsageError("not enough memory: " + std::to_string(local_size) + " ranks on this node need " +
                       human_bytes(need) + ", " + human_bytes(double(have)) + " available");
    }
    const double least = fastest_run_seconds(cfg, dec.grid, backend.kind, chosen.size());
    if (least > kLongRun && !cfg.force)
      throw UsageError("this run would take at least " + duration_text(least) + " (" +
                       std::to_string(chosen.size()) + " strategies" +
                       (cfg.repeat > 1 ? " x " + std::to_string(cfg.repeat) + " repeats" : std::string()) +
                       " of " + std::to_string(cfg.itfin) +
                       " steps and " + std::to_string(sat_mul(cfg.warmup, cfg.rounds)) +
                       " warm-up steps); --force runs it anyway");
    if (backend.kind != BackendKind::Cuda) return;
    // The same arrays in device memory, for the ranks sharing this GPU.
    const double need_gpu = bytes_per_rank(dec.grid, cfg.stencil, cfg.precision, copies) * backend.sharing;
    const double free_gpu = double(cuda_free_memory(backend.device));
    if (need_gpu > free_gpu)
      throw UsageError("not enough GPU memory: " + std::to_string(backend.sharing) + " rank(s) on GPU " +
                       std::to_string(backend.device) + " need " + human_bytes(need_gpu) + ", " +
                       human_bytes(free_gpu) + " free");
  });
  collectively(dec.comm, [&] {
    if (dec.rank == 0) check_output_files(cfg, chosen);
  });
  collectively(dec.comm, [&] {
    for (const auto* s : chosen) {
      const std::string dir = cfg.outdir + "/" + s->id;
      std::string err = make_directories(dir);
      if (!err.empty()) throw UsageError(err);
      const std::string probe = dir + "/.checkmpi-write-test." + std::to_string(dec.rank);
      std::FILE* f = std::fopen(probe.c_str(), "w");
      if (!f) throw UsageError("output directory '" + dir + "' is not writable: " + std::strerror(errno));
      std::fclose(f);
      std::remove(probe.c_str());
    }
  });
  collectively(dec.comm, [&] {
    if (dec.rank != 0 || cfg.json.empty()) return;
    const std::string error = check_writable_file(cfg.json, "JSON file");
    if (!error.empty()) throw UsageError(error);
  });
}

void check_output_files(const HaloConfig& cfg, const std::vector<const StrategyInfo*>& chosen) {
  const std::pair<const std::string*, const char*> outputs[] = {{&cfg.json, "--json"}, {&cfg.samples, "--samples"}};
  for (const auto& [path, option] : outputs) {
    if (path->empty()) continue;
    if (*path == "-")
      throw UsageError(std::string(option) + " - (standard output) is for --plan and --list-strategies; a run "
                       "writes its " + (path == &cfg.json ? "results" : "samples") + " to a file");
    const auto slash = path->rfind('/');
    const std::string folder = slash == std::string::npos ? "." : path->substr(0, slash == 0 ? 1 : slash);
    for (const auto* s : chosen)
      if (same_file(folder, cfg.outdir + "/" + s->id))
        throw UsageError(std::string(option) + " '" + *path + "' is in " + cfg.outdir + "/" + s->id +
                         ", the folder of the run's own profiles and task logs; give a path outside it");
  }
  if (!cfg.json.empty() && !cfg.input.empty() && same_file(cfg.json, cfg.input))
    throw UsageError("--json '" + cfg.json + "' is the input file; refusing to write results over it");
  if (!cfg.samples.empty())
    for (const auto& [other, what] : {std::pair{cfg.json, "--json file"}, std::pair{cfg.input, "input file"}})
      if (!other.empty() && same_file(other, cfg.samples))
        throw UsageError("--samples '" + cfg.samples + "' is the " + what + "; the samples need a file of their own");
}

}  // namespace checkmpi
