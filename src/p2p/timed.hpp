// Per-iteration times of the collective modes (nbc, coll): each iteration
// timed alone on every rank, as OSU's collective benchmarks do, and every
// rank's times gathered on rank 0.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <vector>

#include "p2p/modes.hpp"

namespace checkmpi::p2p {

// One quantity of one loop on this rank: the sum of every timed iteration
// and at most kMaxBlocks of their times (a Reservoir, allocated before the
// loop, so adding neither allocates nor reads the clock).
class Timed {
 public:
  explicit Timed(long long iterations) : kept_(std::size_t(std::max(1LL, std::min(kMaxBlocks, iterations)))) {}
  void add(double seconds) {
    kept_.add(seconds);
    total_ += seconds;
  }
  double total() const { return total_; }
  long long seen() const { return kept_.seen(); }
  const std::vector<double>& values() const { return kept_.values(); }

 private:
  Reservoir kept_;
  double total_ = 0;
};

// Every rank's times of one quantity as one sample on rank 0: values of all
// ranks in rank order, iterations and total summed (blocks of one iteration).
inline Samples gather(const Session& s, const Timed& mine) {
  Samples all;
  const int count = int(mine.values().size());  // the same on every rank: as many iterations
  if (s.rank == 0) all.values.resize(std::size_t(count) * std::size_t(s.size));
  MPI_Gather(mine.values().data(), count, MPI_DOUBLE, all.values.data(), count, MPI_DOUBLE, 0, s.comm);
  const double mine_total = mine.total();
  double total = 0;
  MPI_Reduce(&mine_total, &total, 1, MPI_DOUBLE, MPI_SUM, 0, s.comm);
  all.total = total;
  all.block = 1;
  all.blocks = mine.seen() * s.size;
  all.iterations = mine.seen() * s.size;
  return all;
}

}  // namespace checkmpi::p2p
