#include "p2p/estimate.hpp"
#include "p2p/workload.hpp"

#include <mpi.h>

#include <algorithm>
#include <vector>

#include "p2p/loop.hpp"  // kMaxBlocks

namespace checkmpi::p2p {

namespace {

// A fast machine (lower bounds on time) and a slow, crowded one (the
// watchdog's yardstick).
constexpr double kFastLatency = 0.1e-6, kFastRate = 100e9;
constexpr double kSlowLatency = 100e-6, kSlowRate = 1e8;

// Message times one iteration of `bytes` costs: round trips count twice; in a
// ring the four messages of a rank overlap pairwise.
double messages_per_iteration(const P2PConfig& cfg) {
  switch (cfg.mode) {
    case Mode::PingPong: return 2.0 * cfg.threads;  // --threads T on shared cores: T round trips in turn
    case Mode::Self: return 1;
    case Mode::Barrier: return 2;  // a message in and out (a dissemination barrier: log2 P rounds of them)
    case Mode::Bandwidth: return double(cfg.window) + 1;
    case Mode::Ring: return 2;
    // PRTT(1,0), PRTT(n,0), PRTT(n,d) with n-1 waits of about a round trip,
    // and the o_r exchange with its wait of two round trips.
    case Mode::LogGP: return 2 + 2 * (double(cfg.n) + 1) + 2 * (double(cfg.n) - 1) + 6;
    case Mode::Datatype: return 4;  // a round trip with the type, one packed by hand
    // The blocking collective, the non-blocking one alone and with compute
    // (at least one message each), for every operation or pencil transpose.
    case Mode::Nbc: return 3.0 * double(std::max<size_t>(1, cfg.ops.size())) * double(cfg.progress.size());
    case Mode::Bibw: return 2 * double(cfg.window);  // both ways at once: no faster than one way
    case Mode::MbwMr: return double(cfg.window) + 1;
    // Every operation at every size: at least a message in and out each.
    case Mode::Coll: return 2.0 * double(std::max<size_t>(1, cfg.coll_ops.size()));
    // An operation and its synchronisation (a round trip) per epoch, per operation.
    case Mode::Rma: return (double(cfg.window) + 2) * double(std::max<size_t>(1, cfg.rma_ops.size()));
  }
  return 2;
}

// Payload sizes the sweep measures, in order.
std::vector<long long> payloads(const P2PConfig& cfg) {
  if (cfg.mode == Mode::Nbc && cfg.pencil_rows > 0) {
    std::vector<long long> sizes;  // a transpose moves each rank's share of the grid
    for (const Grid3& g : cfg.grids)
      sizes.push_back(static_cast<long long>(sizeof(double)) * g.cells() / (cfg.pencil_rows * cfg.pencil_cols));
    return sizes;
  }
  if (cfg.mode != Mode::Datatype) return message_sizes(cfg);
  std::vector<long long> sizes;
  for (const auto& v : cfg.vectors) sizes.push_back(v.payload_bytes());
  return sizes;
}

}  // namespace

double memory_bytes_per_rank(const P2PConfig& cfg, int nprocs) {
  // The timing loops keep at most kMaxBlocks samples; loggp's o_r also one per iteration.
  const long long iterations = std::max(cfg.iterations, cfg.iterations_large);
  const double samples = 2.0 * sizeof(double) * double(cfg.mode == Mode::LogGP ? iterations
                                                                                : std::min(kMaxBlocks, iterations));
  const double requests = kRequestBytes * double(cfg.window);
  return buffer_bytes_per_rank(cfg, nprocs) + samples + requests;
}

double fastest_run_seconds(const P2PConfig& cfg, int nprocs) {
  const double rings = cfg.mode == Mode::Ring      ? std::max(1, nprocs - 1)
                       : cfg.mode == Mode::Barrier ? double(barrier_ranks(nprocs).size())
                                                   : 1;
  // pingpong --threads T: messages_per_iteration counts T round trips in turn (the watchdog's case); at the
  // fastest each thread runs 1/T of the size's iterations and the threads run at once, 2/T messages each.
  const double messages =
      messages_per_iteration(cfg) / (cfg.mode == Mode::PingPong ? double(cfg.threads) * cfg.threads : 1);
  double total = 0;
  for (long long bytes : payloads(cfg)) {
    const LoopCounts c = loop_counts(cfg, bytes);
    total += (double(c.warmup) + double(c.iterations)) * messages * (kFastLatency + double(bytes) / kFastRate);
  }
  return rings * double(cfg.repeat) * total;
}

double watchdog_seconds(const P2PConfig& cfg) {
  if (cfg.watchdog >= 0) return cfg.watchdog;
  const std::vector<long long> sizes = payloads(cfg);
  const double largest = sizes.empty() ? 0.0 : double(*std::max_element(sizes.begin(), sizes.end()));
  return std::max(60.0, 10.0 * messages_per_iteration(cfg) * (kSlowLatency + largest / kSlowRate));
}

}  // namespace checkmpi::p2p
