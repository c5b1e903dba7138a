// coll: blocking collectives' latency on all ranks, as OSU's osu_allreduce,
// osu_alltoall(v), osu_bcast, osu_allgather, osu_reduce_scatter and
// osu_barrier measure it: every iteration timed alone on every rank and
// followed by an untimed MPI_Barrier (not barrier's: osu_barrier times its
// barriers back to back); each rank's mean over its iterations,
// then the minimum, average and maximum of those means over ranks (OSU's
// three columns). -c fills and checks the data around every iteration,
// outside the timed region.
#include "core/watchdog.hpp"
#include "p2p/modes.hpp"
#include "p2p/nbc_ops.hpp"
#include "p2p/timed.hpp"
#include "p2p/workload.hpp"

namespace checkmpi::p2p {

namespace {

struct Case {
  CollOp op;
  long long size = 0;
  std::string heading;  // above the first size of an operation
  std::string label() const { return format("%s, %lld B", coll_op_name(op), size); }
};

// A point's runs on rank 0: every rank's iterations pooled, and the per-rank
// means' minimum, sum and maximum of each run.
struct Point {
  Pooled all;
  double min = 0, sum = 0, max = 0;
  long long runs = 0, iterations = 0;
};

const char* mpi_name(CollOp op) {
  switch (op) {
    case CollOp::Allreduce: return "MPI_Allreduce of floats, MPI_SUM";
    case CollOp::Alltoall: return "MPI_Alltoall, size bytes to every rank";
    case CollOp::Alltoallv: return "MPI_Alltoallv, size bytes to every rank";
    case CollOp::Bcast: return "MPI_Bcast from rank 0";
    case CollOp::Allgather: return "MPI_Allgather, size bytes from every rank";
    case CollOp::ReduceScatter: return "MPI_Reduce_scatter of size/4 floats, MPI_SUM";
    case CollOp::Barrier: return "MPI_Barrier";
  }
  return "?";
}

void measure(const Session& s, const Case& k, Point& point) {
  const std::unique_ptr<Collective> c =
      make_collective(k.op, k.size, s.comm, k.size == s.cfg.corrupt_size ? s.cfg.corrupt_offset : -1);
  const LoopCounts n = loop_counts(s.cfg, k.size);
  const bool validate = s.cfg.validate;
  const bool separate = k.op != CollOp::Barrier;  // the untimed barrier after each iteration
  Timed mine(n.iterations);
  MPI_Barrier(s.comm);
  for (long long i = 0; i < n.warmup + n.iterations; ++i) {
    progress::beat(i + 1);
    if (validate) c->prepare(i);
    const double t0 = MPI_Wtime();
    c->blocking();
    const double t = MPI_Wtime() - t0;
    if (i >= n.warmup) mine.add(t);
    if (validate) settle(s.comm, c->verify(i));
    if (separate) MPI_Barrier(s.comm);
  }
  const double mean = mine.total() / double(n.iterations);
  double low = 0, high = 0, sum = 0;
  MPI_Reduce(&mean, &low, 1, MPI_DOUBLE, MPI_MIN, 0, s.comm);
  MPI_Reduce(&mean, &high, 1, MPI_DOUBLE, MPI_MAX, 0, s.comm);
  MPI_Reduce(&mean, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, s.comm);
  const Samples all = gather(s, mine);
  if (s.rank != 0) return;
  point.all.add(all);
  point.min = point.runs == 0 ? low : std::min(point.min, low);
  point.max = point.runs == 0 ? high : std::max(point.max, high);
  point.sum += sum / double(s.size);
  point.runs += 1;
  point.iterations += n.iterations;
}

void report(const Session& s, ModeOutput& out, const Case& k, const Point& point) {
  if (s.rank != 0) return;
  out.table += k.heading;
  const Stats latency = sample_stats(point.all.all);
  const double avg = point.sum / double(point.runs);
  Json r = Json::object();
  r["op"] = coll_op_name(k.op);
  r["size"] = k.size;
  r["nprocs"] = s.size;
  r["iterations"] = point.iterations;
  r["warmup"] = loop_counts(s.cfg, k.size).warmup;
  r["latency"] = stats_json(latency);
  r["avg_latency"] = avg;
  r["min_latency"] = point.min;
  r["max_latency"] = point.max;
  r["repeats"] = repeats_json(out, k.label(), {{"latency", &point.all}});
  note_tail(out, latency, k.label());
  out.results.push(r);
  out.table += format("%-10lld%17.2f%17.2f%17.2f%14.2f%12lld\n", k.size, avg * 1e6, point.min * 1e6,
                      point.max * 1e6, latency.median * 1e6, point.iterations);
}

}  // namespace

void run_coll(const Session& s, ModeOutput& out) {
  std::vector<Case> cases;
  for (CollOp op : s.cfg.coll_ops) {
    std::string heading =
        format("# %s (%s) on %d ranks\n", coll_op_name(op), mpi_name(op), s.size) +
        "# Size       Avg Latency(us)  Min Latency(us)  Max Latency(us)   Median (us)  Iterations\n";
    for (long long size : coll_sizes(s.cfg, op)) {
      cases.push_back(Case{op, size, heading});
      heading.clear();
    }
  }
  std::vector<Point> points(cases.size());
  sweep(
      s, cases.size(), [&](std::size_t k) { return cases[k].label(); },
      [&](std::size_t k) {
        progress::at("coll, " + cases[k].label(), "all ranks (collectives)");
        measure(s, cases[k], points[k]);
      },
      [&](std::size_t k) { report(s, out, cases[k], points[k]); });
  if (s.rank == 0)
    out.table += "# Avg/Min/Max Latency: each rank's mean over its iterations, then the average, minimum and maximum "
                 "over ranks (OSU); Median: of every rank's iterations\n";
}

}  // namespace checkmpi::p2p
