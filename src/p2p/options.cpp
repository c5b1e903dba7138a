#include "p2p/options.hpp"

#include <mpi.h>

#include <algorithm>
#include <climits>
#include <sstream>

#include "core/errors.hpp"
#include "core/saturating.hpp"
#include "core/watchdog.hpp"
#include "p2p/workload.hpp"

namespace checkmpi::p2p {

namespace {

struct ModeDefaults {
  Mode mode;
  const char* name;
  long long min_size, max_size;
  long long iterations, warmup, iterations_large, warmup_large;
};

// pingpong and bw: the OSU micro-benchmarks' osu_latency and osu_bw counts;
// the others repeat multi-message patterns, so fewer repetitions do.
const ModeDefaults kModes[] = {
    {Mode::PingPong, "pingpong", 1, 4194304, 10000, 100, 1000, 10},
    {Mode::Bandwidth, "bw", 1, 4194304, 100, 10, 20, 2},
    {Mode::Ring, "ring", 1, 4194304, 1000, 10, 100, 2},
    {Mode::LogGP, "loggp", 1, 4194304, 1000, 10, 100, 2},
    {Mode::Datatype, "datatype", kElementBytes, 4194304, 1000, 10, 100, 2},
    // OSU's collective benchmarks: up to 1 MiB, 1000 + 100 iterations up to
    // 8 KiB, 100 + 10 above; from 4 B, one float for iallreduce.
    {Mode::Nbc, "nbc", 4, 1048576, 1000, 100, 100, 10},
    {Mode::Self, "self", 1, 4194304, 10000, 100, 1000, 10},
    // OSU's osu_barrier: 1000 iterations after 200 warm-up; no message.
    {Mode::Barrier, "barrier", 0, 0, 1000, 200, 1000, 200},
    // OSU's osu_bibw and osu_mbw_mr: osu_bw's counts.
    {Mode::Bibw, "bibw", 1, 4194304, 100, 10, 20, 2},
    {Mode::MbwMr, "mbw-mr", 1, 4194304, 100, 10, 20, 2},
    // OSU's blocking collectives (osu_allreduce ...): as nbc.
    {Mode::Coll, "coll", 4, 1048576, 1000, 100, 100, 10},
    // OSU's osu_put_latency and siblings: osu_latency's counts.
    {Mode::Rma, "rma", 1, 4194304, 10000, 100, 1000, 10},
};

struct OpName {
  NbcOp op;
  const char* name;
};
const OpName kOps[] = {{NbcOp::Ialltoall, "ialltoall"},
                       {NbcOp::Ialltoallv, "ialltoallv"},
                       {NbcOp::Iallreduce, "iallreduce"},
                       {NbcOp::Ibcast, "ibcast"}};

const struct {
  CollOp op;
  const char* name;
} kCollOps[] = {{CollOp::Allreduce, "allreduce"}, {CollOp::Alltoall, "alltoall"},
                {CollOp::Alltoallv, "alltoallv"}, {CollOp::Bcast, "bcast"},
                {CollOp::Allgather, "allgather"}, {CollOp::ReduceScatter, "reduce-scatter"},
                {CollOp::Barrier, "barrier"}};
const struct {
  RmaOp op;
  const char* name;
} kRmaOps[] = {{RmaOp::Put, "put"}, {RmaOp::Get, "get"}, {RmaOp::Acc, "acc"}};
const struct {
  RmaSync sync;
  const char* name;
} kSyncs[] = {{RmaSync::Fence, "fence"}, {RmaSync::Pscw, "pscw"}, {RmaSync::Lock, "lock"},
              {RmaSync::LockAll, "lock-all"}, {RmaSync::Flush, "flush"}};

std::string mode_list() {
  std::string names;
  for (const auto& m : kModes) names += (names.empty() ? "" : ", ") + std::string(m.name);
  return names;
}

// At most `most` (default: far above any useful run, so that products of
// counts stay far from overflow).
long long positive(const CommandLine& cli, const std::string& name, long long fallback, long long least = 1,
                   long long most = 1000000000) {
  const long long v = cli.get_int(name, fallback);
  if (v < least)
    throw UsageError("--" + name + " must be at least " + std::to_string(least) + ", got " + std::to_string(v));
  if (v > most)
    throw UsageError("--" + name + " " + std::to_string(v) + " is too large: at most " + std::to_string(most));
  return v;
}

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  std::string part;
  std::istringstream in(text);
  while (std::getline(in, part, sep)) parts.push_back(part);
  if (!text.empty() && text.back() == sep) parts.emplace_back();
  return parts;
}

// A comma-separated list of `option`: at least one item, none twice, "all"
// alone (an empty list ran nothing and exited 0; a name twice was measured twice).
std::vector<std::string> list_items(const std::string& text, const std::string& option) {
  const auto items = split(text, ',');
  if (items.empty()) throw UsageError(option + " needs at least one item");
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (items[i] == "all" && items.size() > 1) throw UsageError(option + ": 'all' names every one; give it alone");
    for (std::size_t k = 0; k < i; ++k)
      if (items[k] == items[i]) throw UsageError(option + " names '" + items[i] + "' twice");
  }
  return items;
}

