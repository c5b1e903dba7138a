// Mode nbc without partners: OSU's overlap formula on synthetic times, the
// compute-and-probe loop (as an MPI singleton), options and their limits.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>

#include "core/errors.hpp"
#include "p2p/options.hpp"
#include "p2p/overlap.hpp"
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

// Times in microseconds; the formula does not care about the unit.
TEST(NbcOverlap, OsuFormulaOnSyntheticTimes) {
  // Communication fully hidden: overall = compute (calibrated to pure comm).
  EXPECT_DOUBLE_EQ(osu_overlap(10.0, 10.0, 0.0, 10.0), 100.0);
  // Nothing hidden: overall = compute + pure comm.
  EXPECT_DOUBLE_EQ(osu_overlap(20.0, 10.0, 0.0, 10.0), 0.0);
  // Half hidden.
  EXPECT_DOUBLE_EQ(osu_overlap(15.0, 10.0, 0.0, 10.0), 50.0);
  // MPI_Test time is an overhead: compute (12) includes 2 of tests, so the
  // compute proper is 10 and overall 16 leaves 6 of 10 exposed -> 40 %.
  EXPECT_DOUBLE_EQ(osu_overlap(16.0, 12.0, 2.0, 10.0), 40.0);
  // More than compute + comm (noise, a slow wait): clipped to 0, as OSU's max(0, ...).
  EXPECT_DOUBLE_EQ(osu_overlap(35.0, 10.0, 0.0, 10.0), 0.0);
  // OSU's own terms: overall 4.2, cpu 3.0 with 0.4 of tests, pure comm 2.5.
  EXPECT_NEAR(osu_overlap(4.2, 3.0, 0.4, 2.5), 100.0 - (4.2 - 2.6) / 2.5 * 100.0, 1e-12);
  EXPECT_TRUE(std::isnan(osu_overlap(1.0, 1.0, 0.0, 0.0)));
}

TEST(NbcOverlap, ComputeRunsItsTimeAndProbesTheRequest) {
  const double seconds = 2e-4;
  double t = MPI_Wtime();
  compute_for(seconds);
  EXPECT_GE(MPI_Wtime() - t, seconds);
  // A receive from MPI_PROC_NULL is complete at once: MPI_Test finds it done.
  MPI_Request r;
  char byte = 0;
  MPI_Irecv(&byte, 1, MPI_CHAR, MPI_PROC_NULL, 0, MPI_COMM_SELF, &r);
  t = MPI_Wtime();
  const double in_test = compute_and_probe(seconds, 8, &r);
  const double elapsed = MPI_Wtime() - t;
  EXPECT_EQ(r, MPI_REQUEST_NULL);
  EXPECT_GE(elapsed, seconds);
  EXPECT_GT(in_test, 0.0);
  EXPECT_LT(in_test, elapsed);
  EXPECT_EQ(compute_and_probe(seconds, 0, &r), 0.0);  // no probes: no test time
}

TEST(NbcOptions, DefaultsAreOsusCollectiveOnes) {
  const P2PConfig c = config({"nbc"});
  EXPECT_EQ(c.mode, Mode::Nbc);
  EXPECT_EQ(c.min_size, 4);
  EXPECT_EQ(c.max_size, 1048576);
  EXPECT_EQ(c.iterations, 1000);
  EXPECT_EQ(c.warmup, 100);
  EXPECT_EQ(c.iterations_large, 100);
  EXPECT_EQ(c.warmup_large, 10);
  EXPECT_EQ(c.ops, (std::vector<NbcOp>{NbcOp::Ialltoall, NbcOp::Ialltoallv, NbcOp::Iallreduce, NbcOp::Ibcast}));
  EXPECT_EQ(c.progress, std::vector<long long>{0});
  EXPECT_FALSE(c.progress_thread);
  EXPECT_FALSE(c.osu_clock);
  EXPECT_EQ(c.pencil_rows, 0);
  EXPECT_TRUE(c.grids.empty());
}

