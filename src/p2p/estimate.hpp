// What a checkmpi-p2p run will cost, judged before it starts: memory per
// rank, the least time the whole sweep can take, and the watchdog's default.
#pragma once

#include "p2p/options.hpp"

namespace checkmpi::p2p {

// Bytes one rank allocates: message buffers, requests, and the timing
// samples of the longest size.
// A pending request costs the MPI library more than its handle: about 120
// bytes of heap each in Open MPI 4.1 (bw -W 10^8 grew to 12 GB); counted high.
constexpr double kRequestBytes = 256;
double memory_bytes_per_rank(const P2PConfig& cfg, int nprocs);

// Seconds the sweep takes at the very least (every message at a fast
// machine's latency and bandwidth); sweeps that surely take over an hour are
// refused unless --force. `nprocs` matters for ring (rings of 2..nprocs).
// --repeat multiplies it.
double fastest_run_seconds(const P2PConfig& cfg, int nprocs);

// --watchdog, or by default ten times the longest iteration on a slow link
// (at least 60 s).
double watchdog_seconds(const P2PConfig& cfg);

}  // namespace checkmpi::p2p
