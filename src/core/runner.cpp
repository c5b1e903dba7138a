#include "core/runner.hpp"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <utility>

#include "backends/cuda.hpp"
#include "core/context.hpp"
#include "core/errors.hpp"
#include "core/output.hpp"
#include "core/strategy.hpp"

namespace checkmpi {

namespace {

struct Stats {
  double min = 0, mean = 0, max = 0;
};

Json stats_json(const Stats& s) {
  Json j = Json::object();
  j["min"] = s.min;
  j["mean"] = s.mean;
  j["max"] = s.max;
  return j;
}

// Minimum, mean and maximum over ranks of each value, in three reductions
// whatever the number of values (each collective costs a round of messages).
std::vector<Stats> over_ranks(const std::vector<double>& v, MPI_Comm comm) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  const int n = int(v.size());
  std::vector<double> lo(v.size()), hi(v.size()), sum(v.size());
  MPI_Allreduce(v.data(), lo.data(), n, MPI_DOUBLE, MPI_MIN, comm);
  MPI_Allreduce(v.data(), hi.data(), n, MPI_DOUBLE, MPI_MAX, comm);
  MPI_Allreduce(v.data(), sum.data(), n, MPI_DOUBLE, MPI_SUM, comm);
  std::vector<Stats> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) out[i] = Stats{lo[i], sum[i] / size, hi[i]};
  return out;
}

// Where the kernels run, decided once for the whole job: the same kind on
// every rank, each rank on one GPU of its node.
struct BackendChoice {
  BackendKind kind = BackendKind::Host;
  std::string why_host;           // --backend auto chose host: why (empty otherwise)
  std::optional<bool> gpu_aware;  // MPI's answer, the same on every rank; nullopt: it cannot tell
  std::string aware_query;        // how MPI was asked
  bool device_buffers = false;    // cuda: MPI gets device memory (CUDA-aware and no --stage)
  int device = -1;                // this rank's GPU
  int sharing = 0;                // ranks of this node on that GPU
  std::vector<int> devices;       // cuda: every rank's GPU, in rank order
  std::vector<std::string> names; // and its name
};

// Collective: every rank takes the same decision, and a rank that cannot
// follow it (no GPU) makes all of them stop with the same error.
BackendChoice choose_backend(const HaloConfig& cfg, MPI_Comm comm) {
  BackendChoice c;
  // Unknown on one rank is unknown for all, so that all ranks stage or none.
  const std::optional<bool> aware = mpi_cuda_aware(&c.aware_query);
  int mine = aware ? int(*aware) : -1, least = -1;
  MPI_Allreduce(&mine, &least, 1, MPI_INT, MPI_MIN, comm);
  if (least >= 0) c.gpu_aware = least == 1;

  std::string why;
  const int devices = cuda_device_count(&why);
  int fewest = 0;
  MPI_Allreduce(&devices, &fewest, 1, MPI_INT, MPI_MIN, comm);
  if (cfg.backend == BackendRequest::Host) return c;
  if (cfg.backend == BackendRequest::Auto && fewest == 0) {
    c.why_host = !cuda_built() ? "built without CUDA"
                 : devices == 0 ? "no CUDA device visible (" + why + ")"
                                : "some rank sees no CUDA device";
    return c;
  }
  collectively(comm, [&] {
    if (!cuda_built()) throw UsageError("--backend cuda: " + why);
    if (devices == 0) throw UsageError("--backend cuda: no CUDA device visible (" + why + ")");
    if (cfg.require_gpu_aware && c.gpu_aware != true)
      throw UsageError(std::string("--require-gpu-aware: ") +
                       (c.gpu_aware ? "MPI is not CUDA-aware" : "cannot tell whether MPI is CUDA-aware") + " (" +
                       c.aware_query + ")");
  });
  c.kind = BackendKind::Cuda;
  c.device_buffers = c.gpu_aware == true && !cfg.stage;
  int local_rank = 0, local_size = 1;
  node_local(comm, local_rank, local_size);
  c.device = local_rank % devices;
  c.sharing = (local_size - c.device + devices - 1) / devices;  // local ranks r with r % devices == device
  int size = 1;
  MPI_Comm_size(comm, &size);
  c.devices.resize(size_t(size));
  MPI_Allgather(&c.device, 1, MPI_INT, c.devices.data(), 1, MPI_INT, comm);
  c.names = allgather_strings(comm, cuda_device_name(c.device));
  return c;
}

template <class Real>
std::unique_ptr<Backend<Real>> make_backend(const BackendChoice& c) {
  if (c.kind == BackendKind::Cuda) return make_cuda_backend<Real>(c.device, c.device_buffers);
  return make_host_backend<Real>();
}

