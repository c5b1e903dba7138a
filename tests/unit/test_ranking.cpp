// The ranking's statistics on synthetic data with known answers: the round
// order, the hierarchical bootstrap's coverage, ties and separations.
#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <cmath>
#include <random>
#include <set>

#include "core/ranking.hpp"

using namespace checkmpi;

namespace {

// `repeats` x `rounds` rounds of `steps` steps: centre `median` times a
// round's factor (normal, sd `between`) times a step's (normal, sd
// `within`). Symmetric factors around 1, so the population median is `median`.
Nested synthetic(std::mt19937_64& gen, double median, int repeats, int rounds, int steps, double between,
                 double within) {
  std::normal_distribution<double> round_factor(1.0, between), step_factor(1.0, within);
  Nested s(static_cast<size_t>(repeats));
  for (auto& repeat : s)
    for (int r = 0; r < rounds; ++r) {
      const double centre = median * round_factor(gen);
      std::vector<double> round;
      for (int k = 0; k < steps; ++k) round.push_back(centre * step_factor(gen));
      repeat.push_back(round);
    }
  return s;
}

}  // namespace

TEST(Ranking, RoundOrderIsAShuffleFixedByTheSeed) {
  const std::vector<int> a = round_order(20, 42, 0, 3);
  std::vector<int> sorted = a;
  std::sort(sorted.begin(), sorted.end());
  for (int i = 0; i < 20; ++i) EXPECT_EQ(sorted[size_t(i)], i);
  EXPECT_EQ(a, round_order(20, 42, 0, 3));
  std::set<std::vector<int>> orders;
  for (int round = 0; round < 10; ++round) orders.insert(round_order(20, 42, 0, round));
  orders.insert(round_order(20, 42, 1, 3));
  orders.insert(round_order(20, 43, 0, 3));
  EXPECT_EQ(orders.size(), 12u);  // every round, repeat and seed its own order
}

// Over many seeded datasets, the 95% interval holds the true median in 90-99%
// of them: between-round variance dominating, and within-round alone.
TEST(Ranking, BootstrapCoversTheTrueMedian) {
  struct Case {
    int repeats, rounds, steps;
    double between, within;
  };
  for (const Case c : {Case{1, 10, 50, 0.05, 0.02}, Case{2, 10, 30, 0.03, 0.03}, Case{1, 20, 100, 0.0, 0.1}}) {
    std::mt19937_64 gen(12345);
    const int datasets = 300;
    int covered = 0;
    for (int d = 0; d < datasets; ++d) {
      const Estimate e = bootstrap_median(synthetic(gen, 1e-3, c.repeats, c.rounds, c.steps, c.between, c.within),
                                          std::uint64_t(d), 400);
      EXPECT_LE(e.ci_low, e.median);
      EXPECT_GE(e.ci_high, e.median);
      covered += e.ci_low <= 1e-3 && 1e-3 <= e.ci_high;
    }
    const double coverage = double(covered) / datasets;
    std::cout << "coverage " << coverage << " (" << c.repeats << " x " << c.rounds << " rounds of " << c.steps
              << " steps, sd between " << c.between << ", within " << c.within << ")\n";
    EXPECT_GE(coverage, 0.90) << c.rounds << " rounds, between " << c.between << ", within " << c.within;
    EXPECT_LE(coverage, 0.99) << c.rounds << " rounds, between " << c.between << ", within " << c.within;
  }
}

TEST(Ranking, SameDistributionsTieAndATenPercentDelayIsSlower) {
  std::mt19937_64 gen(7);
  const std::vector<Nested> s = {synthetic(gen, 1e-3, 1, 10, 50, 0.03, 0.05),
                                 synthetic(gen, 1e-3, 1, 10, 50, 0.03, 0.05),
                                 synthetic(gen, 1.1e-3, 1, 10, 50, 0.03, 0.05)};
  const Ranking rk = rank_strategies(s, {true, true, true}, 0.02, 1);
  ASSERT_EQ(rk.group.size(), 2u);
  EXPECT_EQ(std::set<int>(rk.group.begin(), rk.group.end()), (std::set<int>{0, 1}));
  EXPECT_EQ(rk.fastest, rk.group.front());
  EXPECT_TRUE(rk.vs[0].tied && rk.vs[1].tied);
  const VsFastest& slow = rk.vs[2];
  EXPECT_FALSE(slow.tied);
  EXPECT_GT(slow.ci_low, 1.0);
  EXPECT_NEAR(slow.ratio, 1.1, 0.04);
  EXPECT_LE(slow.ci_low, slow.ratio);
  EXPECT_GE(slow.ci_high, slow.ratio);
}

TEST(Ranking, ADifferenceBelowTheThresholdIsATie) {
  std::mt19937_64 gen(3);
  // 1% slower with little noise: separated by the CI, tied by the 2% threshold.
  const std::vector<Nested> s = {synthetic(gen, 1e-3, 1, 10, 200, 0.001, 0.001),
                                 synthetic(gen, 1.01e-3, 1, 10, 200, 0.001, 0.001)};
  const Ranking two = rank_strategies(s, {true, true}, 0.02, 1);
  EXPECT_GT(two.vs[1].ci_low, 1.0);
  EXPECT_TRUE(two.vs[1].tied);
  const Ranking none = rank_strategies(s, {true, true}, 0.0, 1);
  EXPECT_FALSE(none.vs[1].tied);
  EXPECT_EQ(none.group, std::vector<int>{0});
}

TEST(Ranking, UnrankedStrategiesAreLeftOut) {
  std::mt19937_64 gen(5);
  const std::vector<Nested> s = {synthetic(gen, 2e-3, 1, 5, 20, 0.01, 0.01), synthetic(gen, 1e-3, 1, 5, 20, 0.01, 0.01),
                                 Nested{}};
  const Ranking rk = rank_strategies(s, {true, false, true}, 0.02, 1);
  EXPECT_EQ(rk.fastest, 0);  // the faster one is not ranked (invalid), the empty one has no samples
  EXPECT_EQ(rk.group, std::vector<int>{0});
  EXPECT_TRUE(std::isnan(rk.vs[1].ratio));
  EXPECT_TRUE(std::isnan(rk.vs[2].ratio));
  EXPECT_TRUE(std::isnan(rank_strategies({Nested{}}, {true}, 0.02, 1).estimate[0].median));
}
