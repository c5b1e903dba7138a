// checkmpi-p2p options, defaults, sweeps and the pieces of the timing loop
// that need no partner: statistics, block lengths, buffers.
#include <gtest/gtest.h>

#include <climits>
#include <cmath>
#include <sstream>

#include "core/errors.hpp"
#include "p2p/buffer.hpp"
#include "p2p/estimate.hpp"
#include "p2p/loop.hpp"
#include "p2p/options.hpp"
#include "p2p/stats.hpp"
#include "p2p/workload.hpp"

using namespace checkmpi;
using namespace checkmpi::p2p;

namespace {

P2PConfig config(std::vector<const char*> args) {
  args.insert(args.begin(), "checkmpi-p2p");
  CommandLine cli = p2p_command_line();
  cli.parse(int(args.size()), args.data());
  return make_p2p_config(cli);
}

std::string error_of(std::vector<const char*> args) {
  try {
    config(std::move(args));
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST(P2POptions, PingPongDefaultsAreOsus) {
  const P2PConfig c = config({"pingpong"});
  EXPECT_EQ(c.mode, Mode::PingPong);
  EXPECT_EQ(c.iterations, 10000);
  EXPECT_EQ(c.warmup, 100);
  EXPECT_EQ(c.iterations_large, 1000);
  EXPECT_EQ(c.warmup_large, 10);
  EXPECT_EQ(c.large_threshold, 8192);
  const auto sizes = message_sizes(c);
  ASSERT_EQ(sizes.size(), 23u);
  EXPECT_EQ(sizes.front(), 1);
  EXPECT_EQ(sizes.back(), 4194304);
  EXPECT_EQ(loop_counts(c, 8192).iterations, 10000);
  EXPECT_EQ(loop_counts(c, 16384).iterations, 1000);
  EXPECT_EQ(loop_counts(c, 16384).warmup, 10);
}

TEST(P2POptions, ModeDefaultsAndOverrides) {
  const P2PConfig bw = config({"bw"});
  EXPECT_EQ(bw.iterations, 100);
  EXPECT_EQ(bw.iterations_large, 20);
  EXPECT_EQ(bw.window, 64);
  const P2PConfig c = config({"loggp", "-i", "7", "-x", "2", "-n", "5", "-m", "4:64", "-c", "--json", "r.json"});
  EXPECT_EQ(c.iterations, 7);
  EXPECT_EQ(c.iterations_large, 7);  // -i sets both, as OSU
  EXPECT_EQ(c.warmup_large, 2);
  EXPECT_EQ(c.n, 5);
  EXPECT_TRUE(c.validate);
  EXPECT_EQ(c.json, "r.json");
  EXPECT_EQ(message_sizes(c), (std::vector<long long>{4, 8, 16, 32, 64}));
  EXPECT_EQ(message_sizes(config({"pingpong", "-m", "0:4"})), (std::vector<long long>{0, 1, 2, 4}));
  EXPECT_EQ(config({"ring", "-m", "8"}).min_size, 1);
  EXPECT_EQ(config({"bw", "-W", "8"}).window, 8);
}

TEST(P2POptions, BarrierRanksDoubleUpToAll) {
  EXPECT_EQ(barrier_ranks(1), (std::vector<int>{}));
  EXPECT_EQ(barrier_ranks(2), (std::vector<int>{2}));
  EXPECT_EQ(barrier_ranks(8), (std::vector<int>{2, 4, 8}));
  EXPECT_EQ(barrier_ranks(12), (std::vector<int>{2, 4, 8, 12}));
  const P2PConfig c = config({"barrier"});
  EXPECT_EQ(c.mode, Mode::Barrier);
  EXPECT_EQ(c.iterations, 1000);
  EXPECT_EQ(c.warmup, 200);
  EXPECT_EQ(message_sizes(c), (std::vector<long long>{0}));
  EXPECT_EQ(buffer_bytes_per_rank(c, 8), 0.0);
}

TEST(P2POptions, DefaultDatatypeSweepCoversBothKinds) {
  const P2PConfig c = config({"datatype"});
  EXPECT_TRUE(c.default_sweep);
  bool one_block = false, touching = false, strided = false;
  long long last_bytes = 0, last_blocklen = 0;
  for (const auto& v : c.vectors) {
    EXPECT_EQ(v.stride, 4);
    EXPECT_GE(v.payload_bytes(), c.min_size);
    EXPECT_LE(v.payload_bytes(), c.max_size);
    if (v.blocklen == last_blocklen) {
      EXPECT_GT(v.payload_bytes(), last_bytes);  // ascending per shape
    }
    last_blocklen = v.blocklen;
    last_bytes = v.payload_bytes();
    one_block |= v.count == 1 && v.contiguous();
    touching |= v.count == 2 && v.blocklen == 4 && v.contiguous();
    strided |= v.count == 2 && v.blocklen == 2 && !v.contiguous();
  }
  EXPECT_TRUE(one_block);  // (1, X, 4)
  EXPECT_TRUE(touching);   // (2, 4, 4)
  EXPECT_TRUE(strided);    // (2, 2, 4)
  EXPECT_EQ(default_vector_sweep(16, 16).size(), 3u);  // (4,1,4) (2,2,4) (1,4,4)
}

TEST(P2POptions, ExplicitVectors) {
  const P2PConfig c = config({"datatype", "--vectors", "2:2:4,1:8:8,3:1:1"});
  EXPECT_FALSE(c.default_sweep);
  ASSERT_EQ(c.vectors.size(), 3u);
  EXPECT_EQ(c.vectors[0].payload_bytes(), 16);
  EXPECT_EQ(c.vectors[0].extent_bytes(), 24);
  EXPECT_FALSE(c.vectors[0].contiguous());
  EXPECT_TRUE(c.vectors[1].contiguous());
  EXPECT_TRUE(c.vectors[2].contiguous());
}

TEST(P2POptions, BufferBytesPerRank) {
  EXPECT_EQ(buffer_bytes_per_rank(config({"pingpong", "-m", "1024"}), 2), 2048);
  EXPECT_EQ(buffer_bytes_per_rank(config({"ring", "-m", "1024"}), 4), 3072);
  // Strided send and receive buffers plus two packing buffers.
  EXPECT_EQ(buffer_bytes_per_rank(config({"datatype", "--vectors", "2:2:4,1:1:1"}), 2), 2 * 24 + 2 * 16);
}

TEST(P2POptions, BadOptionsSayWhatIsWrong) {
  EXPECT_EQ(error_of({}), "no mode given (pingpong, bw, ring, loggp, datatype, nbc, self, barrier, bibw, mbw-mr, coll, rma)");
  EXPECT_EQ(error_of({"pingpang"}), "unknown mode 'pingpang' (pingpong, bw, ring, loggp, datatype, nbc, self, barrier, bibw, mbw-mr, coll, rma)");
  EXPECT_EQ(error_of({"pingpong", "extra"}), "unexpected argument 'extra'");
  EXPECT_EQ(error_of({"pingpong", "-m", "64:8"}), "message size range 64:8: MIN 64 is larger than MAX 8");
  EXPECT_EQ(error_of({"pingpong", "-m", "1:abc"}), "value of --message-size (MAX) is not an integer: 'abc'");
  EXPECT_EQ(error_of({"pingpong", "-m", "1:2:3"}), "value of --message-size is not MIN:MAX or MAX: '1:2:3'");
  EXPECT_EQ(error_of({"pingpong", "-m", "-4:8"}), "message sizes must not be negative, got -4");
  EXPECT_EQ(error_of({"pingpong", "-m", "4294967296"}), "message size 4294967296 exceeds MPI's count limit 2147483647");
  EXPECT_EQ(error_of({"pingpong", "-i", "0"}), "--iters must be at least 1, got 0");
  EXPECT_EQ(error_of({"pingpong", "-x", "-1"}), "--warmup must be at least 0, got -1");
  EXPECT_EQ(error_of({"bw", "-W", "0"}), "--window must be at least 1, got 0");
  EXPECT_EQ(error_of({"loggp", "--prtt-n", "1"}), "--prtt-n must be at least 2, got 1");
  EXPECT_EQ(error_of({"pingpong", "--buffer", "gpu"}), "unknown --buffer 'gpu' (host, cuda)");
  EXPECT_EQ(error_of({"nbc", "--buffer", "cuda"}),
            "--buffer cuda does not apply to mode nbc (its operations use host buffers)");
  EXPECT_EQ(error_of({"barrier", "--buffer", "cuda"}), "--buffer cuda does not apply to mode barrier (no message)");
  EXPECT_EQ(error_of({"barrier", "-m", "1:8"}), "--message-size does not apply to mode barrier (no message)");
  // Accepted here; whether the build and the node have a GPU is checked once MPI runs.
  const P2PConfig cuda = config({"pingpong", "--buffer", "cuda"});
  EXPECT_EQ(cuda.buffer, BufferKind::Cuda);
  EXPECT_STREQ(buffer_name(cuda.buffer), "cuda");
  EXPECT_EQ(error_of({"datatype", "--vectors", "2:4:2"}), "datatype tuple '2:4:2': stride 2 is smaller than blocklen 4");
  EXPECT_EQ(error_of({"datatype", "--vectors", "2:4"}), "datatype tuple '2:4' is not COUNT:BLOCKLEN:STRIDE");
  EXPECT_EQ(error_of({"datatype", "--vectors", "0:1:1"}), "datatype tuple '0:1:1': count and blocklen must be at least 1");
  EXPECT_EQ(error_of({"datatype", "-m", "1:2"}),
            "no datatype tuple of the default sweep has a payload between 1 and 2 bytes");
  EXPECT_EQ(error_of({"pingpong", "--vectors", "1:1:1"}), "--vectors applies to mode datatype only");
  EXPECT_EQ(error_of({"pingpong", "--inject-corruption", "8:8"}), "--inject-corruption: OFFSET must lie inside SIZE");
}

TEST(P2POptions, OldSpellingsWorkWithADeprecationLine) {
  const char* argv[] = {"checkmpi-p2p", "loggp", "-n", "5", "--iterations", "7"};
  CommandLine cli = p2p_command_line();
  cli.parse(6, argv);
  const P2PConfig c = make_p2p_config(cli);
  EXPECT_EQ(c.n, 5);
  EXPECT_EQ(c.iterations, 7);
  ASSERT_EQ(cli.deprecations().size(), 2u);  // one per old spelling
  EXPECT_EQ(cli.deprecations()[0], "-n is the old spelling of --prtt-n; it works in this release only");
  EXPECT_EQ(cli.deprecations()[1], "--iterations is the old spelling of --iters; it works in this release only");
  EXPECT_EQ(config({"loggp", "--prtt-n", "6", "--iters", "9"}).n, 6);
  EXPECT_EQ(config({"pingpong", "-i", "9"}).iterations_large, 9);
  EXPECT_EQ(error_of({"loggp", "-n", "4", "--prtt-n", "5"}), "option --prtt-n is given twice; give it once");
}

TEST(P2POptions, HelpFitsEightyColumns) {
  std::istringstream help(p2p_command_line().help());
  std::string line;
  int lines = 0;
  while (std::getline(help, line)) {
    EXPECT_LE(line.size(), CommandLine::kHelpWidth) << line;
    ++lines;
  }
  EXPECT_GT(lines, 30);
  EXPECT_EQ(p2p_command_line().help().find("-n, "), std::string::npos);  // -n is ranks, in checkmpi's commands
}

TEST(P2PStats, MinMedianMeanMaxAndPercentiles) {
  const Stats odd = summarize({3, 1, 2});
  EXPECT_EQ(odd.min, 1);
  EXPECT_EQ(odd.median, 2);
  EXPECT_EQ(odd.mean, 2);
  EXPECT_EQ(odd.max, 3);
  EXPECT_EQ(summarize({4, 1, 3, 2}).median, 2.5);
  EXPECT_TRUE(std::isnan(summarize({}).median));
  EXPECT_EQ(scaled(odd, 0.5).max, 1.5);
  EXPECT_EQ(odd.n, 3);
  EXPECT_DOUBLE_EQ(odd.p5, 1.1);  // linear interpolation between order statistics
  EXPECT_DOUBLE_EQ(odd.p95, 2.9);
}

TEST(P2PLoop, BlocksKeepClockReadsUnderOnePercent) {
  EXPECT_EQ(block_length(30e-9, 0.3e-6, 10000), 10);   // 30 ns clock, 300 ns iteration
  EXPECT_EQ(block_length(30e-9, 1e-3, 10000), 1);      // long iterations: timed one by one
  EXPECT_EQ(block_length(30e-9, 0.3e-6, 50), 5);       // at least ten blocks
  EXPECT_EQ(block_length(30e-9, INFINITY, 10000), 1);  // no warm-up to judge from
  Samples s;
  s.values = {1.0, 2.0, 4.0};
  s.block = 4;
  s.iterations = 10;  // blocks of 4, 4 and 2
  EXPECT_EQ(blocks_total(s), 4.0 + 8.0 + 8.0);
}

TEST(P2PBuffer, FillCheckCorruptPack) {
  const Layout strided{3, 4, 10};  // bytes 0-3, 10-13, 20-23
  EXPECT_EQ(strided.payload(), 12u);
  EXPECT_EQ(strided.extent(), 24u);
  auto a = make_buffer(BufferKind::Host, strided.extent());
  auto packed = make_buffer(BufferKind::Host, strided.payload());
  auto b = make_buffer(BufferKind::Host, strided.extent());
  const auto seed = pattern_seed(1, 7, 12);
  a->fill(strided, seed);
  EXPECT_FALSE(a->check(strided, seed).has_value());
  EXPECT_TRUE(a->check(strided, pattern_seed(0, 7, 12)).has_value());  // another sender's pattern
  a->pack(strided, *packed);
  EXPECT_FALSE(packed->check(Layout::contiguous(12), seed).has_value());
  b->unpack(strided, *packed);
  EXPECT_FALSE(b->check(strided, seed).has_value());
  b->corrupt(strided, 5);  // second block, second byte: buffer byte 11
  const auto bad = b->check(strided, seed);
  ASSERT_TRUE(bad.has_value());
  EXPECT_EQ(bad->offset, 5u);
  EXPECT_EQ(bad->got, bad->expected ^ 0xFFu);
  EXPECT_EQ(static_cast<unsigned char*>(b->data())[11], bad->got);
  // Host memory: MPI's bytes are the buffer's own, nothing to stage; read and write copy ranges.
  EXPECT_FALSE(b->staged());
  unsigned char two[2] = {0x5A, 0xA5}, back[2] = {0, 0};
  b->write(1, 2, two);
  b->read(1, 2, back);
  EXPECT_EQ(back[0], 0x5A);
  EXPECT_EQ(back[1], 0xA5);
  P2PConfig host;
  EXPECT_STREQ(mpi_buffers_name(host), "host");
  EXPECT_EQ(Layout::of(VectorShape{2, 2, 4}).stride, 16u);
}

TEST(P2POptions, HostileNumbersDoNotOverflow) {
  // (2^31-1 - 1) * (2^31-1) floats: once a wrapped product that passed every check.
  const VectorShape huge{2147483647, 1, 2147483647};
  EXPECT_EQ(huge.extent_bytes(), LLONG_MAX);
  EXPECT_EQ((VectorShape{4611686018427387904LL, 4, 4}.payload_bytes()), LLONG_MAX);
  EXPECT_EQ(error_of({"datatype", "--vectors", "2147483647:1:2147483647"}),
            "datatype tuple '2147483647:1:2147483647': the type spans more bytes than an MPI count can hold");
  EXPECT_EQ(error_of({"datatype", "--vectors", ""}), "--vectors needs at least one COUNT:BLOCKLEN:STRIDE tuple");
  EXPECT_EQ(error_of({"loggp", "-n", "4294967296"}), "--prtt-n 4294967296 is too large: at most 2147483647");
  EXPECT_EQ(error_of({"pingpong", "-m", "1:64", "--inject-corruption", "3:0"}),
            "--inject-corruption: no message of 3 bytes is measured in this run");
  EXPECT_EQ(error_of({"pingpong", "--watchdog", "-2"}),
            "--watchdog must be 0 (off) or 1 to 10^7 seconds, got '-2'");
  EXPECT_EQ(error_of({"pingpong", "-i", "3", "-i", "4"}), "option --iters is given twice; give it once");
  EXPECT_EQ(error_of({"pingpong", "--events", ""}), "--events needs a file name");
  EXPECT_EQ(error_of({"barrier", "-c"}), "-c does not apply to mode barrier (no message to check)");
  EXPECT_EQ(error_of({"pingpong", "-c", "--block", "4"}),
            "--block does not apply with -c (every iteration is checked, and timed, alone)");
}

TEST(P2PEstimate, MemoryTimeAndWatchdog) {
  const P2PConfig c = config({"pingpong", "-m", "1024", "-i", "1000", "-x", "0"});
  EXPECT_EQ(memory_bytes_per_rank(c, 2), 2048 + 2.0 * 8 * 1000 + kRequestBytes * 64);
  // At most kMaxBlocks samples are kept: 10^9 iterations of 1 B need no 30 GiB.
  EXPECT_LT(memory_bytes_per_rank(config({"pingpong", "-m", "1:1", "-i", "1000000000"}), 2), 2e6);
  // 11 sizes of 1000 round trips of two messages, each at least 0.1 us: about 2.2 ms.
  EXPECT_NEAR(fastest_run_seconds(c, 2), 11 * 1000 * 2 * 0.1e-6, 1e-4);
  // --threads 4: the 1000 round trips shared by four threads at once.
  EXPECT_NEAR(fastest_run_seconds(config({"pingpong", "-m", "1024", "-i", "1000", "-x", "0", "--threads", "4"}), 2),
              fastest_run_seconds(c, 2) / 4, 1e-12);
  EXPECT_EQ(watchdog_seconds(c), 60);
  EXPECT_EQ(watchdog_seconds(config({"pingpong", "--watchdog", "3"})), 3);
  // Ring: rings of 2 .. 8 ranks.
  const P2PConfig ring = config({"ring", "-m", "8", "-i", "10", "-x", "0"});
  EXPECT_NEAR(fastest_run_seconds(ring, 8), 7 * fastest_run_seconds(ring, 2), 1e-12);
  EXPECT_GT(fastest_run_seconds(config({"pingpong", "-i", "200000000"}), 2), 3600);
  // --repeat runs the sweep again; nbc counts its three loops per progress count.
  EXPECT_NEAR(fastest_run_seconds(config({"pingpong", "-m", "1024", "-i", "1000", "-x", "0", "--repeat", "3"}), 2),
              3 * fastest_run_seconds(c, 2), 1e-12);
  const P2PConfig nbc = config({"nbc", "--op", "ibcast", "-m", "8:8", "-i", "10", "-x", "0", "--progress", "0,4"});
  EXPECT_NEAR(fastest_run_seconds(nbc, 4), 10 * 3 * 2 * (0.1e-6 + 8 / 100e9), 1e-12);
}

TEST(P2POptions, OsuCounterparts) {
  // bibw and mbw-mr: osu_bw's counts and window; coll: OSU's collectives'; rma: osu_latency's, one op per epoch.
  const P2PConfig bibw = config({"bibw"});
  EXPECT_EQ(bibw.iterations, 100);
  EXPECT_EQ(bibw.iterations_large, 20);
  EXPECT_EQ(bibw.window, 64);
  EXPECT_EQ(config({"mbw-mr", "-W", "8"}).window, 8);
  const P2PConfig coll = config({"coll"});
  EXPECT_EQ(coll.min_size, 4);
  EXPECT_EQ(coll.max_size, 1048576);
  EXPECT_EQ(coll.coll_ops.size(), 7u);
  EXPECT_EQ(coll_sizes(config({"coll", "-m", "1:16"}), CollOp::Allreduce), (std::vector<long long>{4, 8, 16}));
  EXPECT_EQ(coll_sizes(config({"coll", "-m", "1:16"}), CollOp::Allgather), (std::vector<long long>{1, 2, 4, 8, 16}));
  EXPECT_EQ(coll_sizes(coll, CollOp::Barrier), (std::vector<long long>{0}));
  const P2PConfig rma = config({"rma"});
  EXPECT_EQ(rma.window, 1);
  EXPECT_EQ(rma.sync, RmaSync::Flush);
  EXPECT_EQ(rma.iterations, 10000);
  EXPECT_EQ(rma.rma_ops, (std::vector<RmaOp>{RmaOp::Put, RmaOp::Get, RmaOp::Acc}));
  const P2PConfig fence = config({"rma", "--op", "acc,put", "--sync", "lock-all", "-W", "4"});
  EXPECT_EQ(fence.rma_ops, (std::vector<RmaOp>{RmaOp::Acc, RmaOp::Put}));
  EXPECT_EQ(fence.sync, RmaSync::LockAll);
  EXPECT_EQ(fence.window, 4);
  EXPECT_STREQ(rma_sync_name(fence.sync), "lock-all");
  EXPECT_EQ(config({"pingpong", "--threads", "4"}).threads, 4);
  EXPECT_EQ(config({"pingpong"}).threads, 1);
}

TEST(P2POptions, OsuCounterpartErrors) {
  EXPECT_EQ(error_of({"rma", "--sync", "bogus"}), "unknown --sync 'bogus' (fence, pscw, lock, lock-all, flush)");
  EXPECT_EQ(error_of({"coll", "--op", "ireduce"}),
            "unknown --op 'ireduce' for mode coll (allreduce, alltoall, alltoallv, bcast, allgather, reduce-scatter, "
            "barrier, all)");
  EXPECT_EQ(error_of({"bw", "--sync", "fence"}), "--sync applies to mode rma only");
  EXPECT_EQ(error_of({"pingpong", "--threads", "65"}), "--threads 65 is too large: at most 64");
  EXPECT_EQ(error_of({"bibw", "--threads", "2"}), "--threads applies to mode pingpong only");
  EXPECT_EQ(error_of({"rma", "--buffer", "cuda"}), "--buffer cuda does not apply to mode rma (its windows are host memory)");
  EXPECT_EQ(rank_problem(config({"mbw-mr"}), 3),
            "mode mbw-mr pairs rank i with rank i + P/2: it needs an even number of ranks, got 3");
  EXPECT_EQ(rank_problem(config({"mbw-mr"}), 4), "");
  // The thread level asked for before MPI_Init: OSU's (single) unless a mode needs more.
  const char* plain[] = {"checkmpi-p2p", "nbc"};
  const char* threads[] = {"checkmpi-p2p", "pingpong", "--threads", "2"};
  const char* one[] = {"checkmpi-p2p", "pingpong", "--threads=1"};
  const char* progress[] = {"checkmpi-p2p", "nbc", "--progress-thread"};
  EXPECT_EQ(wanted_thread_level(2, const_cast<char**>(plain)), MPI_THREAD_SINGLE);
  EXPECT_EQ(wanted_thread_level(4, const_cast<char**>(threads)), MPI_THREAD_MULTIPLE);
  EXPECT_EQ(wanted_thread_level(3, const_cast<char**>(one)), MPI_THREAD_SINGLE);
  EXPECT_EQ(wanted_thread_level(3, const_cast<char**>(progress)), MPI_THREAD_FUNNELED);
}

TEST(P2POptions, BlockTimesAsOsuWhenAsked) {
  // Default: the loop chooses (0); --block 1: every iteration timed alone, as osu_latency.
  EXPECT_EQ(config({"pingpong"}).block, 0);
  EXPECT_EQ(config({"pingpong", "--block", "1"}).block, 1);
  EXPECT_EQ(config({"rma", "--block", "20"}).block, 20);
  EXPECT_EQ(error_of({"pingpong", "--block", "0"}), "--block must be at least 1, got 0");
  EXPECT_EQ(error_of({"nbc", "--block", "1"}), "--block does not apply to mode nbc (it times every iteration alone, as OSU)");
  EXPECT_EQ(error_of({"coll", "--block", "2"}), "--block does not apply to mode coll (it times every iteration alone, as OSU)");
  EXPECT_EQ(error_of({"mbw-mr", "--block", "2"}),
            "--block does not apply to mode mbw-mr (it times every iteration alone, as OSU)");
}
