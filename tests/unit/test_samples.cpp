// Per-step samples: the reservoir's bound and uniformity, order statistics,
// the confidence interval of the median against exact binomial values.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "core/samples.hpp"

using namespace checkmpi;

TEST(Reservoir, KeepsEverythingUpToItsCapacity) {
  Reservoir r(8);
  for (int i = 0; i < 5; ++i) r.add(i);
  EXPECT_EQ(r.values(), (std::vector<double>{0, 1, 2, 3, 4}));
  EXPECT_EQ(r.seen(), 5);
}

TEST(Reservoir, BoundedUniformAndTheSameOnEveryRank) {
  // 100000 values into 1000 slots: exactly 1000 kept, spread over the whole
  // stream (each tenth of it holds about a tenth), the same choice every time.
  Reservoir a(1000), b(1000);
  for (int i = 0; i < 100000; ++i) a.add(i), b.add(i);
  ASSERT_EQ(a.values().size(), 1000u);
  EXPECT_EQ(a.values().capacity(), 1000u);  // never grew past what was reserved
  EXPECT_EQ(a.values(), b.values());
  EXPECT_EQ(a.seen(), 100000);
  std::vector<int> deciles(10, 0);
  for (double v : a.values()) ++deciles[size_t(v / 10000)];
  for (int count : deciles) EXPECT_NEAR(count, 100, 40);
  const double mean = std::accumulate(a.values().begin(), a.values().end(), 0.0) / 1000;
  EXPECT_NEAR(mean, 50000, 3000);
}

TEST(Distribution, OrderStatistics) {
  std::vector<double> v;
  for (int i = 100; i >= 1; --i) v.push_back(i);  // 1..100, unsorted
  const Distribution d = distribution(v);
  EXPECT_EQ(d.n, 100);
  EXPECT_EQ(d.min, 1);
  EXPECT_EQ(d.max, 100);
  EXPECT_DOUBLE_EQ(d.median, 50.5);
  EXPECT_DOUBLE_EQ(d.p5, 5.95);   // numpy.percentile(range(1, 101), 5)
  EXPECT_DOUBLE_EQ(d.p95, 95.05);
  EXPECT_DOUBLE_EQ(d.mean, 50.5);
  // n = 100: j = 40 (P(B <= 39) = 0.0176, P(B <= 40) = 0.0284), so [x_40, x_61].
  EXPECT_EQ(d.ci_low, 40);
  EXPECT_EQ(d.ci_high, 61);
  EXPECT_DOUBLE_EQ(d.tail_ratio(), 95.05 / 50.5);
}

TEST(Distribution, MedianConfidenceRanksAgainstExactBinomial) {
  // Exact values: the largest j with P(Binomial(n, 1/2) <= j - 1) <= 0.025.
  EXPECT_EQ(median_ci_rank(5), 0);  // 1/32 > 0.025: no interval
  EXPECT_EQ(median_ci_rank(6), 1);  // 1/64
  EXPECT_EQ(median_ci_rank(10), 2);
  EXPECT_EQ(median_ci_rank(20), 6);
  EXPECT_EQ(median_ci_rank(100), 40);
  // Large n: close to the normal approximation n/2 - 1.96 sqrt(n)/2.
  const long long n = 1000000;
  EXPECT_NEAR(double(median_ci_rank(n)), n / 2.0 - 1.96 * std::sqrt(double(n)) / 2.0, 2.0);
}

TEST(Distribution, EmptyAndSmallSamples) {
  const Distribution none = distribution({});
  EXPECT_EQ(none.n, 0);
  EXPECT_TRUE(std::isnan(none.median) && std::isnan(none.ci_low));
  const Distribution five = distribution({5, 4, 3, 2, 1});
  EXPECT_EQ(five.median, 3);
  EXPECT_TRUE(std::isnan(five.ci_low) && std::isnan(five.ci_high));
  EXPECT_EQ(distribution_json(five).dump(0).find("\"median_ci\":null") != std::string::npos, true);
}

TEST(Distribution, RelativeSpreadOfRepeats) {
  EXPECT_TRUE(std::isnan(relative_spread({1.0})));
  EXPECT_DOUBLE_EQ(relative_spread({1.0, 1.1, 0.9}), 0.2);
}