// "ialltoall,ibcast" or "all".
std::vector<NbcOp> parse_ops(const std::string& text) {
  std::vector<NbcOp> ops;
  for (const auto& item : list_items(text, "--op")) {
    if (item == "all") {
      for (const auto& o : kOps) ops.push_back(o.op);
      continue;
    }
    const OpName* found = nullptr;
    for (const auto& o : kOps)
      if (item == o.name) found = &o;
    if (!found) throw UsageError("unknown --op '" + item + "' (ialltoall, ialltoallv, iallreduce, ibcast, all)");
    ops.push_back(found->op);
  }
  return ops;
}

// "a,b" or "all" against a table of {value, name}: the values in the order given.
template <class Table>
auto parse_names(const std::string& text, const Table& table, const char* what)
    -> std::vector<decltype(table[0].op)> {
  std::vector<decltype(table[0].op)> out;
  std::string names;
  for (const auto& t : table) names += std::string(t.name) + ", ";
  for (const auto& item : list_items(text, "--op")) {
    if (item == "all") {
      for (const auto& t : table) out.push_back(t.op);
      continue;
    }
    bool found = false;
    for (const auto& t : table)
      if (item == t.name) out.push_back(t.op), found = true;
    if (!found) throw UsageError(std::string("unknown --op '") + item + "' for mode " + what + " (" + names + "all)");
  }
  return out;
}

constexpr long long kMaxProgress = 1000000;

std::vector<long long> parse_progress(const std::string& text) {
  std::vector<long long> counts;
  for (const auto& item : list_items(text, "--progress")) {
    const long long n = parse_integer(item, "--progress");
    if (n < 0) throw UsageError("--progress counts must not be negative, got " + std::to_string(n));
    if (n > kMaxProgress)  // each is that many MPI_Test calls in every operation
      throw UsageError("--progress count " + std::to_string(n) + " is too large: at most " +
                       std::to_string(kMaxProgress));
    counts.push_back(n);
  }
  return counts;
}

// "AxB" or "AxBxC" into positive numbers.
std::vector<long long> parse_dims(const std::string& text, size_t count, const std::string& what) {
  const auto parts = split(text, 'x');
  if (parts.size() != count) throw UsageError("value of " + what + " is not " + (count == 2 ? "PxQ" : "NXxNYxNZ") +
                                              ": '" + text + "'");
  std::vector<long long> dims;
  for (const auto& p : parts) {
    const long long v = parse_integer(p, what);
    if (v < 1) throw UsageError(what + " '" + text + "': every extent must be at least 1");
    dims.push_back(v);
  }
  return dims;
}

