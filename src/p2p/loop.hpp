// The timed loop every mode runs, and the collective plumbing around it.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "core/errors.hpp"
#include "core/watchdog.hpp"
#include "core/samples.hpp"
#include "p2p/options.hpp"
#include "p2p/stats.hpp"

namespace checkmpi::p2p {

// Seconds one MPI_Wtime call takes (mean over back-to-back calls).
double clock_cost();

// Busy-waits without calling MPI (no progress is made meanwhile).
void spin(double seconds);

// A clock read costs tens of nanoseconds, a visible share of a
// sub-microsecond exchange. Without -c, iterations are therefore timed in
// blocks run back to back, each long enough that its one clock read costs at
// most kClockShare of it (judged from the fastest warm-up iteration), and at
// least ten blocks per size. 1 when there was no warm-up to judge from.
constexpr double kClockShare = 0.01;
long long block_length(double clock_cost, double fastest_iteration, long long iterations);

// At most this many block times are kept per size and rank: beyond it a
// uniform random subset (core/samples.hpp's Reservoir, the same positions on
// every rank, so ring can combine them block by block).
constexpr long long kMaxBlocks = 1 << 16;

struct Samples {
  std::vector<double> values;  // seconds per iteration, one value per kept block (timing rank only)
  long long block = 1;         // iterations per block
  long long blocks = 0;        // blocks timed (values keeps at most kMaxBlocks of them)
  long long iterations = 0;
  double total = 0;            // all timed iterations (timing rank only)
};

// One point of a sweep over its --repeat runs: every run's blocks together
// (totals and counts summed, block the longest), and each run's median.
struct Pooled {
  Samples all;
  std::vector<double> medians;
  void add(const Samples& s);
};

// min, median and max over blocks, mean over all iterations (total time
// over iterations, as OSU), all times `factor`.
Stats sample_stats(const Samples& s, double factor = 1.0);

// The time the blocks add up to (values times their iterations); equals
// total until values are changed, e.g. replaced by maxima over ranks. With
// more blocks than were kept, the kept ones' mean times the iterations.
double blocks_total(const Samples& s);

// One message pattern run together by every rank of `comm`.
struct Loop {
  MPI_Comm comm = MPI_COMM_NULL;
  LoopCounts counts;
  bool timing = true;     // this rank reads the clock
  bool validate = false;  // -c: prepare before and verify after every iteration
  double clock_cost = 0;
  long long block = 0;    // --block: iterations per block; 0: block_length's choice
};

// After a verified iteration: if any rank of `comm` saw wrong data, every
// rank throws ValidationError with the lowest such rank's message.
void settle(MPI_Comm comm, const std::string& local_error);

// The agreed block length: the largest any rank asks for.
long long agree_block(MPI_Comm comm, long long mine);

// Runs warm-up and timed iterations of exchange(i), i counting from 0 over
// both. With -c, prepare(i) before and verify(i) -> error text after each
// iteration run outside the timed region. Blocks of one iteration (-c,
// --block 1, long iterations) are each timed alone, between a clock read
// just before and one just after, as OSU's loops time them.
template <class Exchange, class Prepare, class Verify>
Samples run_loop(const Loop& loop, Exchange&& exchange, Prepare&& prepare, Verify&& verify) {
  const long long warmup = loop.counts.warmup, iterations = loop.counts.iterations;
  MPI_Barrier(loop.comm);
  double fastest = std::numeric_limits<double>::infinity();
  for (long long i = 0; i < warmup; ++i) {
    progress::beat(i);
    if (loop.validate) prepare(i);
    const double t0 = MPI_Wtime();
    exchange(i);
    fastest = std::min(fastest, MPI_Wtime() - t0);
    if (loop.validate) settle(loop.comm, verify(i));
  }
  Samples s;
  s.iterations = iterations;
  long long mine = loop.timing && !loop.validate ? block_length(loop.clock_cost, fastest, iterations) : 1;
  if (loop.block > 0 && !loop.validate) mine = std::min(loop.block, std::max(1LL, iterations));
  s.block = agree_block(loop.comm, mine);
  Reservoir kept(size_t(std::min(kMaxBlocks, iterations / s.block + 1)));  // allocated before timing
  if (loop.validate || s.block == 1) {
    // Every iteration timed alone, as OSU's loops: the clock read just before
    // and just after it, the bookkeeping outside.
    for (long long i = warmup; i < warmup + iterations; ++i) {
      progress::beat(i);
      if (loop.validate) prepare(i);
      const double t0 = loop.timing ? MPI_Wtime() : 0.0;
      exchange(i);
      const double t = loop.timing ? MPI_Wtime() - t0 : 0.0;
      kept.add(t);
      s.total += t;
      if (loop.validate) settle(loop.comm, verify(i));
    }
    s.blocks = kept.seen();
    s.values = std::move(kept.values());
    return s;
  }
  const double start = MPI_Wtime();
  double last = start;
  long long left = s.block;
  for (long long i = warmup; i < warmup + iterations; ++i) {
    progress::beat(i);
    exchange(i);
    if (loop.timing && --left == 0) {
      const double t = MPI_Wtime();
      kept.add((t - last) / double(s.block));
      last = t;
      left = s.block;
    }
  }
  if (loop.timing && left != s.block) {  // a shorter last block
    const double t = MPI_Wtime();
    kept.add((t - last) / double(s.block - left));
    last = t;
  }
  s.total = loop.timing ? last - start : 0.0;
  s.blocks = kept.seen();
  s.values = std::move(kept.values());
  return s;
}

// Runs f(sub) on the first `members` ranks of `world`, `sub` being their
// communicator, while the others wait (idle for the watchdog); a
// ValidationError on any member is then thrown on every rank of `world`.
template <class F>
void on_first_ranks(MPI_Comm world, int members, F&& f) {
  int rank = 0;
  MPI_Comm_rank(world, &rank);
  MPI_Comm sub = MPI_COMM_NULL;
  MPI_Comm_split(world, rank < members ? 0 : MPI_UNDEFINED, rank, &sub);
  std::string failed;
  if (sub != MPI_COMM_NULL) {
    try {
      f(sub);
    } catch (const ValidationError& e) {
      failed = e.what();
    }
    MPI_Comm_free(&sub);
  } else {
    progress::idle(true);
  }
  int failing_rank = -1;
  const std::string message = first_error(world, failed, failing_rank);
  progress::idle(false);
  if (!message.empty()) throw ValidationError(message);
}

}  // namespace checkmpi::p2p
