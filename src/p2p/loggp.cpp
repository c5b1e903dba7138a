// loggp: the PRTT method of Hoefler, Lichei and Rehm ("Low-Overhead LogGP
// Parameter Assessment for Modern Interconnection Networks", IPDPS 2007), as
// NetGauge implements it. Rank 0 is the client, rank 1 the server.
#include "p2p/modes.hpp"
#include "p2p/workload.hpp"

namespace checkmpi::p2p {

namespace {

constexpr int kDataTag = 1, kGoTag = 2;

}  // namespace

void run_loggp(const Session& s, ModeOutput& out) {
  const bool client = s.rank == 0;
  const int peer = 1 - s.rank;
  const int n = int(s.cfg.n);
  auto send = message_buffer(s.cfg), recv = message_buffer(s.cfg);
  // Raw pointers: no virtual call on them inside the timed loops.
  void* const send_data = send->data();
  void* const recv_data = recv->data();
  Staging send_stage(*send), recv_stage(*recv);
  out.table = "# Size    PRTT(1,0) (us)  PRTT(n,0) (us)  PRTT(n,d) (us)   o_s (us)   o_r (us)  g+G*s (us)\n";
  const std::vector<long long> all_sizes = message_sizes(s.cfg);
  std::vector<std::vector<LogGPPoint>> runs(all_sizes.size());  // per size, one point per run
  std::vector<LogGPPoint> points;                                // per size, the median over runs
  sweep(
      s, all_sizes.size(), [&](size_t k) { return format("%lld B", all_sizes[k]); },
      [&](size_t k) {
        const long long size = all_sizes[k];
        const int count = int(size);
        const PayloadCheck check(s.cfg, Layout::contiguous(std::size_t(size)), size);
        const Loop loop = make_loop(s, size, client);
        auto prepare = [&](long long i) { check.prepare(*send, s.rank, i); };
        auto verify = [&](long long i) { return check.verify(*recv, peer, s.rank, i); };
        // PRTT(messages, delay, s): the client sends `messages` messages, waiting
        // `delay` between them; the server answers the last with one message.
        auto prtt = [&](int messages, double delay) {
          const Samples samples = run_loop(
              loop,
              [&](long long) {
                for (int m = 0; m < messages; ++m) {
                  if (client) {
                    if (m > 0 && delay > 0) spin(delay);
                    send_stage.out(std::size_t(size));
                    MPI_Send(send_data, count, MPI_CHAR, peer, kDataTag, s.comm);
                  } else {
                    MPI_Recv(recv_data, count, MPI_CHAR, peer, kDataTag, s.comm, MPI_STATUS_IGNORE);
                    recv_stage.in(std::size_t(size));
                  }
                }
                if (client) {
                  MPI_Recv(recv_data, count, MPI_CHAR, peer, kDataTag, s.comm, MPI_STATUS_IGNORE);
                  recv_stage.in(std::size_t(size));
                } else {
                  send_stage.out(std::size_t(size));
                  MPI_Send(send_data, count, MPI_CHAR, peer, kDataTag, s.comm);
                }
              },
              prepare, verify);
          return median(samples.values);
        };
        LogGPPoint p;
        p.size = double(size);
        p.prtt_1_0 = prtt(1, 0.0);
        MPI_Bcast(&p.prtt_1_0, 1, MPI_DOUBLE, 0, s.comm);
        const double d = p.prtt_1_0;
        p.prtt_n_0 = prtt(n, 0.0);
        p.prtt_n_d = prtt(n, d);

        // o_r: the server lets a message arrive, waiting twice a round trip after
        // its "go", then times MPI_Recv alone.
        std::vector<double> receive_times;
        Loop quiet = loop;
        quiet.timing = false;
        char go = 0;
        run_loop(
            quiet,
            [&](long long i) {
              if (client) {
                MPI_Recv(&go, 0, MPI_CHAR, peer, kGoTag, s.comm, MPI_STATUS_IGNORE);
                send_stage.out(std::size_t(size));
                MPI_Send(send_data, count, MPI_CHAR, peer, kDataTag, s.comm);
                return;
              }
              MPI_Send(&go, 0, MPI_CHAR, peer, kGoTag, s.comm);
              spin(2 * d);
              const double t0 = MPI_Wtime();
              MPI_Recv(recv_data, count, MPI_CHAR, peer, kDataTag, s.comm, MPI_STATUS_IGNORE);
              recv_stage.in(std::size_t(size));
              if (i >= loop.counts.warmup) receive_times.push_back(MPI_Wtime() - t0);
            },
            prepare, [&](long long i) { return client ? std::string() : verify(i); });
        p.o_r = median(receive_times);
        MPI_Bcast(&p.o_r, 1, MPI_DOUBLE, 1, s.comm);
        runs[k].push_back(p);
      },
      [&](size_t k) {
        const long long size = all_sizes[k];
        // Each quantity the median over runs (one run: itself).
        LogGPPoint p;
        p.size = double(size);
        Pooled prtt_1_0, prtt_n_0, prtt_n_d, o_r;
        for (const LogGPPoint& q : runs[k]) {
          prtt_1_0.medians.push_back(q.prtt_1_0);
          prtt_n_0.medians.push_back(q.prtt_n_0);
          prtt_n_d.medians.push_back(q.prtt_n_d);
          o_r.medians.push_back(q.o_r);
        }
        p.prtt_1_0 = median(prtt_1_0.medians);
        p.prtt_n_0 = median(prtt_n_0.medians);
        p.prtt_n_d = median(prtt_n_d.medians);
        p.o_r = median(o_r.medians);
        points.push_back(p);
        if (!client) return;
        const LogGPDerived v = derive_loggp(p, n);
        Json r = Json::object();
        r["size"] = size;
        r["prtt_1_0"] = p.prtt_1_0;
        r["prtt_n_0"] = p.prtt_n_0;
        r["prtt_n_d"] = p.prtt_n_d;
        r["d"] = v.d;
        r["o_s"] = v.o_s;
        r["o_r"] = p.o_r;
        r["g_plus_Gs"] = v.g_plus_Gs;
        r["iterations"] = loop_counts(s.cfg, size).iterations * static_cast<long long>(runs[k].size());
        r["repeats"] = repeats_json(out, format("%lld B", size), {{"prtt_1_0", &prtt_1_0}, {"prtt_n_0", &prtt_n_0},
                                                                  {"prtt_n_d", &prtt_n_d}, {"o_r", &o_r}});
        out.results.push(r);
        out.table += format("%-8lld%16.2f%16.2f%16.2f%11.3f%11.3f%12.3f\n", size, p.prtt_1_0 * 1e6, p.prtt_n_0 * 1e6,
                            p.prtt_n_d * 1e6, v.o_s * 1e6, p.o_r * 1e6, v.g_plus_Gs * 1e6);
      });
  if (!client) return;

  const LogGPFit fit = fit_loggp(points, n);
  Json j = Json::object();
  j["n"] = n;
  j["L"] = fit.L;
  j["o_s"] = fit.o_s;
  j["o_r"] = fit.o_r;
  j["g"] = fit.g;
  j["G"] = fit.G;
  j["r2"] = fit.r2;
  Json residuals = Json::array();
  for (size_t i = 0; i < points.size(); ++i) {
    Json r = Json::object();
    r["size"] = static_cast<long long>(points[i].size);
    r["residual"] = fit.residuals[i];
    residuals.push(r);
  }
  j["residuals"] = residuals;
  j["warnings"] = Json::array_of(fit.warnings);
  const auto wrong = unphysical(fit, points);
  if (!wrong.empty()) j["unphysical"] = unphysical_json(wrong);
  out.fits["loggp"] = j;
  note_fit(out, fit.r2, "LogGP fit of g + G*s");
  const std::string bandwidth = fit.G > 0 ? format(" (%.1f MB/s)", 1e-6 / fit.G) : "";
  out.table += format("# LogGP (n = %d): %s, %s, %s, %s, %s%s, R^2 = %.4f\n", n,
                      fitted_text("L", fit.L * 1e6, "%.3f us", wrong).c_str(),
                      fitted_text("o_s", fit.o_s * 1e6, "%.3f us", wrong).c_str(),
                      fitted_text("o_r", fit.o_r * 1e6, "%.3f us", wrong).c_str(),
                      fitted_text("g", fit.g * 1e6, "%.3f us", wrong).c_str(),
                      fitted_text("G", fit.G * 1e9, "%.6f ns/B", wrong).c_str(), bandwidth.c_str(), fit.r2);
  for (const auto& u : wrong) out.table += "# note: " + u.reason + "\n";
  for (const auto& w : fit.warnings) out.table += "# warning: " + w + "\n";
}

}  // namespace checkmpi::p2p
