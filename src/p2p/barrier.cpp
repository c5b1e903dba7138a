// barrier: OSU's osu_barrier on the first p ranks, p = 2, 4, 8, ... and all
// (the others wait); each timed block counts at its slowest rank, as ring.
#include "p2p/modes.hpp"
#include "p2p/workload.hpp"

namespace checkmpi::p2p {

void run_barrier(const Session& s, ModeOutput& out) {
  out.table = "# Ranks    Latency (us)     Min (us)  Median (us)     Max (us)\n";
  const std::vector<int> counts = barrier_ranks(s.size);
  std::vector<Pooled> pooled(counts.size());
  sweep(
      s, counts.size(), [&](size_t k) { return format("barrier of %d ranks", counts[k]); },
      [&](size_t k) {
        const int p = counts[k];
        on_first_ranks(s.comm, p, [&](MPI_Comm sub) {
          const Session bs{s.cfg, sub, s.rank, p, s.clock_cost};
          Samples samples = run_loop(
              make_loop(bs, 0, true), [&](long long) { MPI_Barrier(sub); }, [](long long) {},
              [](long long) { return std::string(); });
          const int n = int(samples.values.size());
          void* mine = s.rank == 0 ? MPI_IN_PLACE : samples.values.data();
          MPI_Reduce(mine, samples.values.data(), n, MPI_DOUBLE, MPI_MAX, 0, sub);
          samples.total = blocks_total(samples);
          if (s.rank == 0) pooled[k].add(samples);
        });
      },
      [&](size_t k) {
        if (s.rank != 0) return;
        const int p = counts[k];
        const Samples& samples = pooled[k].all;
        const Stats latency = sample_stats(samples);
        Json r = Json::object();
        r["nprocs"] = p;
        r["iterations"] = samples.iterations;
        r["latency"] = stats_json(latency);
        r["block"] = samples.block;
        const std::string what = format("barrier of %d ranks", p);
        r["repeats"] = repeats_json(out, what, {{"latency", &pooled[k]}});
        note_tail(out, latency, what);
        out.results.push(r);
        out.table += format("%-9d%16.2f%13.2f%13.2f%13.2f\n", p, latency.mean * 1e6, latency.min * 1e6,
                            latency.median * 1e6, latency.max * 1e6);
      });
}

}  // namespace checkmpi::p2p