// Host-only strategies (step0-step2 exchange host memory in place) cannot run
// on the cuda backend: named explicitly they are a usage error; picked by
// "all" they are taken out of `chosen` and returned, to be reported.
struct Skipped {
  const StrategyInfo* info;
  std::string reason;
};

std::vector<Skipped> skip_host_only(std::vector<const StrategyInfo*>& chosen, const HaloConfig& cfg,
                                    BackendKind kind) {
  if (kind == BackendKind::Host) return {};
  const std::string reason = "host only: it exchanges host memory directly, and the cuda backend keeps the "
                             "fields on the GPU (run it with --backend host)";
  for (const std::string& name : cfg.strategies) {
    if (name == "all") continue;
    const StrategyInfo& s = *select_strategies({name})[0];
    if (s.host_only) throw UsageError(s.id + " (" + s.alias + ") cannot run on the cuda backend: " + reason);
  }
  std::vector<Skipped> skipped;
  std::vector<const StrategyInfo*> kept;
  for (const StrategyInfo* s : chosen) {
    if (s->host_only) skipped.push_back({s, reason});
    else kept.push_back(s);
  }
  chosen = kept;
  return skipped;
}

struct StrategyResult {
  const StrategyInfo* info = nullptr;
  bool valid = true;
  std::string error;
  long long steps = 0;
  std::vector<std::pair<std::string, Stats>> timers;  // JSON order
  std::string mpi_buffers;  // "host", "device" or "staged"
  std::string note;         // what the table should say beside the verdict
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

// The fields in the backend's memory: the host arrays themselves when the
// backend can address them, else backend copies that diagnostics bring back.
template <class Real>
class BackendFields {
 public:
  BackendFields(Backend<Real>& backend, Fields<Real>& host) : backend_(backend), host_(host) {
    if (backend.host_accessible()) {
      ptrs = host.pointers();
    } else {
      for (Real*& p : owned_) p = backend.allocate(host.grid.cells());
      ptrs = owned_;
    }
  }
  ~BackendFields() {
    for (Real* p : owned_)
      if (p) backend_.release(p);
  }
  BackendFields(const BackendFields&) = delete;
  BackendFields& operator=(const BackendFields&) = delete;

  // Host -> `at` and back; `at` is where a strategy keeps the fields now
  // (step10 swaps buffers), and copies to the same place are skipped.
  void upload(FieldPtrs<Real> at) {
    for (int f = 0; f < 3; ++f) backend_.upload(at[f], host_.data(f), host_.grid.cells());
  }
  void download(FieldPtrs<Real> at) {
    for (int f = 0; f < 3; ++f) backend_.download(host_.data(f), at[f], host_.grid.cells());
  }

  FieldPtrs<Real> ptrs{};