TEST(NbcOptions, OpsProgressAndPencils) {
  const P2PConfig c =
      config({"nbc", "--op", "ibcast,iallreduce", "--progress", "0,1,16", "--progress-thread", "--osu-clock"});
  EXPECT_EQ(c.ops, (std::vector<NbcOp>{NbcOp::Ibcast, NbcOp::Iallreduce}));
  EXPECT_EQ(c.progress, (std::vector<long long>{0, 1, 16}));
  EXPECT_TRUE(c.progress_thread);
  EXPECT_TRUE(c.osu_clock);
  EXPECT_STREQ(nbc_op_name(NbcOp::Ialltoallv), "ialltoallv");

  const P2PConfig p = config({"nbc", "--pencil", "2x4", "--grid", "9x7x5,16x16x16"});
  EXPECT_EQ(p.pencil_rows, 2);
  EXPECT_EQ(p.pencil_cols, 4);
  ASSERT_EQ(p.grids.size(), 2u);
  EXPECT_EQ(p.grids[0].text(), "9x7x5");
  EXPECT_EQ(config({"nbc", "--pencil", "2x2"}).grids.size(), 4u);  // 16^3 .. 128^3
  EXPECT_EQ(nbc_rank_problem(p, 8), "");
  EXPECT_EQ(nbc_rank_problem(p, 4), "--pencil 2x4 needs 8 MPI ranks, got 4");
  // Four arrays of the largest grid's biggest pencil: 16^3 on 2x4 is 16 x 8 x 4 doubles.
  EXPECT_EQ(buffer_bytes_per_rank(p, 8), 4.0 * 8 * 16 * 8 * 4);
  // All-to-all buffers: send and receive, one message per rank.
  EXPECT_EQ(buffer_bytes_per_rank(config({"nbc", "-m", "1024"}), 4), 2.0 * 1024 * 4);
  EXPECT_EQ(buffer_bytes_per_rank(config({"nbc", "-m", "1024", "--op", "ibcast"}), 4), 2.0 * 1024);
  EXPECT_EQ(nbc_rank_problem(config({"nbc", "-m", "1073741824"}), 4),
            "ialltoall of 1073741824 bytes to each of 4 ranks exceeds MPI's count limit 2147483647");
  EXPECT_EQ(nbc_rank_problem(config({"nbc", "-m", "1073741824", "--op", "iallreduce"}), 4), "");
}

TEST(NbcOptions, BadOptionsSayWhatIsWrong) {
  EXPECT_EQ(error_of({"nbc", "--op", "ireduce"}),
            "unknown --op 'ireduce' (ialltoall, ialltoallv, iallreduce, ibcast, all)");
  EXPECT_EQ(error_of({"nbc", "--progress", "4,-1"}), "--progress counts must not be negative, got -1");
  EXPECT_EQ(error_of({"nbc", "--progress", "x"}), "value of --progress is not an integer: 'x'");
  EXPECT_EQ(error_of({"nbc", "--pencil", "2"}), "value of --pencil is not PxQ: '2'");
  EXPECT_EQ(error_of({"nbc", "--pencil", "2x0"}), "--pencil '2x0': every extent must be at least 1");
  EXPECT_EQ(error_of({"nbc", "--pencil", "2x2", "--grid", "8x8"}), "value of --grid is not NXxNYxNZ: '8x8'");
  EXPECT_EQ(error_of({"nbc", "--grid", "8x8x8"}), "--grid applies with --pencil only");
  EXPECT_EQ(error_of({"nbc", "--pencil", "2x2", "--op", "ibcast"}),
            "--op does not apply with --pencil (it measures the x_to_y and y_to_z transposes)");
  EXPECT_EQ(error_of({"nbc", "--pencil", "2x2", "-m", "64"}),
            "--message-size does not apply with --pencil (--grid sets the sizes)");
  EXPECT_EQ(error_of({"nbc", "--pencil", "2x4", "--grid", "8x3x8"}),
            "grid 8x3x8 is too small for 2x4 pencils: every rank needs at least one cell in each");
  EXPECT_EQ(error_of({"pingpong", "--progress", "2"}), "--progress applies to mode nbc only");
  EXPECT_EQ(error_of({"ring", "--progress-thread"}), "--progress-thread applies to mode nbc only");
  EXPECT_EQ(error_of({"coll", "--osu-clock"}), "--osu-clock applies to mode nbc only");
  EXPECT_EQ(error_of({"bw", "--pencil", "2x2"}), "--pencil applies to mode nbc only");
}
