// checkmpi-p2p's modes, options and their defaults.
#pragma once

#include <string>
#include <vector>

#include "core/cli.hpp"
#include "p2p/pencil.hpp"

namespace checkmpi::p2p {

enum class Mode { PingPong, Bandwidth, Ring, LogGP, Datatype, Nbc, Self, Barrier, Bibw, MbwMr, Coll, Rma };

// The non-blocking collectives of mode nbc (each against its blocking twin).
enum class NbcOp { Ialltoall, Ialltoallv, Iallreduce, Ibcast };

// The blocking collectives of mode coll (OSU's osu_allreduce and siblings).
enum class CollOp { Allreduce, Alltoall, Alltoallv, Bcast, Allgather, ReduceScatter, Barrier };

// Mode rma: the one-sided operation (rank 0 the origin, rank 1 the target)
// and how its epochs are synchronised (OSU's osu_put_latency -s).
enum class RmaOp { Put, Get, Acc };
enum class RmaSync { Fence, Pscw, Lock, LockAll, Flush };

constexpr int kMaxThreads = 64;  // pingpong --threads

// Where message buffers live: host memory, or (--buffer cuda, OSU's -d cuda)
// GPU memory handed to MPI when it is CUDA-aware and staged through pinned
// host memory otherwise; everything that touches buffer bytes goes through
// p2p/buffer.hpp.
enum class BufferKind { Host, Cuda };

// MPI_Type_vector(count, blocklen, stride, MPI_FLOAT): counts in elements.
struct VectorShape {
  long long count = 1, blocklen = 1, stride = 1;
  // One block, or blocks that touch: the bytes form one run.
  bool contiguous() const { return count == 1 || blocklen == stride; }
  long long payload_bytes() const;
  long long extent_bytes() const;  // first to last byte the type touches
};
constexpr long long kElementBytes = 4;  // sizeof(float): datatype mode's element

struct LoopCounts {
  long long warmup = 0, iterations = 1;
};

struct P2PConfig {
  Mode mode = Mode::PingPong;
  BufferKind buffer = BufferKind::Host;
  // --buffer cuda, set once MPI runs (p2p/main.cpp): this rank's GPU, whether
  // MPI gets device pointers (CUDA-aware) or staged host copies, and how that was learnt.
  int device = -1;
  bool mpi_device_buffers = false;
  std::string device_name, aware_query;
  bool validate = false;
  long long min_size = 1, max_size = 4194304;  // bytes (datatype: payload bytes)
  long long iterations = 0, warmup = 0;        // sizes up to large_threshold
  long long iterations_large = 0, warmup_large = 0;
  long long large_threshold = 8192;
  long long window = 64;  // bw, bibw, mbw-mr: sends in flight; rma: operations per epoch (default 1)
  long long n = 10;       // loggp: messages per PRTT(n, ., s)
  long long repeat = 1;   // sweeps, interleaved: every size once, then again
  long long block = 0;    // --block N: iterations per timed block; 0: chosen from the clock's cost
  std::vector<VectorShape> vectors;  // datatype: the tuples measured, in order
  bool default_sweep = true;         // datatype: vectors come from the default sweep
  // nbc
  std::vector<NbcOp> ops;                // measured in this order
  std::vector<long long> progress{0};    // MPI_Test calls spread over the compute: one run each
  bool progress_thread = false;          // --progress-thread (set before MPI_Init, see p2p/progress.hpp)
  bool osu_clock = false;                // --osu-clock: a clock pair around each overlapped phase, as OSU
  int pencil_rows = 0, pencil_cols = 0;  // --pencil PxQ; 0: the OSU-style sweep of ops instead
  std::vector<Grid3> grids;              // --pencil: the grids transposed, in order
  std::vector<CollOp> coll_ops;          // coll: measured in this order
  std::vector<RmaOp> rma_ops;            // rma: measured in this order
  RmaSync sync = RmaSync::Flush;         // rma --sync
  int threads = 1;                       // pingpong --threads (MPI_THREAD_MULTIPLE above 1)
  std::string json;
  std::string events;  // --events FILE: progress as JSON lines (core/events.hpp)
  double watchdog = -1;  // seconds without progress before the job is aborted; 0: off; < 0: default
  bool force = false;    // run even if the estimate says it takes hours
  long long corrupt_size = -1, corrupt_offset = 0;  // test only: --inject-corruption
};

const char* mode_name(Mode m);
const char* nbc_op_name(NbcOp op);
const char* coll_op_name(CollOp op);
const char* rma_op_name(RmaOp op);
const char* rma_sync_name(RmaSync s);

// Before MPI_Init: MPI_THREAD_MULTIPLE when argv asks for pingpong
// --threads above 1; MPI_THREAD_FUNNELED with --progress-thread (as before);
// else MPI_THREAD_SINGLE, as OSU's MPI_Init: Open MPI 4.1 turns on its
// internal locking for any level above MPI_THREAD_SINGLE (opal_using_threads),
// which cost nbc's small MPI_Ialltoall 0.1 us of 0.4 (docs/p2p.md, "The
// harness's own cost"). Only the main thread calls MPI (the watchdog's
// MPI_Abort, for a job already hung, is the one exception).
int wanted_thread_level(int argc, char** argv);
const char* buffer_name(BufferKind b);
// "host", "device" (CUDA-aware MPI gets device pointers) or "staged".
const char* mpi_buffers_name(const P2PConfig& cfg);

CommandLine p2p_command_line();

// The mode is the one positional argument. Throws UsageError on anything
// malformed or out of range; does not depend on the number of ranks.
P2PConfig make_p2p_config(const CommandLine& cli);

// "COUNT:BLOCKLEN:STRIDE,..." (UsageError for malformed or odd tuples).
std::vector<VectorShape> parse_vectors(const std::string& text);

}  // namespace checkmpi::p2p
