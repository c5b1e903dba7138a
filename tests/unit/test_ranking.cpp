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
// `launch`: sd of a factor common to all of a repeat's rounds (a launch's).
Nested synthetic(std::mt19937_64& gen, double median, int repeats, int rounds, int steps, double between,
                 double within, double launch = 0) {
  std::normal_distribution<double> round_factor(1.0, between), step_factor(1.0, within), launch_factor(1.0, launch);
  Nested s(static_cast<size_t>(repeats));
  for (auto& repeat : s) {
    const double factor = launch > 0 ? launch_factor(gen) : 1.0;
    for (int r = 0; r < rounds; ++r) {
      const double centre = median * factor * round_factor(gen);
      std::vector<double> round;
      for (int k = 0; k < steps; ++k) round.push_back(centre * step_factor(gen));
      repeat.push_back(round);
    }
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

// Launches (separate processes) whose own factor dominates: three or five
// of them, the percentile bootstrap alone would cover about 75% or 90%;
// with Student's t over the launches' medians, 90-99%. Without a launch
// factor the t interval widens the CI, the price of three launches, but not
// uselessly: median width below 4% (3 x 10 rounds, rounds 2% apart).
TEST(Ranking, LaunchesCoverTheTrueMedian) {
  for (const int launches : {3, 5}) {
    std::mt19937_64 gen(777);
    const int datasets = 300;
    int covered = 0, covered_bootstrap_only = 0;
    for (int d = 0; d < datasets; ++d) {
      const Nested s = synthetic(gen, 1e-3, launches, 10, 30, 0.01, 0.02, 0.05);
      const Estimate e = bootstrap_median(s, std::uint64_t(d), 400, true);
      const Estimate b = bootstrap_median(s, std::uint64_t(d), 400, false);
      EXPECT_LE(e.ci_low, e.median);
      EXPECT_GE(e.ci_high, e.median);
      covered += e.ci_low <= 1e-3 && 1e-3 <= e.ci_high;
      covered_bootstrap_only += b.ci_low <= 1e-3 && 1e-3 <= b.ci_high;
    }
    const double coverage = double(covered) / datasets;
    std::cout << "coverage " << coverage << " (" << launches << " launches; the bootstrap alone "
              << double(covered_bootstrap_only) / datasets << ")\n";
    EXPECT_GE(coverage, 0.90) << launches;
    EXPECT_LE(coverage, 0.995) << launches;
  }
  std::mt19937_64 gen(99);
  std::vector<double> widths;
  for (int d = 0; d < 51; ++d) {
    const Estimate e = bootstrap_median(synthetic(gen, 1e-3, 3, 10, 30, 0.02, 0.02), std::uint64_t(d), 400, true);
    widths.push_back((e.ci_high - e.ci_low) / e.median);
  }
  std::nth_element(widths.begin(), widths.begin() + 25, widths.end());
  std::cout << "median width " << widths[25] << " (3 launches, no launch factor)\n";
  EXPECT_LT(widths[25], 0.04);
}

// Paired by launch: a strategy 10% slower in every launch is separated even
// when the launches differ by far more than 10% (each moves both alike);
// one slower in only some launches (a per-process mode) is not.
TEST(Ranking, LaunchRatiosArePaired) {
  std::mt19937_64 gen(5);
  Nested fast, steady, moody;
  const double launch[] = {1.0, 1.4, 0.8};
  for (int l = 0; l < 3; ++l) {
    for (auto* s : {&fast, &steady, &moody}) s->emplace_back();
    std::normal_distribution<double> noise(1.0, 0.02);
    for (int r = 0; r < 10; ++r) {
      fast.back().emplace_back(), steady.back().emplace_back(), moody.back().emplace_back();
      for (int k = 0; k < 30; ++k) {
        fast.back().back().push_back(1e-3 * launch[l] * noise(gen));
        steady.back().back().push_back(1.1e-3 * launch[l] * noise(gen));
        moody.back().back().push_back((l == 1 ? 1.6e-3 : 0.98e-3) * launch[l] * noise(gen));
      }
    }
  }
  const Ranking rk = rank_strategies({fast, steady}, {true, true}, 0.02, 3, 400, true);
  EXPECT_EQ(rk.fastest, 0);
  EXPECT_FALSE(rk.vs[1].tied);
  EXPECT_GT(rk.vs[1].ci_low, 1.05);
  EXPECT_LT(rk.vs[1].ci_high, 1.15);
  // 2% faster in two launches, 60% slower in one: the fastest by its median,
  // but not separated from the steady one.
  const Ranking mixed = rank_strategies({fast, moody}, {true, true}, 0.02, 3, 400, true);
  EXPECT_EQ(mixed.fastest, 1);
  EXPECT_TRUE(mixed.vs[0].tied);
  EXPECT_EQ(mixed.group, (std::vector<int>{1, 0}));
  // One launch would have separated them (the moody one slower by 60%).
  const Ranking one = rank_strategies({Nested{fast[1]}, Nested{moody[1]}}, {true, true}, 0.02, 3, 400, true);
  EXPECT_EQ(one.group, std::vector<int>{0});
  // One launch 8 times slower than two others: a wide interval, never below zero.
  Nested bimodal = fast;
  for (auto& round : bimodal[0])
    for (double& t : round) t *= 8;
  const Estimate e = bootstrap_median(bimodal, 1, 400, true);
  EXPECT_GT(e.ci_low, 0.0);
  EXPECT_LT(e.ci_low, 0.8e-3);
  EXPECT_GT(e.ci_high, 8e-3);
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
