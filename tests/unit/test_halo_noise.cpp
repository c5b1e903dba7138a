// checkmpi-halo's verdict on a strategy's runs, on synthetic samples (one
// rank, MPI_COMM_SELF): pooled statistics, repeat spread and the noise flags.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>

#include "halo/result.hpp"

using namespace checkmpi;

namespace {

// A run of `steps` steps whose per-step times are `fast` except every
// `every`-th, which takes `slow`.
StrategyRun run_of(int steps, double fast, double slow, int every) {
  StrategyRun r;
  r.steps = steps;
  r.round_samples.resize(2);  // two rounds
  for (int t = 1; t <= steps; ++t) {
    const double v = t % every == 0 ? slow : fast;
    r.round_samples[2 * t > steps].push_back(v);
    r.step_sum += v;
  }
  r.local.loop = r.step_sum;
  r.local.dir = {0.5 * r.step_sum, 0.25 * r.step_sum, 0.25 * r.step_sum};
  r.mpi_buffers = "host";
  for (std::size_t& b : r.traits.halo_bytes) b = 2 * 3 * 10 * 10 * 4;  // planes of 10x10 cells, 3 fields, 2 signs
  return r;
}

StrategyResult summarised(const std::vector<StrategyRun>& runs) {
  StrategyResult r;
  for (const auto& run : runs) add_run(r, run, MPI_COMM_SELF);
  summarise(r, MPI_COMM_SELF);
  return r;
}

}  // namespace

TEST(HaloNoise, QuietRunsAreNotFlagged) {
  const StrategyResult r = summarised({run_of(100, 1e-5, 1.2e-5, 10), run_of(100, 1.01e-5, 1.2e-5, 10)});
  EXPECT_EQ(r.runs, 2);
  EXPECT_EQ(r.steps, 200);
  EXPECT_EQ(r.step_time.n, 200);
  EXPECT_NEAR(r.step_time.median, 1.01e-5, 1e-12);  // 90 + 90 fast steps, the slower run's in the middle
  EXPECT_NEAR(r.step_time.p95, 1.2e-5, 1e-12);
  EXPECT_NEAR(r.repeat_spread, 0.01e-5 / 1.005e-5, 1e-9);
  EXPECT_TRUE(r.noise.empty());
  // Bandwidth per direction: the payload of all steps over the direction's time.
  const double x_bytes = 2.0 * 3.0 * 10 * 10 * 4;  // planes of 10x10 cells, two signs, three fields
  EXPECT_NEAR(r.bandwidth[0].min, x_bytes * 200 / (0.5 * r.local.loop), 1e-3);
}

TEST(HaloNoise, HeavyTailIsFlagged) {
  // One step in ten five times slower: p95 = 5 x median.
  const StrategyResult r = summarised({run_of(200, 1e-5, 5e-5, 10)});
  ASSERT_EQ(r.noise.size(), 1u);
  EXPECT_EQ(r.noise[0], "p95/median 5.00 above the threshold 1.5");
  EXPECT_TRUE(std::isnan(r.repeat_spread));  // one run: no spread
}

TEST(HaloNoise, RareLongStallsAreFlaggedByTheMean) {
  // One step in fifty a hundred times slower (a time slice lost to another
  // process): the p95 does not see it, the mean does.
  const StrategyResult r = summarised({run_of(500, 1e-5, 1e-3, 50)});
  EXPECT_NEAR(r.step_time.p95, 1e-5, 1e-15);
  EXPECT_NEAR(r.step_time.mean, (49 * 1e-5 + 1e-3) / 50, 1e-15);
  ASSERT_EQ(r.noise.size(), 1u);
  EXPECT_EQ(r.noise[0], "mean/median 2.98 above the threshold 1.5");
}

TEST(HaloNoise, RepeatsThatDisagreeAreFlagged) {
  const StrategyResult r = summarised({run_of(50, 1e-5, 1e-5, 10), run_of(50, 1.3e-5, 1.3e-5, 10),
                                       run_of(50, 1.1e-5, 1.1e-5, 10)});
  EXPECT_NEAR(r.repeat_spread, 0.3 / 1.1, 1e-9);
  ASSERT_EQ(r.noise.size(), 1u);
  EXPECT_EQ(r.noise[0], "repeat spread 27.3% above the threshold 10%");
  EXPECT_NEAR(r.step_time.mean, (1e-5 + 1.3e-5 + 1.1e-5) / 3, 1e-12);
}

TEST(HaloNoise, TheCrossedThresholdIsReadableFromTheWarning) {
  // As many decimals as it takes for the value not to read as the threshold itself.
  EXPECT_EQ(threshold_crossed("p95/median", 1.5012, 1.5, true), "p95/median 1.501 above the threshold 1.5");
  EXPECT_EQ(threshold_crossed("p95/median", 1.62, 1.5, true), "p95/median 1.62 above the threshold 1.5");
  EXPECT_EQ(threshold_crossed("R^2", 0.89996, 0.9, false, 4), "R^2 0.89996 below the threshold 0.9");
  EXPECT_EQ(threshold_crossed("repeat spread", 0.1004, 0.1, true, 1, 100, "%"),
            "repeat spread 10.04% above the threshold 10%");
  EXPECT_EQ(threshold_crossed("mean/median", 1.5 + 1e-9, 1.5, true), "mean/median 1.500000 above the threshold 1.5");
}
