#pragma once
// What a checkmpi-p2p configuration runs, derived from it alone (and the
// number of ranks): the message sizes, shapes and rank counts each mode
// measures, its iteration counts, the memory it needs and the rank counts it
// cannot run on. The parsing that makes the configuration is options.hpp's.

#include <string>
#include <vector>

#include "p2p/options.hpp"

namespace checkmpi::p2p {

// min_size, then doubling up to max_size (a zero minimum is followed by 1).
std::vector<long long> message_sizes(const P2PConfig& cfg);

// Stride 4, blocklen 1 to 4, count 1, 2, 4, ... for every payload within
// [min_size, max_size]; ordered by blocklen, then count.
std::vector<VectorShape> default_vector_sweep(long long min_size, long long max_size);

// nbc --pencil: the bytes the busiest rank sends in each transpose, grid by
// grid (X->Y, then Y->Z): the sizes the sweep reports and --inject-corruption names.
std::vector<long long> pencil_message_sizes(const P2PConfig& cfg);

// barrier: the rank counts measured, 2, 4, 8, ... and nprocs itself.
std::vector<int> barrier_ranks(int nprocs);

// OSU's rule: sizes above large_threshold use the large counts.
LoopCounts loop_counts(const P2PConfig& cfg, long long bytes);

// Bytes of message buffers one rank of `nprocs` allocates.
double buffer_bytes_per_rank(const P2PConfig& cfg, int nprocs);

// nbc: the problems that depend on the number of ranks (pencil grid against
// nprocs, all-to-all buffers beyond MPI's count limit); "" when none.
std::string nbc_rank_problem(const P2PConfig& cfg, int nprocs);
// coll and mbw-mr: the same kind of problems (an odd rank count for
// mbw-mr's pairs, all-to-all or allgather buffers beyond MPI's count limit).
std::string rank_problem(const P2PConfig& cfg, int nprocs);

// nbc (without --pencil): the sizes op is measured at (iallreduce: whole floats).
std::vector<long long> nbc_sizes(const P2PConfig& cfg, NbcOp op);

// coll: the sizes op is measured at (allreduce and reduce-scatter: whole
// floats; barrier: 0 alone).
std::vector<long long> coll_sizes(const P2PConfig& cfg, CollOp op);

}  // namespace checkmpi::p2p
