// ring: every rank exchanges with both neighbours of a periodic ring, for
// rings of 2, 3, ..., P ranks (the first p ranks of the job; the others wait).
#include "p2p/modes.hpp"
#include "p2p/workload.hpp"

namespace checkmpi::p2p {

namespace {

constexpr int kRightward = 1, kLeftward = 2;

}  // namespace

void run_ring(const Session& s, ModeOutput& out) {
  auto send = message_buffer(s.cfg), from_left = message_buffer(s.cfg), from_right = message_buffer(s.cfg);
  // Raw pointers: no virtual call on them inside the timed loops.
  void* const send_data = send->data();
  void* const from_left_data = from_left->data();
  void* const from_right_data = from_right->data();
  Staging send_stage(*send), left_stage(*from_left), right_stage(*from_right);
  out.table = "# Ranks  Size        Time (us)     Min (us)  Median (us)     Max (us)\n";
  const std::vector<long long> all_sizes = message_sizes(s.cfg);
  std::vector<double> sizes, medians;  // of the largest ring, for the fit
  for (int p = 2; p <= s.size; ++p) {
    on_first_ranks(s.comm, p, [&](MPI_Comm ring) {
      const Session rs{s.cfg, ring, s.rank, p, s.clock_cost};
      const int left = (s.rank + p - 1) % p, right = (s.rank + 1) % p;
      std::vector<Pooled> pooled(all_sizes.size());
      sweep(
          rs, all_sizes.size(), [&](size_t k) { return format("ring of %d, %lld B", p, all_sizes[k]); },
          [&](size_t k) {
            const int count = int(all_sizes[k]);
            const PayloadCheck check(s.cfg, Layout::contiguous(std::size_t(count)), count);
            Samples samples = run_loop(
                make_loop(rs, count, true),
                [&](long long) {
                  MPI_Request r[4];
                  send_stage.out(std::size_t(count));
                  MPI_Irecv(from_left_data, count, MPI_CHAR, left, kRightward, ring, &r[0]);
                  MPI_Irecv(from_right_data, count, MPI_CHAR, right, kLeftward, ring, &r[1]);
                  MPI_Isend(send_data, count, MPI_CHAR, right, kRightward, ring, &r[2]);
                  MPI_Isend(send_data, count, MPI_CHAR, left, kLeftward, ring, &r[3]);
                  MPI_Waitall(4, r, MPI_STATUSES_IGNORE);
                  left_stage.in(std::size_t(count));
                  right_stage.in(std::size_t(count));
                },
                [&](long long i) { check.prepare(*send, s.rank, i); },
                [&](long long i) {
                  const std::string bad = check.verify(*from_left, left, s.rank, i);
                  return bad.empty() ? check.verify(*from_right, right, s.rank, i) : bad;
                });
            // Ranks drift apart: each block counts at its slowest rank.
            const int n = int(samples.values.size());
            void* mine = s.rank == 0 ? MPI_IN_PLACE : samples.values.data();
            MPI_Reduce(mine, samples.values.data(), n, MPI_DOUBLE, MPI_MAX, 0, ring);
            samples.total = blocks_total(samples);
            pooled[k].add(samples);
          },
          [&](size_t k) {
            if (s.rank != 0) return;
            const long long size = all_sizes[k];
            const Samples& samples = pooled[k].all;
            const Stats time = sample_stats(samples);
            Json r = Json::object();
            r["nprocs"] = p;
            r["size"] = size;
            r["iterations"] = samples.iterations;
            r["time"] = stats_json(time);
            r["block"] = samples.block;
            const std::string what = format("ring of %d, %lld B", p, size);
            r["repeats"] = repeats_json(out, what, {{"time", &pooled[k]}});
            note_tail(out, time, what);
            out.results.push(r);
            out.table += format("%-7d%-10lld%15.2f%13.2f%13.2f%13.2f\n", p, size, time.mean * 1e6, time.min * 1e6,
                                time.median * 1e6, time.max * 1e6);
            if (p == s.size) sizes.push_back(double(size)), medians.push_back(time.median);
          });
    });
  }
  if (s.rank == 0) {
    const std::string what = "median ring iteration at " + std::to_string(s.size) + " ranks";
    add_hockney(out, sizes, medians, what)["nprocs"] = s.size;
  }
}

}  // namespace checkmpi::p2p
