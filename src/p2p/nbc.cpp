// nbc: non-blocking collectives against their blocking twins, and how much
// of them the library overlaps with computation, measured as the OSU
// micro-benchmarks do (osu_ialltoall and its siblings): for each size,
//   1. the blocking collective, timed alone;
//   2. pure communication: post + MPI_Wait, nothing between;
//   3. per --progress count N: post, compute for this rank's mean pure
//      communication time with N MPI_Test calls spread over it, MPI_Wait.
// Every iteration is timed alone and followed by a barrier; -c fills and
// checks the data around every iteration, outside the timed region.
#include <numeric>

#include "p2p/modes.hpp"
#include "p2p/nbc_ops.hpp"
#include "p2p/overlap.hpp"

namespace checkmpi::p2p {

namespace {

// What one group of results measures.
struct Case {
  std::string op;
  long long size = 0;  // bytes a rank sends (pencil: the most any rank sends)
  bool pencil = false;
  Grid3 grid;
  int comm_size = 0;               // pencil: ranks in the sub-communicator
  long long bytes_min = 0, bytes_max = 0;  // pencil: bytes a rank sends, over ranks
};

// One rank's per-iteration times of the overlapped loop.
struct Phases {
  std::vector<double> init, compute, test, wait, overall;
};

// Runs warm-up and timed iterations of body(timed); -c prepares before and
// verifies after each, outside the timing; a barrier ends each (as OSU).
// `base` numbers the iterations so that every loop's data differ.
template <class Body>
void iterate(const Session& s, Collective& c, LoopCounts n, long long base, Body&& body) {
  for (long long i = 0; i < n.warmup + n.iterations; ++i) {
    if (s.cfg.validate) c.prepare(base + i);
    body(i >= n.warmup);
    if (s.cfg.validate) settle(s.comm, c.verify(base + i));
    MPI_Barrier(s.comm);
  }
}

// Every rank's values, in rank order, on rank 0 (the same count on all).
std::vector<double> gather(MPI_Comm comm, const std::vector<double>& mine, int rank, int nprocs) {
  std::vector<double> all(rank == 0 ? mine.size() * std::size_t(nprocs) : 0);
  MPI_Gather(mine.data(), int(mine.size()), MPI_DOUBLE, all.data(), int(mine.size()), MPI_DOUBLE, 0, comm);
  return all;
}

double mean(const std::vector<double>& v) {
  return v.empty() ? 0.0 : std::accumulate(v.begin(), v.end(), 0.0) / double(v.size());
}

const char* header =
    "# Size         Tests     Blocking    Pure comm      Compute         Init     MPI_Test     MPI_Wait"
    "      Overall  Overlap(%)\n";
const char* pencil_header =
    "# Transpose  Grid               Bytes  Tests     Blocking    Pure comm      Compute         Init     MPI_Test"
    "     MPI_Wait      Overall  Overlap(%)\n";

class NbcRun {
 public:
  NbcRun(const Session& s, ModeOutput& out) : s_(s), out_(out) {}

  void measure(Collective& c, const Case& k) {
    const LoopCounts n = loop_counts(s_.cfg, k.size);
    const long long per_loop = n.warmup + n.iterations;
    std::vector<double> blocking, pure;
    iterate(s_, c, n, 0, [&](bool timed) {
      const double t0 = MPI_Wtime();
      c.blocking();
      if (timed) blocking.push_back(MPI_Wtime() - t0);
    });
    iterate(s_, c, n, per_loop, [&](bool timed) {
      MPI_Request r;
      const double t0 = MPI_Wtime();
      c.post(&r);
      MPI_Wait(&r, MPI_STATUS_IGNORE);
      if (timed) pure.push_back(MPI_Wtime() - t0);
    });
    // OSU: each rank computes for its own mean pure communication time.
    const double target = mean(pure);
    std::vector<Phases> runs;
    for (std::size_t p = 0; p < s_.cfg.progress.size(); ++p) {
      const long long tests = s_.cfg.progress[p];
      Phases ph;
      iterate(s_, c, n, per_loop * static_cast<long long>(2 + p), [&](bool timed) {
        MPI_Request r;
        const double t0 = MPI_Wtime();
        c.post(&r);
        const double t1 = MPI_Wtime();
        const double in_test = compute_and_probe(target, tests, &r);
        const double t2 = MPI_Wtime();
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        const double t3 = MPI_Wtime();
        if (!timed) return;
        ph.init.push_back(t1 - t0);
        ph.compute.push_back(t2 - t1);
        ph.test.push_back(in_test);
        ph.wait.push_back(t3 - t2);
        ph.overall.push_back(t3 - t0);
      });
      runs.push_back(std::move(ph));
    }
    report(k, n, blocking, pure, target, runs);
  }

  // The text table's heading for a group of cases.
  void heading(const std::string& text) {
    if (s_.rank == 0) out_.table += text;
  }

 private:
  std::vector<double> all(const std::vector<double>& mine) { return gather(s_.comm, mine, s_.rank, s_.size); }

