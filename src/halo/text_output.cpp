#include "halo/text_output.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <iostream>
#include <sstream>

#include "backends/cuda.hpp"
#include "core/errors.hpp"
#include "core/text.hpp"
#include "grid/profiles.hpp"
#include "halo/neighbours.hpp"

namespace checkmpi {

std::string self_exchange(const HaloConfig& cfg, const Decomposition& dec) {
  std::string dirs;
  for (int d = 0; d < 3; ++d)
    if (dec.dims[d] == 1) dirs += std::string(dirs.empty() ? "" : ",") + "xyz"[d];
  if (dirs.empty()) return "none";
  return dirs + (cfg.self_copy ? " by local copy (--self-copy)" : " through MPI to the rank itself");
}

namespace {

std::string task_log(const StrategyResult& r, const Decomposition& dec, const HaloConfig& cfg) {
  const StepTimers& t = r.local;
  const StrategyInfo& info = *r.info;
  std::ostringstream out;
  auto time_line = [&](const char* label, double v) { out << " # " << label << fortran_e(v) << "\n"; };
  auto ratio_line = [&](const char* label, double v) {
    out << " # " << label << fixed(t.loop > 0 ? v / t.loop : 0.0, 3) << "\n";
  };
  out << "# checkmpi-halo " << info.id << " (" << info.alias << "), rank " << dec.rank << " of "
      << dec.size << ", coords (" << dec.coords[0] << "," << dec.coords[1] << "," << dec.coords[2]
      << "), local " << dec.grid.l << "x" << dec.grid.m << "x" << dec.grid.n << ", "
      << precision_name(cfg.precision) << ", " << r.steps << " steps"
      << (r.runs > 1 ? " in " + std::to_string(r.runs) + " runs (--repeat)" : "") << "\n";
  out << "# Time for section\n";
  time_line("loop   time", t.loop);
  time_line("comp.  time", t.compute);
  time_line("diag.  time", t.diag);
  time_line("MPI    time", t.comm);
  out << " #--------------------------------\n # Ratio\n";
  ratio_line("Ratio Coll   ", t.compute);
  ratio_line("Ratio Dg.    ", t.diag);
  ratio_line("Ratio MPI    ", t.comm);
  out << " #--------------------------------\n";
  // Share of the loop the three sections account for; well below 1 means
  // time went somewhere the timers do not see.
  ratio_line("Check (comp+diag+MPI)/loop ", t.compute + t.diag + t.comm);
  const char* names[3] = {"X", "Y", "Z"};
  for (int d = 0; d < 3; ++d) {
    // Bytes this rank sends in direction d per step: both signs, every field.
    const double bytes =
        double(halo_bytes(dec.grid, d, cfg.stencil.fields, real_bytes(cfg.precision))) * double(r.steps);
    const double bw = t.dir[d] > 0 ? bytes / t.dir[d] / 1e6 : 0.0;
    out << " # " << names[d] << "-MPI time, BW (MB/s) --> " << fortran_e(t.dir[d]) << " "
        << fixed(bw, 3) << "\n";
  }
  time_line("pack   time", t.pack);
  time_line("unpack time", t.unpack);
  time_line("MPI calls  ", t.mpi());
  if (!r.valid && r.failed_at == 0)
    out << "# validation: FAILED before the timed loop: " << r.error << "\n";
  else if (r.failed_at == 0)
    out << "# validation: passed (" << r.steps << " steps, exact)\n";
  else if (r.mismatch.count == 0)
    out << "# validation: this rank matched; another rank failed at t=" << r.failed_at << "\n";
  else
    out << "# validation: FAILED at t=" << r.failed_at << ": " << r.mismatch.describe() << "\n";
  return out.str();
}

std::string pad(std::string s, size_t width, bool right = true) {
  if (s.size() >= width) return s;
  return right ? std::string(width - s.size(), ' ') + s : s + std::string(width - s.size(), ' ');
}

}  // namespace

void write_task_log(const StrategyResult& r, const Decomposition& dec, const HaloConfig& cfg,
                    PendingFiles& files) {
  AtomicFile& log = files.open(rank_file(cfg.outdir + "/" + r.info->id, "task", dec.rank, "log"));
  log.append(task_log(r, dec, cfg));
  agree_output(dec.comm, log.finish());
}

namespace {

// The header's stencil line: CheckMPI's, or the fields' motion.
std::string stencil_line(const Stencil& s) {
  std::string line = describe(s);
  if (s.defaults()) return line + " (CheckMPI's: field1 moves in x, field2 in y, field3 in z)";
  if (s.neighbours == 6) return line + "; field f moves " + std::to_string(s.width) + " cell(s) per step along axis f mod 3";
  return line + "; the fields move " + std::to_string(s.width) + " cell(s) per step along each axis of a D3Q" +
         (s.neighbours == 18 ? "19" : "27") + " lattice's velocities, diagonal ones first";
}

// The header's compute line: the run's --compute, and the chosen strategies that run another compute.
std::string compute_line(Compute run, const std::vector<const StrategyInfo*>& chosen) {
  std::string line = compute_name(run);
  if (run == Compute::InPlace) line += ": each field shifted in its own array, swept against its direction";
  else if (run == Compute::OnePass) line += ": each cell read once into a second buffer";
  else line += ": CheckMPI's: host-packing steps in place, kernel steps copy, then shift (FAST variant)";
  std::string other;
  for (const auto* s : chosen) {
    const Compute c = resolved_compute(s->parts, run);
    if (c != run && run != Compute::TwoPass) other += (other.empty() ? "" : ", ") + s->id + " " + compute_name(c);
  }
  return other.empty() ? line : line + " (except " + other + ")";
}

}  // namespace

void print_header(const HaloConfig& cfg, const Decomposition& dec, const RunContext& ctx,
                  const std::vector<const StrategyInfo*>& chosen, const BackendChoice& backend) {
  std::ostringstream out;
  std::string names;
  for (const auto* s : chosen) names += (names.empty() ? "" : ", ") + s->id;
  out << "checkmpi-halo " << ctx.version << " (revision " << ctx.git_revision << ")\n"
      << "  MPI library    : " << ctx.mpi_library << "\n"
      << "  CPU            : " << cpu_text(ctx) << "\n"
      << "  ranks          : " << ctx.nprocs << " on " << ctx.nodes << " node(s), at most "
      << ctx.ranks_per_node << " per node\n"
      << "  neighbours     : " << neighbours_text(neighbour_counts(dec, ctx)) << "\n"
      << "  CPUs           : " << cpus_text(ctx, host_threads()) << "; binding " << binding_text(ctx) << "\n"
      << "  global size    : lx=" << cfg.lx << " ly=" << cfg.ly << " lz=" << cfg.lz << "\n"
      << "  decomposition  : proc_x=" << dec.dims[0] << " proc_y=" << dec.dims[1] << " proc_z=" << dec.dims[2] << "\n"
      << "  local size     : l=" << dec.grid.l << " m=" << dec.grid.m << " n=" << dec.grid.n << "\n"
      << "  stencil        : " << stencil_line(cfg.stencil) << "\n"
      << "  run            : itfin=" << cfg.itfin << " icheck=" << cfg.icheck << " border=" << cfg.border
      << " warmup=" << cfg.warmup << " rounds=" << cfg.rounds << (cfg.repeat > 1 ? " repeat=" + std::to_string(cfg.repeat) : "")
      << " seed=" << cfg.seed << "\n"
      << "  precision      : " << precision_name(cfg.precision) << ", "
      << (cfg.reverse ? "reverse" : "forward") << " propagation, sync "
      << sync_name(cfg.sync) << "\n"
      << "  strategies     : " << names << "\n"
      << "  compute        : " << compute_line(cfg.compute, chosen) << "\n"
      << "  backend        : " << backend_line(backend) << "\n";
  if (!backend.why_host.empty() && cuda_built()) out << "                   (auto: " << backend.why_host << ")\n";
  if (backend.kind == BackendKind::Cuda) {
    for (size_t r = 0; r < backend.devices.size(); ++r)
      out << (r == 0 ? "  GPUs           : " : "                   ") << "rank " << r << " -> node "
          << ctx.node_of_rank[r] << " (" << ctx.hostnames[r] << ") -> GPU " << backend.devices[r] << " "
          << backend.names[r] << "\n";
    out << "  CUDA-aware MPI : " << cuda_mpi_line(backend, cfg) << "\n";
  }
  out << "  self exchange  : " << self_exchange(cfg, dec) << "\n"
      << "  output         : " << cfg.outdir << "/<strategy>/\n";
  std::cout << out.str() << std::flush;
}

std::string per_step_text(double seconds) {
  if (!(seconds == seconds)) return "-";  // NaN: no samples
  // The value the JSON holds (9 digits), so that a reader of the JSON
  // printing it the same way gets the same digits (10.065 us: 10.07 or 10.06).
  char text[32];
  std::snprintf(text, sizeof text, "%.9g", seconds);
  seconds = std::strtod(text, nullptr);
  if (seconds >= 1.0) return fixed(seconds, 3) + " s";
  if (seconds >= 1e-3) return fixed(seconds * 1e3, 3) + " ms";
  return fixed(seconds * 1e6, 2) + " us";
}

namespace {

// "12%" or "1.2%": a ratio's distance from 1.
std::string percent(double ratio) {
  const double p = std::fabs(ratio - 1.0) * 100.0;
  return fixed(p, p < 10 ? 1 : 0) + "%";
}

std::string names_of(const std::vector<std::string>& ids) {
  std::string text;
  for (size_t i = 0; i < ids.size(); ++i)
    text += (i == 0 ? "" : i + 1 == ids.size() ? " and " : ", ") + ids[i];
  return text;
}

}  // namespace

std::string ranking_headline(const std::vector<StrategyResult>& results, const std::vector<int>& group,
                             bool oversubscribed) {
  if (group.empty()) return "no valid strategy to rank";
  std::vector<std::string> ids;
  double widest = 1.0;
  for (int i : group) {
    ids.push_back(results[size_t(i)].info->id);
    widest = std::max(widest, results[size_t(i)].vs.ratio);
  }
  const StrategyResult& best = results[size_t(group.front())];
  const std::string median = per_step_text(best.step_time.median);
  if (oversubscribed && ids.size() > 1)
    return "not separated (oversubscribed): " + names_of(ids) + " are within " + percent(widest) +
           " (fastest median " + median + " per step); one launch cannot see how the placement of ranks on CPUs, " +
           "fixed for a launch, changes each strategy";
  std::string text = ids.size() == 1 ? "fastest: " + ids[0] + ", " + median + " per step"
                                     : names_of(ids) + " are tied within " + percent(widest) + " (fastest median " +
                                           median + " per step)";
  // The closest strategy outside the group: how much slower, and how sure.
  const StrategyResult* next = nullptr;
  for (const auto& r : results)
    if (r.valid && !r.vs.tied && r.vs.ratio == r.vs.ratio && (!next || r.vs.ratio < next->vs.ratio)) next = &r;
  if (next)
    text += "; next " + next->info->id + " is " + percent(next->vs.ratio) + " slower (95% CI " +
            percent(next->vs.ci_low) + "-" + percent(next->vs.ci_high) + ")";
  return text;
}

void print_table(const std::vector<StrategyResult>& results, const std::vector<int>& group, const HaloConfig& cfg,
                 const RunContext& ctx) {
  // Per-step figures in one unit for the whole table.
  double largest = 0;
  for (const auto& r : results) largest = std::max(largest, r.step_time.max);
  const double scale = largest >= 1.0 ? 1.0 : largest >= 1e-3 ? 1e3 : 1e6;
  const std::string unit = largest >= 1.0 ? "s" : largest >= 1e-3 ? "ms" : "us";
  const int digits = scale == 1e6 ? 2 : 3;
  std::ostringstream out;
  out << "\n" << pad("strategy", 24, false) << pad("step(" + unit + ")", 10) << pad("95% CI", 20)
      << pad("vs best", 9) << pad("p95/med ", 10) << pad("loop(s)", 10) << pad("%comp", 7) << pad("%MPI", 7) << pad("x GB/s", 8)
      << pad("y GB/s", 8) << pad("z GB/s", 8) << "  validation\n";
  std::vector<std::string> noisy;
  for (const auto& r : results) {
    const Distribution& d = r.step_time;
    const double loop = r.timer("loop").max;
    auto pct = [&](const char* name) { return loop > 0 ? fixed(100.0 * r.timer(name).max / loop, 1) : "-"; };
    auto gbs = [&](int dir) {
      const double bw = r.bandwidth[size_t(dir)].min;
      return bw == bw ? fixed(bw / 1e9, 2) : "-";
    };
    const std::string ci = d.ci_low == d.ci_low ? "[" + fixed(d.ci_low * scale, digits) + ", " +
                                                      fixed(d.ci_high * scale, digits) + "]"
                                                : "-";
    std::string label = r.info->id + " " + r.info->alias;
    if (label.size() > 22) label = r.info->id;
    const bool in_group = std::find(group.begin(), group.end(), int(&r - results.data())) != group.end();
    const std::string vs = r.vs.ratio == r.vs.ratio ? fixed(r.vs.ratio, 3) + (in_group ? "=" : " ") : "-";
    out << pad((in_group ? "* " : "  ") + label, 24, false) << pad(fixed(d.median * scale, digits), 10) << pad(ci, 20)
        << pad(vs, 9) << pad(fixed(d.tail_ratio(), 2) + (r.noise.empty() ? " " : "!"), 10) << pad(fixed(loop, 4), 10)
        << pad(pct("compute"), 7)
        << pad(pct("comm"), 7) << pad(gbs(0), 8) << pad(gbs(1), 8) << pad(gbs(2), 8) << "  "
        << (r.valid ? "valid" : "INVALID")
        << (r.note.empty() ? "" : "  (" + r.note + ")") << "\n";
    for (const auto& why : r.noise) noisy.push_back(r.info->id + ": " + why);
  }
  const int runs = results.empty() ? 1 : results.front().runs;
  const int launches = launch_count(results);
  // The compute that ran: the first strategy's, and those whose differs.
  const Compute first = results.empty() ? Compute::Auto : results.front().parts.compute;
  std::string compute = compute_name(first), other;
  for (const auto& r : results)
    if (r.parts.compute != first)
      other += (other.empty() ? " but " : ", ") + r.info->id + " " + compute_name(r.parts.compute);
  out << "(step: median time per step over ranks, steps, " << cfg.rounds << " rounds"
      << (runs > 1 ? " and " + std::to_string(runs) + " runs" : "")
      << (launches > 1 ? " per launch, " + std::to_string(launches) + " launches" : "")
      << ", validation excluded, with its 95% confidence interval ("
      << (launches > 1 ? "bootstrap over launches, rounds and steps, at least Student's t over the launches"
                       : "bootstrap over runs, rounds and steps")
      << ");\n"
      << " vs best: median over the fastest's; * and =: tied with the fastest (ratio CI includes 1, or within "
      << fixed(cfg.tie_threshold * 100, 1) << "%); loop: whole timed loop"
      << (runs > 1 ? "s, summed" : "") << ", max over ranks;\n %comp and %MPI of the loop time (compute "
      << compute << other << "); GB/s: payload sent in that direction over its "
      << "time, slowest rank)\n";
  for (const auto& line : noisy) out << "warning: noisy (!): " << line << "\n";
  if (oversubscribed(ctx, host_threads()))
    out << "warning: oversubscribed: " << cpus_text(ctx, host_threads()) << "\n";
  if (const std::string advice = placement_advice(ctx, host_threads()); !advice.empty())
    out << "warning: placement: " << advice << "\n";
  out << ranking_headline(results, group, !separable(results, ctx)) << "\n";
  std::cout << out.str() << std::flush;
}

}  // namespace checkmpi