void parse_nbc(const CommandLine& cli, P2PConfig& cfg) {
  cfg.ops = parse_ops(cli.get("op", "all"));
  if (auto p = cli.value("progress")) cfg.progress = parse_progress(*p);
  cfg.progress_thread = cli.has("progress-thread");
  cfg.osu_clock = cli.has("osu-clock");
  if (!cli.has("pencil")) {
    if (cli.has("grid")) throw UsageError("--grid applies with --pencil only");
    return;
  }
  if (cli.has("op")) throw UsageError("--op does not apply with --pencil (it measures the x_to_y and y_to_z transposes)");
  if (cli.has("message-size")) throw UsageError("--message-size does not apply with --pencil (--grid sets the sizes)");
  const auto pq = parse_dims(cli.get("pencil", ""), 2, "--pencil");
  if (pq[0] > INT_MAX || pq[1] > INT_MAX)
    throw UsageError("--pencil '" + cli.get("pencil", "") + "' is too large: each count at most " +
                     std::to_string(INT_MAX));
  cfg.pencil_rows = int(pq[0]);
  cfg.pencil_cols = int(pq[1]);
  for (const auto& item : list_items(cli.get("grid", "16x16x16,32x32x32,64x64x64,128x128x128"), "--grid")) {
    const auto d = parse_dims(item, 3, "--grid");
    const PencilGrid g{{d[0], d[1], d[2]}, cfg.pencil_rows, cfg.pencil_cols};
    if (g.grid.nx < g.p_row || g.grid.ny < std::max(g.p_row, g.p_col) || g.grid.nz < g.p_col)
      throw UsageError("grid " + g.grid.text() + " is too small for " + std::to_string(g.p_row) + "x" +
                       std::to_string(g.p_col) + " pencils: every rank needs at least one cell in each");
    for (Pencil p : {Pencil::X, Pencil::Y, Pencil::Z})
      if (g.box(p, g.p_row - 1, g.p_col - 1).count() > INT_MAX)  // the last ranks hold the largest pencils
        throw UsageError("grid " + g.grid.text() + ": a pencil holds more cells than an MPI count can");
    cfg.grids.push_back(g.grid);
  }
}

void parse_size_range(const std::string& text, P2PConfig& cfg) {
  const auto parts = split(text, ':');
  if (parts.empty() || parts.size() > 2)
    throw UsageError("value of --message-size is not MIN:MAX or MAX: '" + text + "'");
  if (parts.size() == 2) cfg.min_size = parse_integer(parts[0], "--message-size (MIN)");
  cfg.max_size = parse_integer(parts.back(), "--message-size (MAX)");
  if (cfg.min_size < 0) throw UsageError("message sizes must not be negative, got " + std::to_string(cfg.min_size));
  if (cfg.min_size > cfg.max_size && parts.size() == 1)  // MAX alone: MIN is the mode's smallest size
    throw UsageError("-m " + text + ": MAX " + std::to_string(cfg.max_size) + " is below this mode's smallest size " +
                     std::to_string(cfg.min_size) + "; give MIN:MAX");
  if (cfg.min_size > cfg.max_size)
    throw UsageError("message size range " + text + ": MIN " + std::to_string(cfg.min_size) +
                     " is larger than MAX " + std::to_string(cfg.max_size));
  if (cfg.max_size > INT_MAX)
    throw UsageError("message size " + std::to_string(cfg.max_size) + " exceeds MPI's count limit " +
                     std::to_string(INT_MAX));
}

}  // namespace

long long VectorShape::payload_bytes() const { return sat_mul(sat_mul(count, blocklen), kElementBytes); }
long long VectorShape::extent_bytes() const {
  return sat_mul(sat_add(sat_mul(count - 1, stride), blocklen), kElementBytes);
}

const char* mode_name(Mode m) {
  for (const auto& d : kModes)
    if (d.mode == m) return d.name;
  return "?";
}

const char* nbc_op_name(NbcOp op) {
  for (const auto& o : kOps)
    if (o.op == op) return o.name;
  return "?";
}