  void report(const Case& k, LoopCounts n, const std::vector<double>& blocking_mine,
              const std::vector<double>& pure_mine, double target_mine, const std::vector<Phases>& runs) {
    const Stats blocking = summarize(all(blocking_mine)), pure = summarize(all(pure_mine));
    const Stats target = summarize(all({target_mine}));
    for (std::size_t p = 0; p < runs.size(); ++p) {
      const Phases& ph = runs[p];
      const Stats init = summarize(all(ph.init)), compute = summarize(all(ph.compute)),
                  test = summarize(all(ph.test)), wait = summarize(all(ph.wait)),
                  overall = summarize(all(ph.overall));
      if (s_.rank != 0) continue;
      const double overlap = osu_overlap(overall.mean, compute.mean, test.mean, pure.mean);
      Json r = Json::object();
      r["op"] = k.op;
      r["size"] = k.size;
      if (k.pencil) {
        r["grid"] = Json::array_of(std::vector<long long>{k.grid.nx, k.grid.ny, k.grid.nz});
        r["pencil"] = Json::array_of(std::vector<int>{s_.cfg.pencil_rows, s_.cfg.pencil_cols});
        r["comm_size"] = k.comm_size;
        Json bytes = Json::object();
        bytes["min"] = k.bytes_min;
        bytes["max"] = k.bytes_max;
        r["bytes"] = bytes;
      }
      r["nprocs"] = s_.size;
      r["iterations"] = n.iterations;
      r["warmup"] = n.warmup;
      r["tests"] = s_.cfg.progress[p];
      r["blocking"] = stats_json(blocking);
      r["pure_comm"] = stats_json(pure);
      r["compute_target"] = stats_json(target);
      r["init"] = stats_json(init);
      r["compute"] = stats_json(compute);
      r["test"] = stats_json(test);
      r["wait"] = stats_json(wait);
      r["overall"] = stats_json(overall);
      r["overlap"] = overlap;
      out_.results.push(r);
      const std::string first = k.pencil ? format("%-11s%-15s%9lld", k.op.c_str(), k.grid.text().c_str(), k.size)
                                         : format("%-11lld", k.size);
      out_.table += first + format("%9lld%13.2f%13.2f%13.2f%13.2f%13.2f%13.2f%13.2f%12.2f\n", s_.cfg.progress[p],
                                   blocking.mean * 1e6, pure.mean * 1e6, (compute.mean - test.mean) * 1e6,
                                   init.mean * 1e6, test.mean * 1e6, wait.mean * 1e6, overall.mean * 1e6, overlap);
    }
  }

  const Session& s_;
  ModeOutput& out_;
};

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

void run_ops(const Session& s, ModeOutput& out) {
  NbcRun run(s, out);
  for (NbcOp op : s.cfg.ops) {
    run.heading(format("# %s (%s) on %d ranks; times in us, means over iterations and ranks\n", nbc_op_name(op),
                       blocking_name(op), s.size) +
                header);
    for (long long size : message_sizes(s.cfg)) {
      if (op == NbcOp::Iallreduce && (size < 4 || size % 4 != 0)) continue;  // whole floats only, as OSU
      auto c = make_collective(op, size, s.comm, damage_at(s.cfg, size));
      Case k;
      k.op = nbc_op_name(op);
      k.size = size;
      run.measure(*c, k);
    }
  }
}

// Owns a communicator, so that a validation failure does not leak it.
struct CommOwner {
  MPI_Comm comm = MPI_COMM_NULL;
  ~CommOwner() {
    if (comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
  }
};

void run_pencils(const Session& s, ModeOutput& out) {
  const int dims[2] = {s.cfg.pencil_rows, s.cfg.pencil_cols}, periods[2] = {0, 0};
  CommOwner cart, column, row;
  MPI_Cart_create(s.comm, 2, dims, periods, 0, &cart.comm);
  int coords[2] = {0, 0};
  MPI_Cart_coords(cart.comm, s.rank, 2, coords);
  const int keep_row_index[2] = {1, 0}, keep_col_index[2] = {0, 1};
  MPI_Cart_sub(cart.comm, keep_row_index, &column.comm);  // the p_row ranks of my column
  MPI_Cart_sub(cart.comm, keep_col_index, &row.comm);     // the p_col ranks of my row
  NbcRun run(s, out);
  run.heading(format("# pencil transposes on %dx%d ranks (MPI_Ialltoallv of doubles in the column (x_to_y) and row "
                     "(y_to_z) communicators; blocking MPI_Alltoallv); Bytes: the most one rank sends; times in us, "
                     "means over iterations and ranks\n",
                     dims[0], dims[1]) +
              pencil_header);
  for (const Grid3& grid : s.cfg.grids) {
    const PencilGrid g{grid, dims[0], dims[1]};
    for (Transpose t : {Transpose::XtoY, Transpose::YtoZ}) {
      const long long mine = plan_transpose(g, t, coords[0], coords[1]).send_total() * 8;
      Case k;
      k.op = transpose_name(t);
      k.pencil = true;
      k.grid = grid;
      k.comm_size = t == Transpose::XtoY ? dims[0] : dims[1];
      MPI_Allreduce(&mine, &k.bytes_min, 1, MPI_LONG_LONG, MPI_MIN, s.comm);
      MPI_Allreduce(&mine, &k.bytes_max, 1, MPI_LONG_LONG, MPI_MAX, s.comm);
      k.size = k.bytes_max;
      auto c = make_transpose(g, t, t == Transpose::XtoY ? column.comm : row.comm, coords[0], coords[1],
                              damage_at(s.cfg, k.size));
      run.measure(*c, k);
    }
  }
}

}  // namespace

void run_nbc(const Session& s, ModeOutput& out) {
  if (s.cfg.pencil_rows > 0)
    run_pencils(s, out);
  else
    run_ops(s, out);
  if (s.rank == 0)
    out.table += "# Overall = Init + Compute + MPI_Test + MPI_Wait; Overlap(%) = max(0, 100 - (Overall - Compute) / "
                 "Pure comm * 100) (OSU)\n";
}

}  // namespace checkmpi::p2p
