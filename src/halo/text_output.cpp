#include "halo/text_output.hpp"

#include <fstream>
#include <iostream>
#include <sstream>

#include "backends/cuda.hpp"
#include "core/errors.hpp"
#include "core/output.hpp"

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
      << precision_name(cfg.precision) << ", " << r.steps << " steps\n";
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
  const double real = cfg.precision == Precision::Single ? 4.0 : 8.0;
  for (int d = 0; d < 3; ++d) {
    // Bytes this rank sends in direction d per step: both signs, three fields.
    const double bytes = 2.0 * 3.0 * double(plane_count(dec.grid, d)) * real * double(r.steps);
    const double bw = t.dir[d] > 0 ? bytes / t.dir[d] / 1e6 : 0.0;
    out << " # " << names[d] << "-MPI time, BW (MB/s) --> " << fortran_e(t.dir[d]) << " "
        << fixed(bw, 3) << "\n";
  }
  time_line("pack   time", t.pack);
  time_line("unpack time", t.unpack);
  time_line("MPI calls  ", t.mpi());
  if (r.failed_at == 0)
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

void write_task_log(const StrategyResult& r, const Decomposition& dec, const HaloConfig& cfg) {
  const std::string path = rank_file(cfg.outdir + "/" + r.info->id, "task", dec.rank, "log");
  std::ofstream log(path);
  log << task_log(r, dec, cfg);
  log.close();
  agree(dec.comm, log ? "" : "cannot write '" + path + "'");
}

void print_header(const HaloConfig& cfg, const Decomposition& dec, const RunContext& ctx,
                  const std::vector<const StrategyInfo*>& chosen, const BackendChoice& backend) {
  std::ostringstream out;
  std::string names;
  for (const auto* s : chosen) names += (names.empty() ? "" : ", ") + s->id;
  out << "checkmpi-halo " << ctx.version << " (revision " << ctx.git_revision << ")\n"
      << "  MPI library    : " << ctx.mpi_library << "\n"
      << "  ranks          : " << ctx.nprocs << " on " << ctx.nodes << " node(s), at most "
      << ctx.ranks_per_node << " per node\n"
      << "  global size    : lx=" << cfg.lx << " ly=" << cfg.ly << " lz=" << cfg.lz << "\n"
      << "  decomposition  : proc_x=" << dec.dims[0] << " proc_y=" << dec.dims[1] << " proc_z=" << dec.dims[2] << "\n"
      << "  local size     : l=" << dec.grid.l << " m=" << dec.grid.m << " n=" << dec.grid.n << "\n"
      << "  run            : itfin=" << cfg.itfin << " icheck=" << cfg.icheck << " border=" << cfg.border
      << " warmup=" << cfg.warmup << "\n"
      << "  precision      : " << precision_name(cfg.precision) << ", "
      << (cfg.reverse ? "reverse" : "forward") << " propagation, sync "
      << (cfg.sync == SyncMode::Barrier ? "barrier" : "none") << "\n"
      << "  strategies     : " << names << "\n"
      << "  compute        : " << compute_mode_name(cfg.compute)
      << (cfg.compute == ComputeMode::OnePass ? ": kernel strategies read each cell once into a second buffer"
                                              : ": kernel strategies copy, then shift (CheckMPI's FAST variant)")
      << "\n"
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

void print_table(const std::vector<StrategyResult>& results) {
  std::ostringstream out;
  out << "\n" << pad("strategy", 24, false) << pad("loop(s)", 10) << pad("%comp", 7) << pad("%MPI", 7)
      << pad("x(s)", 10) << pad("y(s)", 10) << pad("z(s)", 10) << pad("pack(s)", 10)
      << pad("unpack(s)", 10) << "  validation\n";
  for (const auto& r : results) {
    const double loop = r.timer("loop").max;
    auto pct = [&](const char* name) { return loop > 0 ? fixed(100.0 * r.timer(name).max / loop, 1) : "-"; };
    auto sec = [&](const char* name) { return fixed(r.timer(name).max, 4); };
    std::string label = r.info->id + " " + r.info->alias;
    if (label.size() > 24) label = r.info->id;
    out << pad(label, 24, false) << pad(sec("loop"), 10) << pad(pct("compute"), 7)
        << pad(pct("comm"), 7) << pad(sec("x"), 10) << pad(sec("y"), 10) << pad(sec("z"), 10)
        << pad(sec("pack"), 10) << pad(sec("unpack"), 10) << "  " << (r.valid ? "valid" : "INVALID")
        << (r.note.empty() ? "" : "  (" + r.note + ")") << "\n";
  }
  out << "(times: max over ranks; %comp and %MPI of the loop time)\n";
  std::cout << out.str() << std::flush;
}

}  // namespace checkmpi