const char* coll_op_name(CollOp op) {
  for (const auto& o : kCollOps)
    if (o.op == op) return o.name;
  return "?";
}

const char* rma_op_name(RmaOp op) {
  for (const auto& o : kRmaOps)
    if (o.op == op) return o.name;
  return "?";
}

const char* rma_sync_name(RmaSync sync) {
  for (const auto& o : kSyncs)
    if (o.sync == sync) return o.name;
  return "?";
}

int wanted_thread_level(int argc, char** argv) {
  int level = MPI_THREAD_SINGLE;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--progress-thread") level = std::max(level, int(MPI_THREAD_FUNNELED));
    std::string value;
    if (a == "--threads" && i + 1 < argc) value = argv[i + 1];
    else if (a.rfind("--threads=", 0) == 0) value = a.substr(10);
    else continue;
    // Anything but 1 asks for threads (a bad value is refused later, by the parser).
    if (value != "1") return MPI_THREAD_MULTIPLE;
  }
  return level;
}

const char* buffer_name(BufferKind b) { return b == BufferKind::Cuda ? "cuda" : "host"; }

const char* mpi_buffers_name(const P2PConfig& cfg) {
  if (cfg.buffer == BufferKind::Host) return "host";
  return cfg.mpi_device_buffers ? "device" : "staged";
}

CommandLine p2p_command_line() {
  std::vector<OptionSpec> specs{
      {"message-size", 'm', true, "MIN:MAX or MAX, bytes, powers of two from MIN (default 1:4194304; datatype "
                                  "4:4194304)", false, "MIN:MAX"},
      {"iters", 'i', true, "timed iterations per size, all sizes (default by mode, see docs/p2p.md)", false, "N"},
      {"warmup", 'x', true, "untimed warm-up iterations per size, all sizes (default by mode)", false, "N"},
      {"window", 'W', true, "bw, bibw, mbw-mr: non-blocking sends in flight (default 64); rma: operations per "
                            "synchronisation (default 1: latency, as osu_put_latency; more: as osu_put_bw)", false, "N"},
      {"prtt-n", 0, true, "loggp: messages per PRTT(n,.,s) (default 10)", false, "N"},
      {"vectors", 0, true, "datatype: COUNT:BLOCKLEN:STRIDE,... in floats (default: stride-4 sweep)", false, "LIST"},
      {"op", 0, true, "nbc: ialltoall, ialltoallv, iallreduce, ibcast; coll: allreduce, alltoall, alltoallv, bcast, "
                      "allgather, reduce-scatter, barrier; rma: put, get, acc; comma-separated, or all (default all)",
       false, "LIST"},
      {"sync", 0, true, "rma: fence, pscw, lock, lock-all or flush (default flush, as OSU)", false, "MODE"},
      {"threads", 0, true, "pingpong: threads per rank, each pair on its own communicator (MPI_THREAD_MULTIPLE; "
                           "default 1)", false, "T"},
      {"progress", 0, true, "nbc: MPI_Test calls spread over the compute, N or N,N,... (default 0)", false, "N,..."},
      {"progress-thread", 0, false, "nbc: start the MPI library's progress thread where it has one"},
      {"osu-clock", 0, false, "nbc: read the clock as osu_ialltoall does, a pair around each phase of the "
                              "overlapped loop (its overall time then holds four more clock reads)"},
      {"pencil", 0, true, "nbc: PxQ pencil transposes (2DECOMP&FFT) of --grid instead of --op; P*Q = ranks", false,
       "PxQ"},
      {"grid", 0, true, "nbc --pencil: NXxNYxNZ,... doubles (default 16^3,32^3,64^3,128^3)", false, "LIST"},
      {"buffer", 0, true, "where buffers live: host or cuda (GPU memory; MPI gets it when CUDA-aware, else "
                          "staged through pinned host memory) (default host)", false, "host|cuda"},
      {"repeat", 0, true, "run the sweep N times, interleaved (1 2 4 ... 1 2 4 ...); statistics over all (default 1)",
       false, "N"},
      {"block", 0, true, "iterations per timed block (default: enough that a clock read costs at most 1% of one); 1 "
                         "times every iteration alone, its clock read included, as osu_latency and osu_bw do",
       false, "N"},
      {"validate", 'c', false, "check received data every iteration, outside the timed region"},
      {"json", 0, true, "write results as JSON (schema checkmpi.p2p/2) to this file", false, "FILE"},
      {"events", 0, true, "write the sweep's progress as JSON lines to FILE, one as each size starts (for a "
                          "program that follows the run)", false, "FILE"},
      {"watchdog", 0, true, "seconds without progress after which the job is diagnosed and aborted; 0: off "
                            "(default from the largest message, at least 60)", false, "S"},
      {"force", 0, false, "run even if the estimate says the sweep takes more than an hour"},
      {"help", 'h', false, "show this help and exit"},
      {"version", 0, false, "print the version and exit"},
      {"inject-corruption", 0, true, "test only: SIZE:OFFSET flips that payload byte before sending", true},
  };
  std::string synopsis = "MODE [options]\n\nmodes:\n"
                         "  pingpong   half round-trip latency per size (OSU osu_latency)\n"
                         "  bw         streaming bandwidth with a window of non-blocking sends (OSU osu_bw)\n"
                         "  ring       exchange with both neighbours on a periodic ring, 2..P ranks\n"
                         "  loggp      LogGP parameters by the PRTT method (Hoefler et al., NetGauge)\n"
                         "  datatype   MPI_Type_vector versus hand packing (LogGOP's O)\n"
                         "  nbc        non-blocking collectives: overlap with computation (OSU), pencil transposes\n"
                         "  self       a message rank 0 sends to itself through MPI (MPI_Sendrecv), per size\n"
                         "  barrier    MPI_Barrier latency on 2, 4, 8, ... and all ranks (OSU osu_barrier)\n"
                         "  bibw       bidirectional bandwidth: both ranks send a window at once (OSU osu_bibw)\n"
                         "  mbw-mr     P/2 pairs at once: aggregate bandwidth and message rate (OSU osu_mbw_mr)\n"
                         "  coll       blocking collectives' latency, min/avg/max over ranks (OSU osu_allreduce ...)\n"
                         "  rma        one-sided put, get, accumulate, rank 0 to rank 1 (OSU osu_put_latency ...)";
  // -n was loggp's message count; -n means ranks in checkmpi's commands.
  return CommandLine("checkmpi-p2p", synopsis, specs, {{"-n", "prtt-n"}, {"--iterations", "iters"}});
}

