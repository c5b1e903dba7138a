#include "p2p/main.hpp"

#include <mpi.h>

#include <iostream>
#include <sstream>

#include "backends/cuda.hpp"
#include "core/atomic_file.hpp"
#include "core/context.hpp"
#include "core/errors.hpp"
#include "core/events.hpp"
#include "core/placement.hpp"
#include "core/text.hpp"
#include "core/watchdog.hpp"
#include "p2p/estimate.hpp"
#include "p2p/modes.hpp"
#include "p2p/progress.hpp"
#include "p2p/workload.hpp"

namespace checkmpi::p2p {

namespace {

constexpr double kLongRun = 3600;  // seconds: a sweep that surely takes longer needs --force

const char* thread_level_name(int level) {
  switch (level) {
    case MPI_THREAD_SINGLE: return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED: return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED: return "MPI_THREAD_SERIALIZED";
    case MPI_THREAD_MULTIPLE: return "MPI_THREAD_MULTIPLE";
  }
  return "an unknown thread level";
}

// How many ranks take part: two, one (self), or (ring, nbc, barrier) all.
int participants(const P2PConfig& cfg, int nprocs) {
  if (cfg.mode == Mode::Self) return 1;
  return cfg.mode == Mode::Ring || cfg.mode == Mode::Nbc || cfg.mode == Mode::Barrier || cfg.mode == Mode::MbwMr ||
                 cfg.mode == Mode::Coll
             ? nprocs
             : 2;
}

// --buffer cuda: every rank needs a GPU (local rank modulo the devices, as
// checkmpi-halo), and all hand MPI device pointers or all stage, as the
// least CUDA-aware rank allows (unknown counts as not).
void choose_device(P2PConfig& cfg, MPI_Comm world) {
  if (cfg.buffer != BufferKind::Cuda) return;
  std::string why;
  const int devices = cuda_device_count(&why);
  int fewest = 0;
  MPI_Allreduce(&devices, &fewest, 1, MPI_INT, MPI_MIN, world);
  collectively(world, [&] {
    if (!cuda_built()) throw UsageError("--buffer cuda: " + why);
    if (devices == 0) throw UsageError("--buffer cuda: no CUDA device visible (" + why + ")");
    if (fewest == 0) throw UsageError("--buffer cuda: some rank sees no CUDA device");
  });
  const std::optional<bool> aware = mpi_cuda_aware(&cfg.aware_query);
  int mine = aware ? int(*aware) : 0, least = 0;
  MPI_Allreduce(&mine, &least, 1, MPI_INT, MPI_MIN, world);
  cfg.mpi_device_buffers = least == 1;
  int local_rank = 0, local_size = 1;
  node_local(world, local_rank, local_size);
  cfg.device = local_rank % devices;
  cfg.device_name = cuda_device_name(cfg.device);
}

// Checks that depend on the ranks and the machine, before anything is allocated.
void check_resources(const P2PConfig& cfg, MPI_Comm world) {
  int rank = 0, nprocs = 1, local_rank = 0, local_size = 1;
  MPI_Comm_rank(world, &rank);
  MPI_Comm_size(world, &nprocs);
  node_local(world, local_rank, local_size);
  collectively(world, [&] {
    if (nprocs < 2 && cfg.mode != Mode::Self)
      throw UsageError(std::string("mode ") + mode_name(cfg.mode) + " needs at least 2 MPI ranks, got " +
                       std::to_string(nprocs));
    if (cfg.mode == Mode::Nbc) {
      const std::string problem = nbc_rank_problem(cfg, nprocs);
      if (!problem.empty()) throw UsageError(problem);
    }
    if (const std::string problem = rank_problem(cfg, nprocs); !problem.empty()) throw UsageError(problem);
    int level = MPI_THREAD_SINGLE;
    MPI_Query_thread(&level);
    if (cfg.threads > 1 && level < MPI_THREAD_MULTIPLE)
      throw UsageError("--threads " + std::to_string(cfg.threads) +
                       " needs MPI_THREAD_MULTIPLE; this MPI library provides " + thread_level_name(level));
    const double need = memory_bytes_per_rank(cfg, nprocs) * local_size;
    const unsigned long long have = available_memory_bytes();
    if (have > 0 && need > double(have))
      throw UsageError("not enough memory: " + std::to_string(local_size) + " ranks on this node need " +
                       human_bytes(need) + " of buffers and samples, " + human_bytes(double(have)) + " available");
    const double least = fastest_run_seconds(cfg, nprocs);
    if (least > kLongRun && !cfg.force)
      throw UsageError("this sweep would take at least " + fixed(least / 3600, 1) +
                       " h; --force runs it anyway");
  });
  collectively(world, [&] {
    if (rank != 0 || cfg.json.empty()) return;
    const std::string error = check_writable_file(cfg.json, "JSON file");
    if (!error.empty()) throw UsageError(error);
  });
}

Json config_json(const P2PConfig& cfg, int nprocs) {
  Json c = Json::object();
  c["mode"] = mode_name(cfg.mode);
  c["buffer"] = buffer_name(cfg.buffer);
  c["mpi_buffers"] = mpi_buffers_name(cfg);
  if (cfg.buffer == BufferKind::Cuda) {
    Json gpu = Json::object();
    gpu["device"] = cfg.device;
    gpu["name"] = cfg.device_name;
    gpu["aware_query"] = cfg.aware_query;
    c["gpu"] = gpu;
  } else {
    c["gpu"] = Json();
  }
  c["validate"] = cfg.validate;
  c["min_size"] = cfg.min_size;
  c["max_size"] = cfg.max_size;
  c["iterations"] = cfg.iterations;
  c["warmup"] = cfg.warmup;
  c["iterations_large"] = cfg.iterations_large;
  c["warmup_large"] = cfg.warmup_large;
  c["large_threshold"] = cfg.large_threshold;
  c["window"] = cfg.window;
  c["n"] = cfg.n;
  c["repeat"] = cfg.repeat;
  if (cfg.block > 0) c["block"] = cfg.block;
  c["noise_thresholds"] = noise_thresholds_json();
  if (cfg.mode == Mode::Ring) {
    Json ranks = Json::array();
    for (int p = 2; p <= nprocs; ++p) ranks.push(p);
    c["ranks"] = ranks;
  }
  if (cfg.mode == Mode::Barrier) c["ranks"] = Json::array_of(barrier_ranks(nprocs));
  if (cfg.mode == Mode::Datatype) {
    c["element"] = "float";
    c["default_sweep"] = cfg.default_sweep;
    Json list = Json::array();
    for (const auto& v : cfg.vectors) {
      Json t = Json::object();
      t["count"] = v.count;
      t["blocklen"] = v.blocklen;
      t["stride"] = v.stride;
      list.push(t);
    }
    c["vectors"] = list;
  }
  if (cfg.mode == Mode::PingPong) c["threads"] = cfg.threads;
  if (cfg.mode == Mode::Coll) {
    Json ops = Json::array();
    for (CollOp op : cfg.coll_ops) ops.push(coll_op_name(op));
    c["ops"] = ops;
  }
  if (cfg.mode == Mode::Rma) {
    Json ops = Json::array();
    for (RmaOp op : cfg.rma_ops) ops.push(rma_op_name(op));
    c["ops"] = ops;
    c["sync"] = rma_sync_name(cfg.sync);
  }
  if (cfg.mode == Mode::Nbc) {
    Json ops = Json::array();
    for (NbcOp op : cfg.ops) ops.push(nbc_op_name(op));
    c["ops"] = cfg.pencil_rows > 0 ? Json::array_of(std::vector<std::string>{"x_to_y", "y_to_z"}) : ops;
    c["progress"] = Json::array_of(cfg.progress);
    c["progress_thread"] = cfg.progress_thread;
    c["osu_clock"] = cfg.osu_clock;
    c["pencil"] = cfg.pencil_rows > 0 ? Json::array_of(std::vector<int>{cfg.pencil_rows, cfg.pencil_cols}) : Json();
    Json grids = Json::array();
    for (const Grid3& g : cfg.grids) grids.push(Json::array_of(std::vector<long long>{g.nx, g.ny, g.nz}));
    c["grids"] = grids;
  }
  return c;
}

std::string header(const P2PConfig& cfg, const RunContext& ctx, const std::vector<Placement>& where,
                   const ProgressThread& progress) {
  std::ostringstream out;
  const int taking_part = participants(cfg, ctx.nprocs);
  out << "checkmpi-p2p " << version_text() << "\n"
      << "  MPI library : " << ctx.mpi_library << "\n"
      << "  mode        : " << mode_name(cfg.mode) << ", buffer " << buffer_name(cfg.buffer) << ", validation "
      << (cfg.validate ? "on (-c)" : "off") << "\n";
  if (cfg.buffer == BufferKind::Cuda)
    out << "  GPU         : device " << cfg.device << " (" << cfg.device_name << ") on rank 0; MPI gets "
        << (cfg.mpi_device_buffers ? "device pointers (CUDA-aware, " : "pinned host copies, staged (not CUDA-aware, ")
        << cfg.aware_query << ")\n";
  out << "  ranks       : " << ctx.nprocs << " on " << ctx.nodes << " node(s)";
  if (taking_part < ctx.nprocs)
    out << (taking_part == 1 ? ", rank 0 measures" : ", ranks 0 and 1 measure") << ", the others wait";
  out << "\n";
  for (int r = 0; r < taking_part; ++r)
    out << "  rank " << r << "      : " << where[size_t(r)].hostname << ", cpu " << where[size_t(r)].cpu << "\n";
  if (taking_part == 2) out << "  placement   : " << describe_pair(where[0], where[1]) << "\n";
  if (cfg.mode == Mode::MbwMr)
    for (int i = 0; i < ctx.nprocs / 2; ++i)
      out << "  pair " << i << "      : rank " << i << " -> rank " << i + ctx.nprocs / 2 << ", "
          << describe_pair(where[size_t(i)], where[size_t(i + ctx.nprocs / 2)]) << "\n";
  if (cfg.mode == Mode::PingPong && cfg.threads > 1)
    out << "  threads     : " << cfg.threads << " per rank (MPI_THREAD_MULTIPLE), thread t of rank 0 with thread t "
        << "of rank 1 on its own communicator, each size's iterations shared among them\n";
  if (cfg.mode == Mode::Rma)
    out << "  rma         : rank 0 origin, rank 1 target (MPI_Win_allocate), synchronisation "
        << rma_sync_name(cfg.sync) << ", " << cfg.window << " operation(s) per epoch\n";
  if (cfg.mode == Mode::Nbc) out << "  progress    : " << progress.note << "\n";
  const char* unit = cfg.mode == Mode::Datatype ? " payload bytes" : " bytes";
  if (cfg.mode == Mode::Barrier) {
    out << "  ranks timed :";
    for (int p : barrier_ranks(ctx.nprocs)) out << " " << p;
    out << "\n  iterations  : " << cfg.iterations;
  } else if (cfg.pencil_rows > 0) {
    out << "  pencils     : " << cfg.pencil_rows << "x" << cfg.pencil_cols << ", grids";
    for (const Grid3& g : cfg.grids) out << " " << g.text();
    out << " (doubles)\n  iterations  : " << cfg.iterations;
  } else {
    out << "  sizes       : " << cfg.min_size << " .. " << cfg.max_size << unit << "; " << cfg.iterations;
  }
  out
      << " iterations + " << cfg.warmup << " warm-up up to " << cfg.large_threshold << " B, "
      << cfg.iterations_large << " + " << cfg.warmup_large << " above\n";
  return out.str();
}

void run_mode(const P2PConfig& cfg, MPI_Comm world, double clock, const std::vector<Placement>& where,
              ModeOutput& out) {
  int rank = 0, nprocs = 1;
  MPI_Comm_rank(world, &rank);
  MPI_Comm_size(world, &nprocs);
  if (cfg.mode == Mode::Ring) return run_ring(Session{cfg, world, rank, nprocs, clock}, out);
  if (cfg.mode == Mode::Nbc) return run_nbc(Session{cfg, world, rank, nprocs, clock}, out);
  if (cfg.mode == Mode::Barrier) return run_barrier(Session{cfg, world, rank, nprocs, clock}, out);
  if (cfg.mode == Mode::Coll) return run_coll(Session{cfg, world, rank, nprocs, clock}, out);
  if (cfg.mode == Mode::MbwMr) return run_mbw_mr(Session{cfg, world, rank, nprocs, clock}, out, where);
  if (cfg.mode == Mode::Self)
    return on_first_ranks(world, 1, [&](MPI_Comm alone) { run_self(Session{cfg, alone, rank, 1, clock}, out); });
  on_first_ranks(world, 2, [&](MPI_Comm pair) {
    const Session s{cfg, pair, rank, 2, clock};
    switch (cfg.mode) {
      case Mode::PingPong: return cfg.threads > 1 ? run_pingpong_threads(s, out) : run_pingpong(s, out);
      case Mode::Bibw: return run_bibw(s, out);
      case Mode::Rma: return run_rma(s, out);
      case Mode::Bandwidth: return run_bandwidth(s, out);
      case Mode::LogGP: return run_loggp(s, out);
      case Mode::Datatype: return run_datatype(s, out);
      case Mode::Ring:
      case Mode::Nbc:
      case Mode::Self:
      case Mode::Barrier:
      case Mode::MbwMr:
      case Mode::Coll: return;
    }
  });
}

}  // namespace

int p2p_main(int argc, char** argv, int progress_setting) {
  MPI_Comm world = MPI_COMM_WORLD;
  int rank = 0, nprocs = 1;
  MPI_Comm_rank(world, &rank);
  MPI_Comm_size(world, &nprocs);
  try {
    CommandLine cli = p2p_command_line();
    collectively(world, [&] { cli.parse(argc, argv); });
    same_arguments(world, argc, argv);
    if (cli.has("help") || cli.has("version")) {
      if (rank == 0) std::cout << (cli.has("help") ? cli.help() : "checkmpi-p2p " + version_text() + "\n");
      return kExitOk;
    }
    P2PConfig cfg = collectively(world, [&] { return make_p2p_config(cli); });
    if (rank == 0)
      for (const std::string& line : cli.deprecations())  // one write per line (a tagging launcher tags each)
        std::cerr << (std::string("checkmpi-p2p: warning: ") + line + "\n");
    choose_device(cfg, world);
    check_resources(cfg, world);
    collectively(world, [&] { events::open(cfg.events, rank, "checkmpi-p2p", {{cfg.json, "--json file"}}); });
    const Watchdog watchdog("checkmpi-p2p", watchdog_seconds(cfg), rank);
    progress::at("gathering the run's context", "all ranks (collectives)");

    const RunContext ctx = gather_context(world, "checkmpi-p2p");
    const std::vector<Placement> where = gather_placement(world, ctx);
    const double clock = clock_cost();
    const ProgressThread progress = progress_thread_state(cfg.progress_thread, progress_setting);
    if (rank == 0) std::cout << header(cfg, ctx, where, progress) << std::flush;

    // A validation failure reaches every rank (exit 3); rank 0 still
    // reports what was measured before it.
    ModeOutput out;
    std::string invalid;
    progress::at("starting the measurement", "all ranks (collectives)");
    try {
      run_mode(cfg, world, clock, where, out);
    } catch (const ValidationError& e) {
      invalid = e.what();
    }
    progress::at("reporting", "");
    const int code = invalid.empty() ? kExitOk : kExitInvalid;
    if (rank != 0) return code;
    for (const std::string& why : out.noise) out.table += "# warning: " + why + "\n";
    std::cout << out.table << std::flush;
    if (!invalid.empty()) std::cerr << (std::string("checkmpi-p2p: validation failed: ") + invalid + "\n");
    if (cfg.json.empty()) return code;
    Json doc = Json::object();
    doc["schema"] = "checkmpi.p2p/2";
    Json context = context_json(ctx);
    context["placement"] = placement_json(where);
    context["same_node"] = participants(cfg, nprocs) == 2 ? Json(where[0].node == where[1].node) : Json();
    context["clock_cost"] = clock;
    if (cfg.mode == Mode::Nbc) context["progress_thread"] = progress_thread_json(progress);
    if (cfg.mode == Mode::MbwMr) context["pairs"] = pairs_json(where);
    if (cfg.mode == Mode::PingPong && cfg.threads > 1) {
      int level = MPI_THREAD_SINGLE;
      MPI_Query_thread(&level);
      context["thread_level"] = thread_level_name(level);
    }
    doc["context"] = context;
    doc["config"] = config_json(cfg, nprocs);
    doc["mode"] = mode_name(cfg.mode);
    doc["results"] = out.results;
    doc["fits"] = out.fits;
    doc["noise"] = Json::array_of(out.noise);
    doc["valid"] = invalid.empty();
    doc["error"] = invalid.empty() ? Json() : Json(invalid);
    if (const std::string error = write_file(cfg.json, doc.dump() + "\n"); !error.empty()) {
      std::cerr << (std::string("checkmpi-p2p: error: ") + error + "\n");
      return kExitInternal;
    }
    std::cout << "results written to " << cfg.json << "\n";
    return code;
  } catch (const UsageError& e) {
    if (rank == 0) std::cerr << (std::string("checkmpi-p2p: error: ") + e.what() + "\n");
    return kExitUsage;
  }
}

}  // namespace checkmpi::p2p
