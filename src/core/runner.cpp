#include "core/runner.hpp"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <utility>

#include "core/context.hpp"
#include "core/errors.hpp"
#include "core/output.hpp"
#include "core/strategy.hpp"

namespace checkmpi {

namespace {

struct Stats {
  double min = 0, mean = 0, max = 0;
};

Stats over_ranks(double v, MPI_Comm comm) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  Stats s;
  double sum = 0;
  MPI_Allreduce(&v, &s.min, 1, MPI_DOUBLE, MPI_MIN, comm);
  MPI_Allreduce(&v, &s.max, 1, MPI_DOUBLE, MPI_MAX, comm);
  MPI_Allreduce(&v, &sum, 1, MPI_DOUBLE, MPI_SUM, comm);
  s.mean = sum / size;
  return s;
}

struct StrategyResult {
  const StrategyInfo* info = nullptr;
  bool valid = true;
  std::string error;
  long long steps = 0;
  std::vector<std::pair<std::string, Stats>> timers;  // JSON order
  std::size_t bytes_per_step = 0;
  std::size_t compute_bytes_per_step = 0;

  const Stats& timer(const std::string& name) const {
    for (const auto& t : timers)
      if (t.first == name) return t.second;
    static const Stats none;
    return none;
  }
};

// Bytes one rank sends in direction `dir` per step (both signs, three fields).
template <class Real>
std::size_t direction_bytes(const Grid& g, int dir) {
  return 2 * 3 * plane_count(g, dir) * sizeof(Real);
}

template <class Real>
std::string task_log(const StrategyInfo& info, const Decomposition& dec, const HaloConfig& cfg,
                     const StepTimers& t, long long steps, const Mismatch& local, long long failed_at) {
  std::ostringstream out;
  auto time_line = [&](const char* label, double v) { out << " # " << label << fortran_e(v) << "\n"; };
  auto ratio_line = [&](const char* label, double v) {
    out << " # " << label << fixed(t.loop > 0 ? v / t.loop : 0.0, 3) << "\n";
  };
  out << "# checkmpi-halo " << info.id << " (" << info.alias << "), rank " << dec.rank << " of "
      << dec.size << ", coords (" << dec.coords[0] << "," << dec.coords[1] << "," << dec.coords[2]
      << "), local " << dec.grid.l << "x" << dec.grid.m << "x" << dec.grid.n << ", "
      << precision_name(cfg.precision) << ", " << steps << " steps\n";
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
    const double bytes = double(direction_bytes<Real>(dec.grid, d)) * double(steps);
    const double bw = t.dir[d] > 0 ? bytes / t.dir[d] / 1e6 : 0.0;
    out << " # " << names[d] << "-MPI time, BW (MB/s) --> " << fortran_e(t.dir[d]) << " "
        << fixed(bw, 3) << "\n";
  }
  time_line("pack   time", t.pack);
  time_line("unpack time", t.unpack);
  time_line("MPI calls  ", t.mpi());
  if (failed_at == 0)
    out << "# validation: passed (" << steps << " steps, exact)\n";
  else if (local.count == 0)
    out << "# validation: this rank matched; another rank failed at t=" << failed_at << "\n";
  else
    out << "# validation: FAILED at t=" << failed_at << ": " << local.describe() << "\n";
  return out.str();
}

template <class Real>
StrategyResult run_strategy(const StrategyInfo& info, const Decomposition& dec, const HaloConfig& cfg) {
  const Grid& g = dec.grid;
  const InitialProfiles<Real> initial(g);
  Fields<Real> fields(g);
  initialise(fields, initial);
  StepTimers timers;
  HaloState<Real> state{dec, fields, cfg, timers};
  auto strategy = info.make<Real>();
  strategy->setup(state);
  for (long long w = 0; w < cfg.warmup; ++w) strategy->step(state);
  if (cfg.warmup > 0) {  // the timed loop starts from the initial state
    initialise(fields, initial);
    timers = StepTimers{};
  }

  const std::string dir = cfg.outdir + "/" + info.id;
  ProfileFiles profiles(dir, dec.rank);
  agree(dec.comm, profiles.error());

  // Test hook: one wrong cell on the last rank after the first step.
  const bool corrupt = cfg.inject_error == info.id && dec.rank == dec.size - 1;
  StrategyResult r;
  r.info = &info;
  Mismatch local;
  long long failed_at = 0;

  MPI_Barrier(dec.comm);
  MPI_Pcontrol(1);
  const double start = MPI_Wtime();
  for (long long t = 1; t <= cfg.itfin && failed_at == 0; ++t) {
    strategy->step(state);
    if (corrupt && t == 1) fields.f[0][g.index(1, 1, 1)] += Real(1);
    r.steps = t;
    if (t % cfg.icheck != 0 && t != cfg.itfin) continue;
    Timed diag(timers.diag);
    if (t % cfg.icheck == 0) profiles.write(fields, t);
    local = validate(fields, initial, t, cfg.reverse);
    long long bad = 0;
    MPI_Allreduce(&local.count, &bad, 1, MPI_LONG_LONG, MPI_SUM, dec.comm);
    if (bad > 0) {
      failed_at = t;
      try {
        agree(dec.comm, local.count ? local.describe() : "");
      } catch (const UsageError& e) {
        r.error = "validation failed at t=" + std::to_string(t) + ": " + e.what() + ", " +
                  std::to_string(bad) + " in all";
      }
    }
  }
  timers.loop = MPI_Wtime() - start;
  MPI_Pcontrol(0);
  r.valid = failed_at == 0;
  agree(dec.comm, profiles.close());

  {
    const std::string path = rank_file(dir, "task", dec.rank, "log");
    std::ofstream log(path);
    log << task_log<Real>(info, dec, cfg, timers, r.steps, local, failed_at);
    log.close();
    agree(dec.comm, log ? "" : "cannot write '" + path + "'");
  }

  const std::pair<const char*, double> values[] = {
      {"loop", timers.loop},     {"compute", timers.compute}, {"diag", timers.diag},
      {"comm", timers.comm},     {"x", timers.dir[0]},        {"y", timers.dir[1]},
      {"z", timers.dir[2]},      {"pack", timers.pack},       {"unpack", timers.unpack},
      {"mpi", timers.mpi()}};
  for (const auto& [name, v] : values) r.timers.emplace_back(name, over_ranks(v, dec.comm));
  r.bytes_per_step = strategy->bytes_per_step(g);
  r.compute_bytes_per_step = 2 * 3 * std::size_t(g.l) * g.m * g.n * sizeof(Real);
  return r;
}

