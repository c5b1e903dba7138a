// pingpong and bw: OSU's osu_latency and osu_bw loops between ranks 0 and 1;
// self: the same sweep for a message rank 0 sends to itself through MPI;
// pingpong --threads T: osu_latency_mt's, T threads per rank at once.
#include <thread>

#include "p2p/modes.hpp"
#include "p2p/workload.hpp"

namespace checkmpi::p2p {

namespace {

constexpr int kDataTag = 1, kAckTag = 2, kSelfTag = 3;

// One size of a timed sweep (pingpong, self), its times scaled by `factor`:
// the JSON result, the table row and a tail note naming `what`. Returns the
// median, for the Hockney fit.
double report_time(ModeOutput& out, long long size, const Pooled& pooled, double factor, const char* what,
                   const Json& per_thread = Json()) {
  const Samples& samples = pooled.all;
  const Stats time = sample_stats(samples, factor);
  Json r = Json::object();
  r["size"] = size;
  r["iterations"] = samples.iterations;
  r["latency"] = stats_json(time);
  r["bandwidth"] = double(size) / time.median;
  r["block"] = samples.block;
  r["repeats"] = repeats_json(out, format("%lld B", size), {{"latency", &pooled}}, factor);
  if (per_thread.kind() != Json::Kind::Null) r["per_thread"] = per_thread;
  note_tail(out, time, format("%lld B %s", size, what));
  out.results.push(r);
  out.table += format("%-10lld%18.2f%13.2f%13.2f%13.2f\n", size, time.mean * 1e6, time.min * 1e6, time.median * 1e6,
                      time.max * 1e6);
  return time.median;
}

}  // namespace

void run_pingpong(const Session& s, ModeOutput& out) {
  const int peer = 1 - s.rank;
  auto send = message_buffer(s.cfg), recv = message_buffer(s.cfg);
  // Raw pointers: no virtual call on them inside the timed loops.
  void* const send_data = send->data();
  void* const recv_data = recv->data();
  Staging send_stage(*send), recv_stage(*recv);
  out.table = "# Size       Latency (us)     Min (us)  Median (us)     Max (us)\n";
  const std::vector<long long> all_sizes = message_sizes(s.cfg);
  std::vector<Pooled> pooled(all_sizes.size());
  std::vector<double> sizes, medians;
  sweep(
      s, all_sizes.size(), [&](size_t k) { return format("%lld B", all_sizes[k]); },
      [&](size_t k) {
        const long long size = all_sizes[k];
        const int count = int(size);
        const PayloadCheck check(s.cfg, Layout::contiguous(std::size_t(size)), size);
        pooled[k].add(run_loop(
            make_loop(s, size, s.rank == 0),
            [&](long long) {
              if (s.rank == 0) {
                send_stage.out(std::size_t(size));
                MPI_Send(send_data, count, MPI_CHAR, peer, kDataTag, s.comm);
                MPI_Recv(recv_data, count, MPI_CHAR, peer, kDataTag, s.comm, MPI_STATUS_IGNORE);
                recv_stage.in(std::size_t(size));
              } else {
                MPI_Recv(recv_data, count, MPI_CHAR, peer, kDataTag, s.comm, MPI_STATUS_IGNORE);
                recv_stage.in(std::size_t(size));
                send_stage.out(std::size_t(size));
                MPI_Send(send_data, count, MPI_CHAR, peer, kDataTag, s.comm);
              }
            },
            [&](long long i) { check.prepare(*send, s.rank, i); },
            [&](long long i) { return check.verify(*recv, peer, s.rank, i); }));
      },
      [&](size_t k) {
        if (s.rank != 0) return;
        sizes.push_back(double(all_sizes[k]));
        medians.push_back(report_time(out, all_sizes[k], pooled[k], 0.5, "latency"));  // half round trip
      });
  add_hockney(out, sizes, medians, "median latency");
}

void run_pingpong_threads(const Session& s, ModeOutput& out) {
  const int threads = s.cfg.threads, peer = 1 - s.rank;
  // A size's iterations (and warm-up) shared by the threads as osu_latency_mt
  // deals them, iteration i to thread i mod T; at least one timed each.
  auto share = [threads](long long n, int t) { return (n - t + threads - 1) / threads; };
  // Thread t of rank 0 with thread t of rank 1, on a communicator of their own.
  std::vector<MPI_Comm> comms(std::size_t(threads), MPI_COMM_NULL);
  for (MPI_Comm& c : comms) MPI_Comm_dup(s.comm, &c);
  struct Freed {
    std::vector<MPI_Comm>& comms;
    ~Freed() {
      for (MPI_Comm& c : comms) MPI_Comm_free(&c);
    }
  } freed{comms};
  std::vector<std::unique_ptr<Buffer>> sends, recvs;
  for (int t = 0; t < threads; ++t) sends.push_back(message_buffer(s.cfg)), recvs.push_back(message_buffer(s.cfg));
  out.table = format("# %d threads per rank sharing each size's iterations, each pair on its own communicator; "
                     "latency over all threads\n", threads) +
              "# Size       Latency (us)     Min (us)  Median (us)     Max (us)\n";
  const std::vector<long long> all_sizes = message_sizes(s.cfg);
  std::vector<std::vector<Pooled>> pooled(all_sizes.size(), std::vector<Pooled>(std::size_t(threads)));
  std::vector<double> sizes, medians;
  sweep(
      s, all_sizes.size(), [&](size_t k) { return format("%lld B, %d threads", all_sizes[k], threads); },
      [&](size_t k) {
        const long long size = all_sizes[k];
        const int count = int(size);
        const PayloadCheck check(s.cfg, Layout::contiguous(std::size_t(size)), size);
        const Loop base = make_loop(s, size, s.rank == 0);
        std::vector<Samples> samples = std::vector<Samples>(std::size_t(threads));
        std::vector<std::string> failed = std::vector<std::string>(std::size_t(threads));
        auto pair = [&](int t) {
          Loop loop = base;
          loop.comm = comms[std::size_t(t)];
          loop.counts.warmup = share(base.counts.warmup, t);
          loop.counts.iterations = std::max(1LL, share(base.counts.iterations, t));
          void* const send_data = sends[std::size_t(t)]->data();
          void* const recv_data = recvs[std::size_t(t)]->data();
          try {
            samples[std::size_t(t)] = run_loop(
                loop,
                [&](long long) {
                  if (s.rank == 0) {
                    MPI_Send(send_data, count, MPI_CHAR, peer, t, loop.comm);
                    MPI_Recv(recv_data, count, MPI_CHAR, peer, t, loop.comm, MPI_STATUS_IGNORE);
                  } else {
                    MPI_Recv(recv_data, count, MPI_CHAR, peer, t, loop.comm, MPI_STATUS_IGNORE);
                    MPI_Send(send_data, count, MPI_CHAR, peer, t, loop.comm);
                  }
                },
                [&](long long i) { check.prepare(*sends[std::size_t(t)], s.rank, i); },
                [&](long long i) {
                  const std::string bad = check.verify(*recvs[std::size_t(t)], peer, s.rank, i);
                  return bad.empty() ? bad : format("thread %d: ", t) + bad;
                });
          } catch (const ValidationError& e) {
            failed[std::size_t(t)] = e.what();
          }
        };
        std::vector<std::thread> running;
        for (int t = 1; t < threads; ++t) running.emplace_back(pair, t);
        pair(0);
        for (std::thread& th : running) th.join();
        std::string bad;
        for (const std::string& f : failed)
          if (bad.empty()) bad = f;
        settle(s.comm, bad);
        for (int t = 0; t < threads; ++t) pooled[k][std::size_t(t)].add(samples[std::size_t(t)]);
      },
      [&](size_t k) {
        if (s.rank != 0) return;
        // Every thread's blocks together; a run's median: the median of its threads' medians.
        Pooled all;
        Json per_thread = Json::array();
        for (int t = 0; t < threads; ++t) {
          const Pooled& p = pooled[k][std::size_t(t)];
          all.all.values.insert(all.all.values.end(), p.all.values.begin(), p.all.values.end());
          all.all.block = std::max(all.all.block, p.all.block);
          all.all.blocks += p.all.blocks;
          all.all.iterations += p.all.iterations;
          all.all.total += p.all.total;
          const Stats mine = sample_stats(p.all, 0.5);
          Json j = Json::object();
          j["thread"] = t;
          j["iterations"] = p.all.iterations;
          j["median"] = mine.median;
          j["mean"] = mine.mean;
          per_thread.push(j);
        }
        for (std::size_t run = 0; run < pooled[k][0].medians.size(); ++run) {
          std::vector<double> m;
          for (int t = 0; t < threads; ++t) m.push_back(pooled[k][std::size_t(t)].medians[run]);
          all.medians.push_back(median(m));
        }
        sizes.push_back(double(all_sizes[k]));
        medians.push_back(report_time(out, all_sizes[k], all, 0.5, "latency", per_thread));
      });
  add_hockney(out, sizes, medians, "median latency over all threads");
}

void run_bandwidth(const Session& s, ModeOutput& out) {
  const int peer = 1 - s.rank;
  const int window = int(s.cfg.window);
  auto send = message_buffer(s.cfg), recv = message_buffer(s.cfg);
  // Raw pointers: no virtual call on them inside the timed loops.
  void* const send_data = send->data();
  void* const recv_data = recv->data();
  Staging send_stage(*send), recv_stage(*recv);
  std::vector<MPI_Request> requests(std::size_t(window), MPI_REQUEST_NULL);
  char ack[4] = {0, 0, 0, 0};
  out.table = "# Size      Bandwidth (MB/s)  Window median (us)\n";
  const std::vector<long long> all_sizes = message_sizes(s.cfg);
  std::vector<Pooled> pooled(all_sizes.size());
  std::vector<double> sizes, per_message;
  sweep(
      s, all_sizes.size(), [&](size_t k) { return format("%lld B", all_sizes[k]); },
      [&](size_t k) {
        const long long size = all_sizes[k];
        const int count = int(size);
        const PayloadCheck check(s.cfg, Layout::contiguous(std::size_t(size)), size);
        pooled[k].add(run_loop(
            make_loop(s, size, s.rank == 0),
            [&](long long) {
              if (s.rank == 0) {
                send_stage.out(std::size_t(size));  // the window sends one buffer
                for (auto& r : requests) MPI_Isend(send_data, count, MPI_CHAR, peer, kDataTag, s.comm, &r);
                MPI_Waitall(window, requests.data(), MPI_STATUSES_IGNORE);
                MPI_Recv(ack, 4, MPI_CHAR, peer, kAckTag, s.comm, MPI_STATUS_IGNORE);
              } else {
                for (auto& r : requests) MPI_Irecv(recv_data, count, MPI_CHAR, peer, kDataTag, s.comm, &r);
                MPI_Waitall(window, requests.data(), MPI_STATUSES_IGNORE);
                recv_stage.in(std::size_t(size));
                MPI_Send(ack, 4, MPI_CHAR, peer, kAckTag, s.comm);
              }
            },
            [&](long long i) {
              if (s.rank == 0) check.prepare(*send, s.rank, i);
            },
            [&](long long i) { return s.rank == 1 ? check.verify(*recv, peer, s.rank, i) : std::string(); }));
      },
      [&](size_t k) {
        if (s.rank != 0) return;
        const long long size = all_sizes[k];
        const Samples& samples = pooled[k].all;
        const Stats time = sample_stats(samples);
        const double bandwidth = double(size) * double(window) * double(samples.iterations) / samples.total;
        Json r = Json::object();
        r["size"] = size;
        r["iterations"] = samples.iterations;
        r["window"] = window;
        r["bandwidth"] = bandwidth;
        r["time"] = stats_json(time);
        r["block"] = samples.block;
        r["repeats"] = repeats_json(out, format("%lld B", size), {{"time", &pooled[k]}});
        note_tail(out, time, format("%lld B window time", size));
        out.results.push(r);
        out.table += format("%-10lld%18.2f%20.2f\n", size, bandwidth / 1e6, time.median * 1e6);
        sizes.push_back(double(size));
        per_message.push_back(time.median / double(window));
      });
  add_hockney(out, sizes, per_message, "median time per message in the window");
}

void run_self(const Session& s, ModeOutput& out) {
  auto send = message_buffer(s.cfg), recv = message_buffer(s.cfg);
  // Raw pointers: no virtual call on them inside the timed loops.
  void* const send_data = send->data();
  void* const recv_data = recv->data();
  Staging send_stage(*send), recv_stage(*recv);
  out.table = "# Size       Time (us)        Min (us)  Median (us)     Max (us)\n";
  const std::vector<long long> all_sizes = message_sizes(s.cfg);
  std::vector<Pooled> pooled(all_sizes.size());
  std::vector<double> sizes, medians;
  sweep(
      s, all_sizes.size(), [&](size_t k) { return format("%lld B to itself", all_sizes[k]); },
      [&](size_t k) {
        const long long size = all_sizes[k];
        const int count = int(size);
        const PayloadCheck check(s.cfg, Layout::contiguous(std::size_t(size)), size);
        pooled[k].add(run_loop(
            make_loop(s, size, true),
            [&](long long) {
              send_stage.out(std::size_t(size));
              MPI_Sendrecv(send_data, count, MPI_CHAR, 0, kSelfTag, recv_data, count, MPI_CHAR, 0, kSelfTag, s.comm,
                           MPI_STATUS_IGNORE);
              recv_stage.in(std::size_t(size));
            },
            [&](long long i) { check.prepare(*send, 0, i); },
            [&](long long i) { return check.verify(*recv, 0, 0, i); }));
      },
      [&](size_t k) {
        sizes.push_back(double(all_sizes[k]));
        // one whole exchange: send and receive
        medians.push_back(report_time(out, all_sizes[k], pooled[k], 1.0, "self-exchange"));
      });
  add_hockney(out, sizes, medians, "median self-exchange time");
}

}  // namespace checkmpi::p2p