P2PConfig make_p2p_config(const CommandLine& cli) {
  const auto& args = cli.positional();
  if (args.empty()) throw UsageError("no mode given (" + mode_list() + ")");
  if (args.size() > 1) throw UsageError("unexpected argument '" + args[1] + "'");
  const ModeDefaults* d = nullptr;
  for (const auto& m : kModes)
    if (args[0] == m.name) d = &m;
  if (!d) throw UsageError("unknown mode '" + args[0] + "' (" + mode_list() + ")");

  P2PConfig cfg;
  cfg.mode = d->mode;
  cfg.min_size = d->min_size;
  cfg.max_size = d->max_size;
  if (auto m = cli.value("message-size")) {
    if (cfg.mode == Mode::Barrier) throw UsageError("--message-size does not apply to mode barrier (no message)");
    parse_size_range(*m, cfg);
  }
  cfg.iterations = cfg.iterations_large = positive(cli, "iters", d->iterations);
  if (!cli.has("iters")) cfg.iterations_large = d->iterations_large;
  cfg.warmup = cfg.warmup_large = positive(cli, "warmup", d->warmup, 0);
  if (!cli.has("warmup")) cfg.warmup_large = d->warmup_large;
  const bool windowed = cfg.mode == Mode::Bandwidth || cfg.mode == Mode::Bibw || cfg.mode == Mode::MbwMr ||
                        cfg.mode == Mode::Rma;
  if (cli.has("window") && !windowed) throw UsageError("--window applies to modes bw, bibw, mbw-mr and rma only");
  if (cli.has("prtt-n") && cfg.mode != Mode::LogGP) throw UsageError("--prtt-n applies to mode loggp only");
  cfg.window = positive(cli, "window", cfg.mode == Mode::Rma ? 1 : cfg.window, 1, INT_MAX / 2);
  cfg.n = positive(cli, "prtt-n", cfg.n, 2, INT_MAX);
  cfg.repeat = positive(cli, "repeat", 1, 1, 1000000);
  if (cli.has("block")) {
    if (cfg.mode == Mode::Nbc || cfg.mode == Mode::Coll || cfg.mode == Mode::MbwMr)
      throw UsageError(std::string("--block does not apply to mode ") + mode_name(cfg.mode) +
                       " (it times every iteration alone, as OSU)");
    cfg.block = positive(cli, "block", 0, 1);
  }
  cfg.watchdog = watchdog_option(cli);
  cfg.force = cli.has("force");

  const std::string buffer = cli.get("buffer", "host");
  if (buffer != "host" && buffer != "cuda") throw UsageError("unknown --buffer '" + buffer + "' (host, cuda)");
  cfg.buffer = buffer == "cuda" ? BufferKind::Cuda : BufferKind::Host;
  if (cfg.buffer == BufferKind::Cuda &&
      (cfg.mode == Mode::Nbc || cfg.mode == Mode::Barrier || cfg.mode == Mode::Coll || cfg.mode == Mode::Rma))
    throw UsageError(std::string("--buffer cuda does not apply to mode ") + mode_name(cfg.mode) +
                     (cfg.mode == Mode::Barrier ? " (no message)"
                      : cfg.mode == Mode::Rma   ? " (its windows are host memory)"
                                                : " (its operations use host buffers)"));

  cfg.validate = cli.has("validate");
  if (cfg.validate && cfg.mode == Mode::Barrier)  // the header said "validation on"
    throw UsageError("-c does not apply to mode barrier (no message to check)");
  if (cfg.validate && cli.has("block"))  // a validated run times every iteration alone; the JSON recorded N
    throw UsageError("--block does not apply with -c (every iteration is checked, and timed, alone)");
  cfg.json = cli.get("json", "");
  cfg.events = cli.get("events", "");
  if (cli.has("json") && cfg.json.empty()) throw UsageError("--json needs a file name");
  if (cli.has("events") && cfg.events.empty()) throw UsageError("--events needs a file name");

  if (cfg.mode == Mode::Datatype) {
    cfg.default_sweep = !cli.has("vectors");
    cfg.vectors = cfg.default_sweep ? default_vector_sweep(cfg.min_size, cfg.max_size)
                                    : parse_vectors(cli.get("vectors", ""));
    if (cfg.vectors.empty())
      throw UsageError("no datatype tuple of the default sweep has a payload between " +
                       std::to_string(cfg.min_size) + " and " + std::to_string(cfg.max_size) + " bytes");
    if (!cfg.default_sweep && cli.has("message-size"))
      throw UsageError("--message-size does not apply with --vectors (the tuples set the sizes)");
  } else if (cli.has("vectors")) {
    throw UsageError("--vectors applies to mode datatype only");
  }
  if (cfg.mode == Mode::Nbc) {
    parse_nbc(cli, cfg);
  } else {
    for (const char* name : {"progress", "progress-thread", "osu-clock", "pencil", "grid"})
      if (cli.has(name)) throw UsageError(std::string("--") + name + " applies to mode nbc only");
    if (cli.has("op") && cfg.mode != Mode::Coll && cfg.mode != Mode::Rma)
      throw UsageError("--op applies to modes nbc, coll and rma only");
  }
  if (cfg.mode == Mode::Coll) cfg.coll_ops = parse_names(cli.get("op", "all"), kCollOps, "coll");
  if (cfg.mode == Mode::Rma) {
    cfg.rma_ops = parse_names(cli.get("op", "all"), kRmaOps, "rma");
    const std::string sync = cli.get("sync", "flush");
    bool found = false;
    for (const auto& k : kSyncs)
      if (sync == k.name) cfg.sync = k.sync, found = true;
    if (!found) throw UsageError("unknown --sync '" + sync + "' (fence, pscw, lock, lock-all, flush)");
  } else if (cli.has("sync")) {
    throw UsageError("--sync applies to mode rma only");
  }
  if (cli.has("threads")) {
    if (cfg.mode != Mode::PingPong) throw UsageError("--threads applies to mode pingpong only");
    cfg.threads = int(positive(cli, "threads", 1, 1, kMaxThreads));
    if (cfg.threads > 1 && cfg.buffer == BufferKind::Cuda)
      throw UsageError("--threads " + std::to_string(cfg.threads) + " does not apply with --buffer cuda");
  }

  if (auto c = cli.value("inject-corruption")) {
    const auto parts = split(*c, ':');
    if (parts.size() != 2) throw UsageError("value of --inject-corruption is not SIZE:OFFSET: '" + *c + "'");
    cfg.corrupt_size = parse_integer(parts[0], "--inject-corruption (SIZE)");
    cfg.corrupt_offset = parse_integer(parts[1], "--inject-corruption (OFFSET)");
    if (cfg.corrupt_offset < 0 || cfg.corrupt_offset >= cfg.corrupt_size)
      throw UsageError("--inject-corruption: OFFSET must lie inside SIZE");
    // A fault that is never injected would let a test pass for the wrong reason.
    bool measured = false;
    if (cfg.mode == Mode::Datatype)
      for (const auto& v : cfg.vectors) measured = measured || v.payload_bytes() == cfg.corrupt_size;
    else if (cfg.mode == Mode::Nbc && cfg.pencil_rows > 0) {
      // The sizes come from every rank's transpose plan: bounded work only.
      if (static_cast<long long>(cfg.pencil_rows) * cfg.pencil_cols > 65536)
        throw UsageError("--inject-corruption with --pencil works up to 65536 ranks");
      for (long long size : pencil_message_sizes(cfg)) measured = measured || size == cfg.corrupt_size;
    }
    else if (cfg.mode == Mode::Coll) {
      for (CollOp op : cfg.coll_ops)
        for (long long size : coll_sizes(cfg, op)) measured = measured || (size > 0 && size == cfg.corrupt_size);
    } else
      for (long long size : message_sizes(cfg)) measured = measured || size == cfg.corrupt_size;
    if (!measured)
      throw UsageError("--inject-corruption: no message of " + std::to_string(cfg.corrupt_size) +
                       " bytes is measured in this run");
  }
  return cfg;
}

std::vector<VectorShape> parse_vectors(const std::string& text) {
  if (text.empty()) throw UsageError("--vectors needs at least one COUNT:BLOCKLEN:STRIDE tuple");
  std::vector<VectorShape> list;
  for (const auto& item : split(text, ',')) {
    const auto f = split(item, ':');
    if (f.size() != 3) throw UsageError("datatype tuple '" + item + "' is not COUNT:BLOCKLEN:STRIDE");
    const std::string what = "datatype tuple '" + item + "'";
    const VectorShape v{parse_integer(f[0], what), parse_integer(f[1], what), parse_integer(f[2], what)};
    if (v.count < 1 || v.blocklen < 1)
      throw UsageError(what + ": count and blocklen must be at least 1");
    if (v.stride < v.blocklen)
      throw UsageError(what + ": stride " + std::to_string(v.stride) + " is smaller than blocklen " +
                       std::to_string(v.blocklen));
    if (v.count > INT_MAX || v.stride > INT_MAX || v.extent_bytes() > INT_MAX)
      throw UsageError(what + ": the type spans more bytes than an MPI count can hold");
    list.push_back(v);
  }
  return list;
}

}  // namespace checkmpi::p2p
