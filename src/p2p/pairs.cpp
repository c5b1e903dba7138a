// bibw and mbw-mr: OSU's osu_bibw and osu_mbw_mr loops.
//   bibw:   ranks 0 and 1 each post a window of receives, then a window of
//           sends to the other, and wait for all of them (rank 0 for its
//           sends first, rank 1 for its receives, as OSU); bandwidth counts
//           both directions (2 x size x window per iteration), as OSU.
//   mbw-mr: P/2 pairs, rank i sending to rank i + P/2 (OSU's pairing) a
//           window of non-blocking sends, then waiting for a 4-byte ack;
//           as OSU, every iteration starts after an untimed MPI_Barrier of
//           all ranks and is timed alone by the senders; aggregate bandwidth
//           and messages per second over all pairs, each iteration counted
//           at its slowest sender (OSU: at rank 0; the same with one pair).
#include "core/watchdog.hpp"
#include "p2p/modes.hpp"
#include "p2p/timed.hpp"
#include "p2p/workload.hpp"

namespace checkmpi::p2p {

namespace {

constexpr int kDataTag = 11, kAckTag = 12;

// One size's row of a windowed mode: the bandwidth (bytes moved per second
// over the total time), the time per window, the Hockney point.
struct WindowRow {
  long long size = 0;
  double bytes_per_iteration = 0;  // summed over directions (bibw) or pairs (mbw-mr)
};

Json window_result(ModeOutput& out, const WindowRow& row, const Pooled& pooled, int window, double& bandwidth) {
  const Samples& samples = pooled.all;
  const Stats time = sample_stats(samples);
  bandwidth = row.bytes_per_iteration * double(samples.iterations) / samples.total;
  Json r = Json::object();
  r["size"] = row.size;
  r["iterations"] = samples.iterations;
  r["window"] = window;
  r["bandwidth"] = bandwidth;
  r["time"] = stats_json(time);
  r["block"] = samples.block;
  r["repeats"] = repeats_json(out, format("%lld B", row.size), {{"time", &pooled}});
  note_tail(out, time, format("%lld B window time", row.size));
  return r;
}

}  // namespace

void run_bibw(const Session& s, ModeOutput& out) {
  const int peer = 1 - s.rank;
  const int window = int(s.cfg.window);
  auto send = message_buffer(s.cfg), recv = message_buffer(s.cfg);
  // Raw pointers: no virtual call on them inside the timed loops.
  void* const send_data = send->data();
  void* const recv_data = recv->data();
  Staging send_stage(*send), recv_stage(*recv);
  std::vector<MPI_Request> requests(2 * std::size_t(window), MPI_REQUEST_NULL);
  MPI_Request* const receives = requests.data();
  MPI_Request* const sends = requests.data() + window;
  out.table = "# Size      Bandwidth (MB/s)  Window median (us)\n";
  const std::vector<long long> all_sizes = message_sizes(s.cfg);
  std::vector<Pooled> pooled(all_sizes.size());
  std::vector<double> sizes, per_message;
  sweep(
      s, all_sizes.size(), [&](size_t k) { return format("%lld B both ways", all_sizes[k]); },
      [&](size_t k) {
        const long long size = all_sizes[k];
        const int count = int(size);
        const PayloadCheck check(s.cfg, Layout::contiguous(std::size_t(size)), size);
        pooled[k].add(run_loop(
            make_loop(s, size, s.rank == 0),
            [&](long long) {
              send_stage.out(std::size_t(size));  // the window sends one buffer
              for (int j = 0; j < window; ++j)
                MPI_Irecv(recv_data, count, MPI_CHAR, peer, kDataTag, s.comm, &receives[j]);
              for (int j = 0; j < window; ++j)
                MPI_Isend(send_data, count, MPI_CHAR, peer, kDataTag, s.comm, &sends[j]);
              // As osu_bibw: rank 0 waits for its sends first, rank 1 for its receives.
              MPI_Waitall(window, s.rank == 0 ? sends : receives, MPI_STATUSES_IGNORE);
              MPI_Waitall(window, s.rank == 0 ? receives : sends, MPI_STATUSES_IGNORE);
              recv_stage.in(std::size_t(size));
            },
            [&](long long i) { check.prepare(*send, s.rank, i); },
            [&](long long i) { return check.verify(*recv, peer, s.rank, i); }));
      },
      [&](size_t k) {
        if (s.rank != 0) return;
        const long long size = all_sizes[k];
        double bandwidth = 0;
        Json r = window_result(out, {size, 2.0 * double(size) * window}, pooled[k], window, bandwidth);
        out.results.push(r);
        const double median = pooled[k].all.values.empty() ? 0 : sample_stats(pooled[k].all).median;
        out.table += format("%-10lld%18.2f%20.2f\n", size, bandwidth / 1e6, median * 1e6);
        sizes.push_back(double(size));
        per_message.push_back(median / double(window));
      });
  add_hockney(out, sizes, per_message, "median time per window / window (both directions at once)");
}

void run_mbw_mr(const Session& s, ModeOutput& out, const std::vector<Placement>& where) {
  const int pairs = s.size / 2;
  const bool sender = s.rank < pairs;
  const int peer = sender ? s.rank + pairs : s.rank - pairs;
  const int window = int(s.cfg.window);
  auto send = message_buffer(s.cfg), recv = message_buffer(s.cfg);
  void* const send_data = send->data();
  void* const recv_data = recv->data();
  Staging send_stage(*send), recv_stage(*recv);
  std::vector<MPI_Request> requests(std::size_t(window), MPI_REQUEST_NULL);
  char ack[4] = {0, 0, 0, 0};
  int same_node = 0;
  for (int i = 0; i < pairs; ++i) same_node += where[size_t(i)].node == where[size_t(i + pairs)].node;
  out.table = format("# %d pair(s), rank i to rank i + %d; %d on one node, %d across nodes\n", pairs, pairs,
                     same_node, pairs - same_node) +
              "# Size      MB/s (all pairs)     Messages/s  Window median (us)\n";
  const std::vector<long long> all_sizes = message_sizes(s.cfg);
  std::vector<Pooled> pooled(all_sizes.size());
  sweep(
      s, all_sizes.size(), [&](size_t k) { return format("%d pair(s), %lld B", pairs, all_sizes[k]); },
      [&](size_t k) {
        const long long size = all_sizes[k];
        const int count = int(size);
        const PayloadCheck check(s.cfg, Layout::contiguous(std::size_t(size)), size);
        const LoopCounts n = make_loop(s, size, sender).counts;
        Timed mine(n.iterations);  // receivers add zeros, so that every rank keeps the same iterations
        MPI_Barrier(s.comm);
        for (long long i = 0; i < n.warmup + n.iterations; ++i) {
          progress::beat(i + 1);
          if (s.cfg.validate && sender) check.prepare(*send, s.rank, i);
          MPI_Barrier(s.comm);
          const double t0 = MPI_Wtime();
          if (sender) {
            send_stage.out(std::size_t(size));
            for (auto& r : requests) MPI_Isend(send_data, count, MPI_CHAR, peer, kDataTag, s.comm, &r);
            MPI_Waitall(window, requests.data(), MPI_STATUSES_IGNORE);
            MPI_Recv(ack, 4, MPI_CHAR, peer, kAckTag, s.comm, MPI_STATUS_IGNORE);
          } else {
            for (auto& r : requests) MPI_Irecv(recv_data, count, MPI_CHAR, peer, kDataTag, s.comm, &r);
            MPI_Waitall(window, requests.data(), MPI_STATUSES_IGNORE);
            recv_stage.in(std::size_t(size));
            MPI_Send(ack, 4, MPI_CHAR, peer, kAckTag, s.comm);
          }
          const double t = MPI_Wtime() - t0;
          if (i >= n.warmup) mine.add(sender ? t : 0.0);
          if (s.cfg.validate) settle(s.comm, sender ? std::string() : check.verify(*recv, peer, s.rank, i));
        }
        // The pairs drift apart: each iteration counts at its slowest sender.
        Samples samples;
        samples.values = mine.values();
        samples.blocks = mine.seen();
        samples.iterations = n.iterations;
        const int kept = int(samples.values.size());
        void* in = s.rank == 0 ? MPI_IN_PLACE : samples.values.data();
        MPI_Reduce(in, samples.values.data(), kept, MPI_DOUBLE, MPI_MAX, 0, s.comm);
        samples.total = blocks_total(samples);
        if (s.rank == 0) pooled[k].add(samples);
      },
      [&](size_t k) {
        if (s.rank != 0) return;
        const long long size = all_sizes[k];
        double bandwidth = 0;
        Json r = window_result(out, {size, double(size) * window * pairs}, pooled[k], window, bandwidth);
        const double rate = double(window) * pairs * double(pooled[k].all.iterations) / pooled[k].all.total;
        r["pairs"] = pairs;
        r["message_rate"] = rate;
        out.results.push(r);
        const double median = sample_stats(pooled[k].all).median;
        out.table += format("%-10lld%18.2f%15.0f%20.2f\n", size, bandwidth / 1e6, rate, median * 1e6);
      });
  if (s.rank == 0)
    out.table += "# MB/s and Messages/s: all pairs' bytes and messages over the total time, each iteration (after an "
                 "untimed barrier) timed at its slowest sender\n";
}

// {"sender", "receiver", "same_node"} for each of mbw-mr's pairs.
Json pairs_json(const std::vector<Placement>& where) {
  Json list = Json::array();
  const int pairs = int(where.size()) / 2;
  for (int i = 0; i < pairs; ++i) {
    Json p = Json::object();
    p["sender"] = i;
    p["receiver"] = i + pairs;
    p["same_node"] = where[size_t(i)].node == where[size_t(i + pairs)].node;
    list.push(p);
  }
  return list;
}

}  // namespace checkmpi::p2p
