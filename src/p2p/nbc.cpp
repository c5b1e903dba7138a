// nbc: non-blocking collectives against their blocking twins, and how much
// of them the library overlaps with computation, measured as the OSU
// micro-benchmarks do (osu_ialltoall and its siblings): for each size,
//   1. the blocking collective, timed alone;
//   2. pure communication: post + MPI_Wait, nothing between;
//   3. per --progress count N: post, compute for this rank's mean pure
//      communication time with N MPI_Test calls spread over it, MPI_Wait.
// Every iteration is timed alone and followed by a barrier; -c fills and
// checks the data around every iteration, outside the timed region. The
// points (operation x size, or grid x transpose) are a sweep like every
// mode's: --repeat N runs them N times, interleaved, and pools the runs.
#include <algorithm>

#include "core/watchdog.hpp"
#include "p2p/heap.hpp"
#include "p2p/modes.hpp"
#include "p2p/nbc_ops.hpp"
#include "p2p/overlap.hpp"
#include "p2p/timed.hpp"
#include "p2p/workload.hpp"

namespace checkmpi::p2p {

namespace {

// One point of the sweep.
struct Case {
  std::string op;
  NbcOp nbc_op = NbcOp::Ialltoall;  // without --pencil
  Transpose transpose = Transpose::XtoY;  // with --pencil
  long long size = 0;  // bytes a rank sends (pencil: the most any rank sends)
  bool pencil = false;
  Grid3 grid;
  int comm_size = 0;                       // pencil: ranks in the sub-communicator
  long long bytes_min = 0, bytes_max = 0;  // pencil: bytes a rank sends, over ranks
  std::string heading;                     // the table's heading above this point, "" when it goes on
  std::string label() const {
    return pencil ? format("%s %s, %lld B", op.c_str(), grid.text().c_str(), size)
                  : format("%s, %lld B", op.c_str(), size);
  }
};

// The overlapped loop of one MPI_Test count.
struct Phases {
  Timed init, compute, test, wait, overall;
  explicit Phases(long long n) : init(n), compute(n), test(n), wait(n), overall(n) {}
};

// A point's runs, pooled on rank 0.
struct Point {
  Pooled blocking, pure, target;
  struct Overlapped {
    Pooled init, compute, test, wait, overall;
  };
  std::vector<Overlapped> overlapped;  // per --progress count
  long long iterations = 0;            // timed iterations of each loop per rank, all runs
};

// Runs warm-up and timed iterations of body(timed); -c prepares before and
// verifies after each, outside the timing; a barrier ends each (as OSU).
// `base` numbers the iterations so that every loop's data differ.
template <class Body>
void iterate(const Session& s, Collective& c, LoopCounts n, long long base, Body&& body) {
  for (long long i = 0; i < n.warmup + n.iterations; ++i) {
    progress::beat(base + i + 1);
    if (s.cfg.validate) c.prepare(base + i);
    body(i >= n.warmup);
    if (s.cfg.validate) settle(s.comm, c.verify(base + i));
    MPI_Barrier(s.comm);
  }
}

// Measures one point once (all ranks) and adds the run to `point` (rank 0).
void measure(const Session& s, Collective& c, long long size, Point& point) {
  const LoopCounts n = loop_counts(s.cfg, size);
  const long long per_loop = n.warmup + n.iterations;
  Timed blocking(n.iterations), pure(n.iterations);
  std::vector<Phases> runs;  // one overlapped loop per MPI_Test count
  runs.reserve(s.cfg.progress.size());
  for (std::size_t p = 0; p < s.cfg.progress.size(); ++p) runs.emplace_back(n.iterations);
  // Last before the loops: the library's schedules are carved from the heap's top, as in a small program
  // (p2p/heap.hpp).
  const SmallChunkHold hold;
  iterate(s, c, n, 0, [&](bool timed) {
    const double t0 = MPI_Wtime();
    c.blocking();
    if (timed) blocking.add(MPI_Wtime() - t0);
  });
  iterate(s, c, n, per_loop, [&](bool timed) {
    MPI_Request r;
    const double t0 = MPI_Wtime();
    c.post(&r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    if (timed) pure.add(MPI_Wtime() - t0);
  });
  // OSU: each rank computes for its own mean pure communication time.
  const double target = pure.total() / double(n.iterations);
  const bool osu_clock = s.cfg.osu_clock;
  for (std::size_t p = 0; p < s.cfg.progress.size(); ++p) {
    const long long tests = s.cfg.progress[p];
    Phases& ph = runs[p];
    iterate(s, c, n, per_loop * static_cast<long long>(2 + p), [&](bool timed) {
      MPI_Request r;
      double init, compute, in_test, wait = 0.0, t2 = 0.0;
      const double t0 = MPI_Wtime();
      if (osu_clock) {  // osu_ialltoall's reads: t_start, a pair around each phase, t_stop
        const double i0 = MPI_Wtime();
        c.post(&r);
        init = MPI_Wtime() - i0;
        const double c0 = MPI_Wtime();
        in_test = compute_and_probe(target, tests, &r);
        compute = MPI_Wtime() - c0;
        const double w0 = MPI_Wtime();
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        wait = MPI_Wtime() - w0;
      } else {  // one read between phases: it ends one and starts the next
        c.post(&r);
        const double t1 = MPI_Wtime();
        in_test = compute_and_probe(target, tests, &r);
        t2 = MPI_Wtime();
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        init = t1 - t0;
        compute = t2 - t1;
      }
      const double t3 = MPI_Wtime();
      if (!osu_clock) wait = t3 - t2;
      if (!timed) return;
      ph.init.add(init);
      ph.compute.add(compute);
      ph.test.add(in_test);
      ph.wait.add(wait);
      ph.overall.add(t3 - t0);
    });
  }
  Timed targets(1);
  targets.add(target);
  // Gathered in the same order on every rank; kept on rank 0.
  const bool root = s.rank == 0;
  auto keep = [&](Pooled& into, const Timed& t) {
    const Samples all = gather(s, t);
    if (root) into.add(all);
  };
  keep(point.blocking, blocking);
  keep(point.pure, pure);
  keep(point.target, targets);
  point.overlapped.resize(runs.size());
  for (std::size_t p = 0; p < runs.size(); ++p) {
    keep(point.overlapped[p].init, runs[p].init);
    keep(point.overlapped[p].compute, runs[p].compute);
    keep(point.overlapped[p].test, runs[p].test);
    keep(point.overlapped[p].wait, runs[p].wait);
    keep(point.overlapped[p].overall, runs[p].overall);
  }
  point.iterations += n.iterations;
}

const char* header =
    "# Size         Tests     Blocking    Pure comm      Compute         Init     MPI_Test     MPI_Wait"
    "      Overall  Overlap(%)\n";
const char* pencil_header =
    "# Transpose  Grid               Bytes  Tests     Blocking    Pure comm      Compute         Init     MPI_Test"
    "     MPI_Wait      Overall  Overlap(%)\n";

// Rank 0: the results of one point, one per MPI_Test count, and their rows.
void report(const Session& s, ModeOutput& out, const Case& k, Point& point) {
  if (s.rank != 0) return;
  out.table += k.heading;
  const std::string what = k.label();
  const Stats blocking = sample_stats(point.blocking.all), pure = sample_stats(point.pure.all),
              target = sample_stats(point.target.all);
  note_tail(out, blocking, what + " blocking");
  note_tail(out, pure, what + " pure_comm");
  const Json shared = repeats_json(out, what, {{"blocking", &point.blocking}, {"pure_comm", &point.pure}});
  for (std::size_t p = 0; p < point.overlapped.size(); ++p) {
    const Point::Overlapped& o = point.overlapped[p];
    const long long tests = s.cfg.progress[p];
    const Stats init = sample_stats(o.init.all), compute = sample_stats(o.compute.all),
                test = sample_stats(o.test.all), wait = sample_stats(o.wait.all),
                overall = sample_stats(o.overall.all);
    const double overlap = osu_overlap(overall.mean, compute.mean, test.mean, pure.mean);
    const std::string with_tests = what + format(", %lld MPI_Test calls", tests);
    Json r = Json::object();
    r["op"] = k.op;
    r["size"] = k.size;
    if (k.pencil) {
      r["grid"] = Json::array_of(std::vector<long long>{k.grid.nx, k.grid.ny, k.grid.nz});
      r["pencil"] = Json::array_of(std::vector<int>{s.cfg.pencil_rows, s.cfg.pencil_cols});
      r["comm_size"] = k.comm_size;
      Json bytes = Json::object();
      bytes["min"] = k.bytes_min;
      bytes["max"] = k.bytes_max;
      r["bytes"] = bytes;
    }
    r["nprocs"] = s.size;
    r["iterations"] = point.iterations;
    r["warmup"] = loop_counts(s.cfg, k.size).warmup;
    r["tests"] = tests;
    r["blocking"] = stats_json(blocking);
    r["pure_comm"] = stats_json(pure);
    r["compute_target"] = stats_json(target);
    r["init"] = stats_json(init);
    r["compute"] = stats_json(compute);
    r["test"] = stats_json(test);
    r["wait"] = stats_json(wait);
    r["overall"] = stats_json(overall);
    r["overlap"] = overlap;
    Json repeats = shared;
    repeats["overall"] = repeats_json(out, with_tests, {{"overall", &o.overall}})["overall"];
    r["repeats"] = repeats;
    note_tail(out, overall, with_tests + " overall");
    out.results.push(r);
    const std::string first = k.pencil ? format("%-11s%-15s%9lld", k.op.c_str(), k.grid.text().c_str(), k.size)
                                       : format("%-11lld", k.size);
    out.table += first + format("%9lld%13.2f%13.2f%13.2f%13.2f%13.2f%13.2f%13.2f%12.2f\n", tests,
                                blocking.mean * 1e6, pure.mean * 1e6, (compute.mean - test.mean) * 1e6,
                                init.mean * 1e6, test.mean * 1e6, wait.mean * 1e6, overall.mean * 1e6, overlap);
  }
}

const char* blocking_name(NbcOp op) {
  switch (op) {
    case NbcOp::Ialltoall: return "MPI_Ialltoall; blocking MPI_Alltoall";
    case NbcOp::Ialltoallv: return "MPI_Ialltoallv; blocking MPI_Alltoallv";
    case NbcOp::Iallreduce: return "MPI_Iallreduce of floats, MPI_SUM; blocking MPI_Allreduce";
    case NbcOp::Ibcast: return "MPI_Ibcast from rank 0; blocking MPI_Bcast";
  }
  return "?";
}

long long damage_at(const P2PConfig& cfg, long long size) {
  return size == cfg.corrupt_size ? cfg.corrupt_offset : -1;
}

const char* kMeans = "times in us, means over iterations, ranks and runs";

// The OSU-style points: every operation, every size.
std::vector<Case> op_cases(const Session& s) {
  std::vector<Case> cases;
  for (NbcOp op : s.cfg.ops) {
    std::string heading = format("# %s (%s) on %d ranks; %s\n", nbc_op_name(op), blocking_name(op), s.size, kMeans) +
                          header;
    for (long long size : nbc_sizes(s.cfg, op)) {
      Case k;
      k.op = nbc_op_name(op);
      k.nbc_op = op;
      k.size = size;
      k.heading = std::move(heading);  // above the first size only
      heading.clear();
      cases.push_back(k);
    }
  }
  return cases;
}

// Owns a communicator, so that a validation failure does not leak it.
struct CommOwner {
  MPI_Comm comm = MPI_COMM_NULL;
  ~CommOwner() {
    if (comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
  }
};

}  // namespace

void run_nbc(const Session& s, ModeOutput& out) {
  const bool pencil = s.cfg.pencil_rows > 0;
  const int dims[2] = {s.cfg.pencil_rows, s.cfg.pencil_cols}, periods[2] = {0, 0};
  CommOwner cart, column, row;
  int coords[2] = {0, 0};
  std::vector<Case> cases;
  if (!pencil) {
    cases = op_cases(s);
  } else {
    MPI_Cart_create(s.comm, 2, dims, periods, 0, &cart.comm);
    MPI_Cart_coords(cart.comm, s.rank, 2, coords);
    const int keep_row_index[2] = {1, 0}, keep_col_index[2] = {0, 1};
    MPI_Cart_sub(cart.comm, keep_row_index, &column.comm);  // the p_row ranks of my column
    MPI_Cart_sub(cart.comm, keep_col_index, &row.comm);     // the p_col ranks of my row
    for (const Grid3& grid : s.cfg.grids) {
      const PencilGrid g{grid, dims[0], dims[1]};
      for (Transpose t : {Transpose::XtoY, Transpose::YtoZ}) {
        const long long mine = plan_transpose(g, t, coords[0], coords[1]).send_total() * 8;
        Case k;
        k.op = transpose_name(t);
        k.transpose = t;
        k.pencil = true;
        k.grid = grid;
        k.comm_size = t == Transpose::XtoY ? dims[0] : dims[1];
        MPI_Allreduce(&mine, &k.bytes_min, 1, MPI_LONG_LONG, MPI_MIN, s.comm);
        MPI_Allreduce(&mine, &k.bytes_max, 1, MPI_LONG_LONG, MPI_MAX, s.comm);
        k.size = k.bytes_max;
        cases.push_back(k);
      }
    }
    cases.front().heading =
        format("# pencil transposes on %dx%d ranks (MPI_Ialltoallv of doubles in the column (x_to_y) and row "
               "(y_to_z) communicators; blocking MPI_Alltoallv); Bytes: the most one rank sends; %s\n",
               dims[0], dims[1], kMeans) +
        pencil_header;
  }
  std::vector<Point> points(cases.size());
  sweep(
      s, cases.size(), [&](std::size_t k) { return cases[k].label(); },
      [&](std::size_t k) {
        const Case& c = cases[k];
        progress::at("nbc, " + c.label(), "all ranks (collectives)");
        const auto collective =
            c.pencil ? make_transpose(PencilGrid{c.grid, dims[0], dims[1]}, c.transpose,
                                      c.transpose == Transpose::XtoY ? column.comm : row.comm, coords[0], coords[1],
                                      damage_at(s.cfg, c.size))
                     : make_collective(c.nbc_op, c.size, s.comm, damage_at(s.cfg, c.size));
        measure(s, *collective, c.size, points[k]);
      },
      [&](std::size_t k) { report(s, out, cases[k], points[k]); });
  if (s.rank == 0)
    out.table += "# Overall = Init + Compute + MPI_Test + MPI_Wait; Overlap(%) = max(0, 100 - (Overall - Compute) / "
                 "Pure comm * 100) (OSU)\n";
}

}  // namespace checkmpi::p2p