 private:
  Backend<Real>& backend_;
  Fields<Real>& host_;
  FieldPtrs<Real> owned_{};
};

template <class Real>
StrategyResult run_strategy(const StrategyInfo& info, const Decomposition& dec, const HaloConfig& cfg,
                            const BackendChoice& choice) {
  const Grid& g = dec.grid;
  const InitialProfiles<Real> initial(g);
  Fields<Real> fields(g);
  initialise(fields, initial);
  const auto backend = make_backend<Real>(choice);
  BackendFields<Real> on_backend(*backend, fields);
  on_backend.upload(on_backend.ptrs);
  StepTimers timers;
  HaloState<Real> state{dec, g, on_backend.ptrs, cfg, timers, *backend};
  auto strategy = info.make<Real>();
  strategy->setup(state);
  for (long long w = 0; w < cfg.warmup; ++w) strategy->step(state);
  if (cfg.warmup > 0) {  // the timed loop starts from the initial state
    initialise(fields, initial);
    on_backend.upload(state.f);
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
    if (corrupt && t == 1) {
      on_backend.download(state.f);
      fields.f[0][g.index(1, 1, 1)] += Real(1);
      on_backend.upload(state.f);
    }
    r.steps = t;
    if (t % cfg.icheck != 0 && t != cfg.itfin) continue;
    Timed diag(timers.diag);
    on_backend.download(state.f);
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
      {"loop", timers.loop},   {"compute", timers.compute},     {"diag", timers.diag},
      {"comm", timers.comm},   {"x", timers.dir[0]},            {"y", timers.dir[1]},
      {"z", timers.dir[2]},    {"pack", timers.pack},           {"unpack", timers.unpack},
      {"mpi", timers.mpi()},   {"pack_x", timers.pack_dir[0]},  {"pack_y", timers.pack_dir[1]},
      {"pack_z", timers.pack_dir[2]}, {"unpack_x", timers.unpack_dir[0]}, {"unpack_y", timers.unpack_dir[1]},
      {"unpack_z", timers.unpack_dir[2]}};
  std::vector<double> local_values;
  for (const auto& value : values) local_values.push_back(value.second);
  const std::vector<Stats> stats = over_ranks(local_values, dec.comm);
  for (size_t i = 0; i < stats.size(); ++i) r.timers.emplace_back(values[i].first, stats[i]);
  r.mpi_buffers = strategy->mpi_buffers(state);
  if (backend->kind() == BackendKind::Host) r.note = info.host_note;
  if (r.mpi_buffers == "staged") r.note = "staged through host memory";
  r.bytes_per_step = strategy->bytes_per_step(g);
  r.compute_bytes_per_step = 2 * 3 * std::size_t(g.l) * g.m * g.n * sizeof(Real);
  return r;
}

// Memory one rank needs at most: three fields and three temporaries (or a
// second buffer), plus one three-field message per direction, sign and way
// (estimate made before allocating so an oversized run fails cleanly rather
// than in the allocator).
double bytes_per_rank(const Grid& g, Precision p) {
  const double real = p == Precision::Single ? 4.0 : 8.0;
  double planes = 0;
  for (int d = 0; d < 3; ++d) planes += double(plane_count(g, d));
  const double cells = double(g.l + 2) * double(g.m + 2) * double(g.n + 2);
  return real * (6.0 * cells + 2.0 * 2.0 * 3.0 * planes);
}

// Checks that depend on the machine: memory, output locations.
void check_resources(const HaloConfig& cfg, const Decomposition& dec, const BackendChoice& backend,
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
    if (backend.kind != BackendKind::Cuda) return;
    // The same arrays in device memory, for the ranks sharing this GPU.
    const double need_gpu = bytes_per_rank(dec.grid, cfg.precision) * backend.sharing;
    const double free_gpu = double(cuda_free_memory(backend.device));
    if (need_gpu > free_gpu)
      throw UsageError("not enough GPU memory: " + std::to_string(backend.sharing) + " rank(s) on GPU " +
                       std::to_string(backend.device) + " need " + human_bytes(need_gpu) + ", " +
                       human_bytes(free_gpu) + " free");
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

std::string backend_line(const BackendChoice& c) {
  if (c.kind == BackendKind::Host) return make_host_backend<float>()->describe();
  return "cuda, one GPU per rank: node-local rank modulo the node's GPUs";
}

// Directions in which every rank is its own neighbour, and how those
// exchanges are done.
std::string self_exchange(const HaloConfig& cfg, const Decomposition& dec) {
  std::string dirs;
  for (int d = 0; d < 3; ++d)
    if (dec.dims[d] == 1) dirs += std::string(dirs.empty() ? "" : ",") + "xyz"[d];
  if (dirs.empty()) return "none";
  return dirs + (cfg.self_copy ? " by local copy (--self-copy)" : " through MPI to the rank itself");
}

// What MPI is handed on the cuda backend, and why.
std::string cuda_mpi_line(const BackendChoice& c, const HaloConfig& cfg) {
  std::string line = c.gpu_aware ? (*c.gpu_aware ? "yes" : "no") : "unknown";
  line += " (" + c.aware_query + "): ";
  if (c.device_buffers) return line + "device buffers from step4 on (step3 stages by design)";
  line += "every message staged through pinned host memory";
  if (c.gpu_aware == true && cfg.stage) line += " (--stage)";
  return line;
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
      << "  backend        : " << backend_line(backend) << "\n";
  if (!backend.why_host.empty() && cuda_built()) out << "                   (auto: " << backend.why_host << ")\n";
  if (backend.kind == BackendKind::Cuda) {
    for (size_t r = 0; r < backend.devices.size(); ++r)
      out << (r == 0 ? "  GPUs           : " : "                   ") << "rank " << r << " -> node "
          << ctx.node_of_rank[r] << " (" << ctx.hostnames[r] << ") -> GPU " << backend.devices[r] << " "
          << backend.names[r] << "\n";
    out << "  CUDA-aware MPI : " << cuda_mpi_line(backend, cfg) << "\n";
  }
  out
      << "  self exchange  : " << self_exchange(cfg, dec) << "\n"
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
        << pad(sec("pack"), 10) << pad(sec("unpack"), 10) << "  " << (r.valid ? "valid" : "INVALID")
        << (r.note.empty() ? "" : "  (" + r.note + ")") << "\n";
  }
  out << "(times: max over ranks; %comp and %MPI of the loop time)\n";
  std::cout << out.str() << std::flush;
}

Json results_json(const HaloConfig& cfg, const Decomposition& dec, const RunContext& ctx,
                  const BackendChoice& backend, const std::vector<StrategyResult>& results,
                  const std::vector<Skipped>& skipped) {
  Json root = Json::object();
  root["schema"] = "checkmpi.halo/1";
  Json context = context_json(ctx);
  context["precision"] = precision_name(cfg.precision);
  context["dims"] = Json::array_of(std::vector<int>(dec.dims.begin(), dec.dims.end()));
  context["backend"] = backend.kind == BackendKind::Cuda ? "cuda" : "host";
  context["omp_threads"] = host_threads();
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
  config["sync"] = cfg.sync == SyncMode::Barrier ? "barrier" : "none";
  config["self_copy"] = cfg.self_copy;
  config["self_exchange"] = self_exchange(cfg, dec);
  config["outdir"] = cfg.outdir;
  config["strategies"] = Json::array_of(cfg.strategies);
  config["backend"] = backend_request_name(cfg.backend);
  config["require_gpu_aware"] = cfg.require_gpu_aware;
  config["stage"] = cfg.stage;
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
    j["mpi_buffers"] = r.mpi_buffers;
    j["note"] = r.note.empty() ? Json() : Json(r.note);
    Json timers = Json::object();
    for (const auto& [name, s] : r.timers) timers[name] = stats_json(s);
    j["timers"] = timers;
    j["bytes_per_step"] = static_cast<unsigned long long>(r.bytes_per_step);
    j["compute_bytes_per_step"] = static_cast<unsigned long long>(r.compute_bytes_per_step);
    list.push(j);
  }
  root["results"] = list;
  Json skips = Json::array();
  for (const Skipped& k : skipped) {
    Json j = Json::object();
    j["strategy"] = k.info->id;
    j["alias"] = k.info->alias;
    j["reason"] = k.reason;
    skips.push(j);
  }
  root["skipped"] = skips;
  return root;
}