// Memory one rank needs: three fields plus pack buffers (estimate made before
// allocating so an oversized run fails cleanly rather than in the allocator).
double bytes_per_rank(const Grid& g, Precision p) {
  const double real = p == Precision::Single ? 4.0 : 8.0;
  double most_plane = 0;
  for (int d = 0; d < 3; ++d) most_plane = std::max(most_plane, double(plane_count(g, d)));
  const double cells = double(g.l + 2) * double(g.m + 2) * double(g.n + 2);
  return real * (3.0 * cells + 2.0 * 3.0 * most_plane);
}

// Checks that depend on the machine: memory, output locations.
void check_resources(const HaloConfig& cfg, const Decomposition& dec,
                     const std::vector<const StrategyInfo*>& chosen) {
  int local_rank = 0, local_size = 1;
  node_local(dec.comm, local_rank, local_size);
  collectively(dec.comm, [&] {
    for (int d = 0; d < 3; ++d)
      if (3.0 * double(plane_count(dec.grid, d)) > 2147483647.0)
        throw UsageError("local block too large: one halo message would exceed 2^31 elements");
    const double need = bytes_per_rank(dec.grid, cfg.precision) * local_size;
    const unsigned long long have = available_memory_bytes();
    if (have > 0 && need > double(have)) {
      throw UsageError("not enough memory: " + std::to_string(local_size) + " ranks on this node need " +
                       human_bytes(need) + ", " + human_bytes(double(have)) + " available");
    }
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

void print_header(const HaloConfig& cfg, const Decomposition& dec, const RunContext& ctx,
                  const std::vector<const StrategyInfo*>& chosen) {
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
      << "  output         : " << cfg.outdir << "/<strategy>/\n";
  std::cout << out.str() << std::flush;
}

std::string pad(std::string s, size_t width, bool right = true) {
  if (s.size() >= width) return s;
  return right ? std::string(width - s.size(), ' ') + s : s + std::string(width - s.size(), ' ');
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
    out << pad(r.info->id + " " + r.info->alias, 24, false) << pad(sec("loop"), 10) << pad(pct("compute"), 7)
        << pad(pct("comm"), 7) << pad(sec("x"), 10) << pad(sec("y"), 10) << pad(sec("z"), 10)
        << pad(sec("pack"), 10) << pad(sec("unpack"), 10) << "  " << (r.valid ? "valid" : "INVALID") << "\n";
  }
  out << "(times: max over ranks; %comp and %MPI of the loop time)\n";
  std::cout << out.str() << std::flush;
}

Json results_json(const HaloConfig& cfg, const Decomposition& dec, const RunContext& ctx,
                  const std::vector<StrategyResult>& results) {
  Json root = Json::object();
  root["schema"] = "checkmpi.halo/1";
  Json context = context_json(ctx);
  context["precision"] = precision_name(cfg.precision);
  context["dims"] = Json::array_of(std::vector<int>(dec.dims.begin(), dec.dims.end()));
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
  config["sync"] = cfg.sync == SyncMode::Barrier ? "barrier" : "none";
  config["outdir"] = cfg.outdir;
  config["strategies"] = Json::array_of(cfg.strategies);
  root["config"] = config;
  Json list = Json::array();
  for (const auto& r : results) {
    Json j = Json::object();
    j["strategy"] = r.info->id;
    j["alias"] = r.info->alias;
    j["step"] = r.info->number;
    j["valid"] = r.valid;
    j["error"] = r.error.empty() ? Json() : Json(r.error);
    j["steps"] = r.steps;
    Json timers = Json::object();
    for (const auto& [name, s] : r.timers) {
      Json t = Json::object();
      t["min"] = s.min;
      t["mean"] = s.mean;
      t["max"] = s.max;
      timers[name] = t;
    }
    j["timers"] = timers;
    j["bytes_per_step"] = static_cast<unsigned long long>(r.bytes_per_step);
    j["compute_bytes_per_step"] = static_cast<unsigned long long>(r.compute_bytes_per_step);
    list.push(j);
  }
  root["results"] = list;
  return root;
}

// Host memory-copy bandwidth on buffers the size of the three fields' interior
// (bytes read + written per second), best of five: the yardstick the bench
// compares the compute phase against, measured in the same process.
double memcpy_bandwidth(const Grid& g, Precision p) {
  const std::size_t bytes = 3 * std::size_t(g.l) * g.m * g.n * (p == Precision::Single ? 4 : 8);
  std::vector<char> a(bytes, 1), b(bytes, 0);
  double best = 1e300;
  for (int rep = 0; rep < 5; ++rep) {
    const double t0 = MPI_Wtime();
    std::memcpy(b.data(), a.data(), bytes);
    best = std::min(best, MPI_Wtime() - t0);
    a[rep] = b[bytes - 1 - rep];  // keeps the copies observable
  }
  return best > 0 ? 2.0 * double(bytes) / best : 0.0;
}

}  // namespace

int halo_main(int argc, char** argv) {
  MPI_Comm world = MPI_COMM_WORLD;
  int rank = 0;
  MPI_Comm_rank(world, &rank);
  Decomposition dec;
  try {
    CommandLine cli = halo_command_line();
    collectively(world, [&] { cli.parse(argc, argv); });
    if (cli.has("help") || cli.has("version") || cli.has("list-strategies")) {
      if (rank == 0) {
        if (cli.has("help")) std::cout << cli.help();
        else if (cli.has("version")) std::cout << "checkmpi-halo " << version_text() << "\n";
        else std::cout << strategy_listing();
      }
      return kExitOk;
    }

    // Rank 0 reads the input; everyone parses the same text.
    std::string text;
    const bool with_input = !cli.has("no-input");
    const std::string input = cli.get("input", "file.input");
    if (with_input) {
      collectively(world, [&] {
        if (rank == 0) text = read_text_file(input, "input file");
      });
      int len = int(text.size());
      MPI_Bcast(&len, 1, MPI_INT, 0, world);
      text.resize(size_t(len));
      MPI_Bcast(text.data(), len, MPI_CHAR, 0, world);
    }
    const HaloConfig cfg = collectively(world, [&] { return make_halo_config(cli, text); });
    const auto chosen = collectively(world, [&] { return select_strategies(cfg.strategies); });
    dec = collectively(world, [&] { return make_decomposition(cfg, world); });
    check_resources(cfg, dec, chosen);

    const RunContext ctx = gather_context(dec.comm, "checkmpi-halo");
    if (rank == 0) print_header(cfg, dec, ctx, chosen);

    std::vector<StrategyResult> results;
    for (size_t i = 0; i < chosen.size(); ++i) {
      const StrategyInfo& info = *chosen[i];
      if (rank == 0)
        std::cout << "[" << i + 1 << "/" << chosen.size() << "] " << info.id << " (" << info.alias << ") ..."
                  << std::flush;
      results.push_back(cfg.precision == Precision::Single ? run_strategy<float>(info, dec, cfg)
                                                           : run_strategy<double>(info, dec, cfg));
      const auto& r = results.back();
      if (rank == 0) {
        std::cout << " " << fixed(r.timer("loop").max, 3) << " s, " << (r.valid ? "valid" : "INVALID") << "\n";
        if (!r.valid) std::cerr << "checkmpi-halo: " << info.id << ": " << r.error << "\n";
      }
    }

    Json doc = results_json(cfg, dec, ctx, results);
    if (cli.has("memcpy-probe")) {
      const Stats bw = over_ranks(memcpy_bandwidth(dec.grid, cfg.precision), dec.comm);
      Json probe = Json::object();
      probe["min"] = bw.min;
      probe["mean"] = bw.mean;
      probe["max"] = bw.max;
      doc["probes"]["memcpy_bandwidth"] = probe;
      if (rank == 0) std::cout << "memcpy bandwidth: " << fixed(bw.mean / 1e9, 2) << " GB/s per rank (mean)\n";
    }
    if (rank == 0) {
      print_table(results);
      if (!cfg.json.empty()) {
        if (!write_file(cfg.json, doc.dump() + "\n"))
          std::cerr << "checkmpi-halo: error: cannot write JSON file '" << cfg.json << "'\n";
        else std::cout << "results written to " << cfg.json << "\n";
      }
    }
    bool all_valid = true;
    for (const auto& r : results) all_valid = all_valid && r.valid;
    free_decomposition(dec);
    return all_valid ? kExitOk : kExitInvalid;
  } catch (const UsageError& e) {
    if (rank == 0) std::cerr << "checkmpi-halo: error: " << e.what() << "\n";
    free_decomposition(dec);
    return kExitUsage;
  }
}

}  // namespace checkmpi