// Memory-copy bandwidth on buffers the size of the three fields' interior
// (bytes read + written per second), best of five: the yardstick the bench
// compares the compute phase against, measured in the same process. On the
// cuda backend, device-to-device cudaMemcpy on this rank's GPU.
double memcpy_bandwidth(const Grid& g, Precision p, const BackendChoice& backend) {
  const std::size_t bytes = 3 * std::size_t(g.l) * g.m * g.n * (p == Precision::Single ? 4 : 8);
  if (backend.kind == BackendKind::Cuda) return cuda_memcpy_bandwidth(backend.device, bytes);
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
  set_default_host_threads();
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
    auto chosen = collectively(world, [&] { return select_strategies(cfg.strategies); });
    dec = collectively(world, [&] { return make_decomposition(cfg, world); });
    const BackendChoice backend = choose_backend(cfg, dec.comm);
    const auto skipped = collectively(world, [&] { return skip_host_only(chosen, cfg, backend.kind); });
    check_resources(cfg, dec, backend, chosen);

    const RunContext ctx = gather_context(dec.comm, "checkmpi-halo");
    if (rank == 0) {
      print_header(cfg, dec, ctx, chosen, backend);
      for (const Skipped& k : skipped)
        std::cout << "skipped " << k.info->id << " (" << k.info->alias << "): " << k.reason << "\n";
    }

    std::vector<StrategyResult> results;
    for (size_t i = 0; i < chosen.size(); ++i) {
      const StrategyInfo& info = *chosen[i];
      if (rank == 0)
        std::cout << "[" << i + 1 << "/" << chosen.size() << "] " << info.id << " (" << info.alias << ") ..."
                  << std::flush;
      results.push_back(cfg.precision == Precision::Single ? run_strategy<float>(info, dec, cfg, backend)
                                                           : run_strategy<double>(info, dec, cfg, backend));
      const auto& r = results.back();
      if (rank == 0) {
        std::cout << " " << fixed(r.timer("loop").max, 3) << " s, " << (r.valid ? "valid" : "INVALID") << "\n";
        if (!r.valid) std::cerr << "checkmpi-halo: " << info.id << ": " << r.error << "\n";
      }
    }

    Json doc = results_json(cfg, dec, ctx, backend, results, skipped);
    if (cli.has("memcpy-probe")) {
      const Stats bw = over_ranks({memcpy_bandwidth(dec.grid, cfg.precision, backend)}, dec.comm)[0];
      doc["probes"]["memcpy_bandwidth"] = stats_json(bw);
      if (rank == 0)
        std::cout << (backend.kind == BackendKind::Cuda ? "device-to-device cudaMemcpy" : "memcpy")
                  << " bandwidth: " << fixed(bw.mean / 1e9, 2) << " GB/s per rank (mean)\n";
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
