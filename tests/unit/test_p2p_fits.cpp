// Model fits on synthetic data with known parameters.
#include <gtest/gtest.h>

#include <cmath>

#include "p2p/fits.hpp"

using namespace checkmpi::p2p;

namespace {

std::vector<double> powers_of_two(double from, double to) {
  std::vector<double> s;
  for (double x = from; x <= to; x *= 2) s.push_back(x);
  return s;
}

// Deterministic +-2% multiplicative noise.
double noisy(double v, size_t i) { return v * (1.0 + 0.02 * std::sin(double(i) * 2.3)); }

}  // namespace

TEST(FitLine, ExactLine) {
  const std::vector<double> x{1, 2, 3, 4}, y{5, 8, 11, 14}, w(4, 1.0);
  const LineFit f = fit_line(x, y, w, false);
  ASSERT_TRUE(f.ok);
  EXPECT_NEAR(f.intercept, 2.0, 1e-12);
  EXPECT_NEAR(f.slope, 3.0, 1e-12);
  EXPECT_NEAR(f.r2, 1.0, 1e-12);
  EXPECT_NEAR(f.sse, 0.0, 1e-20);
}

TEST(FitLine, NonNegativeInterceptFallsBackToTheOrigin) {
  const std::vector<double> x{1, 2, 3}, y{1, 3, 5}, w(3, 1.0);  // y = -1 + 2x
  EXPECT_NEAR(fit_line(x, y, w, false).intercept, -1.0, 1e-12);
  const LineFit f = fit_line(x, y, w, true);
  EXPECT_EQ(f.intercept, 0.0);
  EXPECT_NEAR(f.slope, (1 * 1 + 2 * 3 + 3 * 5) / 14.0, 1e-12);  // sum xy / sum x^2
}

TEST(FitLine, SubrangeAndDegenerate) {
  const std::vector<double> x{1, 2, 3, 10}, y{2, 4, 6, 0}, w(4, 1.0);
  const LineFit f = fit_line(x, y, w, false, 0, 3);
  EXPECT_NEAR(f.slope, 2.0, 1e-12);
  EXPECT_FALSE(fit_line(x, y, w, false, 1, 2).ok);  // one point
}

TEST(Hockney, OneRegimeRecovered) {
  const auto s = powers_of_two(1, 1 << 20);
  std::vector<double> t;
  for (double x : s) t.push_back(1e-6 + x / 5e9);
  const HockneyFit f = fit_hockney(s, t);
  ASSERT_EQ(f.segments.size(), 1u);
  EXPECT_TRUE(f.breakpoints.empty());
  EXPECT_NEAR(f.segments[0].alpha, 1e-6, 1e-12);
  EXPECT_NEAR(f.segments[0].beta, 5e9, 5e9 * 1e-6);
  EXPECT_EQ(f.segments[0].min_size, 1);
  EXPECT_EQ(f.segments[0].max_size, 1 << 20);
  EXPECT_NEAR(f.segments[0].r2, 1.0, 1e-9);
}

TEST(Hockney, EagerToRendezvousBreakpointRecovered) {
  // Eager up to 4 KiB, rendezvous from 8 KiB: a jump in alpha, a change in beta.
  const auto s = powers_of_two(1, 1 << 22);
  std::vector<double> t;
  for (double x : s) t.push_back(x <= 4096 ? 0.5e-6 + x / 2e9 : 3e-6 + x / 8e9);
  const HockneyFit f = fit_hockney(s, t);
  ASSERT_EQ(f.segments.size(), 2u);
  ASSERT_EQ(f.breakpoints, std::vector<double>{8192});
  EXPECT_NEAR(f.segments[0].alpha, 0.5e-6, 1e-12);
  EXPECT_NEAR(f.segments[0].beta, 2e9, 2e9 * 1e-6);
  EXPECT_EQ(f.segments[0].max_size, 4096);
  EXPECT_EQ(f.segments[1].min_size, 8192);
  EXPECT_NEAR(f.segments[1].alpha, 3e-6, 1e-11);
  EXPECT_NEAR(f.segments[1].beta, 8e9, 8e9 * 1e-6);
}

TEST(Hockney, BreakpointSurvivesNoise) {
  const auto s = powers_of_two(1, 1 << 22);
  std::vector<double> t;
  for (size_t i = 0; i < s.size(); ++i) t.push_back(noisy(s[i] <= 2048 ? 1e-6 + s[i] / 1e9 : 10e-6 + s[i] / 1e10, i));
  const HockneyFit f = fit_hockney(s, t);
  ASSERT_EQ(f.breakpoints, std::vector<double>{4096});
  EXPECT_NEAR(f.segments[0].alpha, 1e-6, 0.1e-6);
  EXPECT_NEAR(f.segments[1].beta, 1e10, 0.1e10);
  for (const auto& seg : f.segments) {
    EXPECT_GE(seg.alpha, 0.0);
    EXPECT_GT(seg.beta, 0.0);
    EXPECT_GT(seg.r2, 0.9);
  }
}

TEST(Hockney, ThreeRegimes) {
  const auto s = powers_of_two(1, 1 << 22);
  std::vector<double> t;
  for (double x : s)
    t.push_back(x < 1024 ? 0.2e-6 + x / 4e9 : x < 65536 ? 2e-6 + x / 3e9 : 20e-6 + x / 6e9);
  const HockneyFit f = fit_hockney(s, t);
  EXPECT_EQ(f.breakpoints, (std::vector<double>{1024, 65536}));
}

TEST(Hockney, AlphaNeverNegativeBetaAlwaysPositive) {
  const auto s = powers_of_two(1024, 1 << 22);
  std::vector<double> t;
  for (double x : s) t.push_back(x / 1e9 - 0.2e-6);  // extrapolates below zero
  const HockneyFit f = fit_hockney(s, t);
  ASSERT_FALSE(f.segments.empty());
  for (const auto& seg : f.segments) {
    EXPECT_GE(seg.alpha, 0.0);
    EXPECT_GT(seg.beta, 0.0);
  }
}

TEST(Hockney, ZeroAlphaIsNotAPhysicalLatency) {
  const auto s = powers_of_two(1024, 1 << 22);
  std::vector<double> t;
  for (double x : s) t.push_back(x / 1e9 - 0.2e-6);  // extrapolates below zero: alpha stops at 0
  const HockneyFit f = fit_hockney(s, t, 1);
  ASSERT_EQ(f.segments.size(), 1u);
  EXPECT_EQ(f.segments[0].alpha, 0.0);
  const auto wrong = unphysical(f.segments[0]);
  ASSERT_EQ(wrong.size(), 1u);
  EXPECT_EQ(wrong[0].parameter, "alpha");
  EXPECT_EQ(wrong[0].reason, "alpha = 0.000 us is not a latency: the times of 1024-4194304 B extrapolate to zero or "
                             "less at 0 bytes, where the fit stops at its bound alpha >= 0");
  EXPECT_TRUE(unphysical(HockneySegment{1, 8, 1e-6, 1e9, 1}).empty());
}

TEST(Hockney, FlatTimesGiveInfiniteBeta) {
  const auto s = powers_of_two(1, 64);
  const std::vector<double> t(s.size(), 1e-6);
  const HockneyFit f = fit_hockney(s, t);
  ASSERT_EQ(f.segments.size(), 1u);
  EXPECT_TRUE(std::isinf(f.segments[0].beta));
  EXPECT_NEAR(f.segments[0].alpha, 1e-6, 1e-15);
}

TEST(Hockney, TooFewSizes) {
  EXPECT_TRUE(fit_hockney({8}, {1e-6}).segments.empty());
  EXPECT_EQ(fit_hockney({8, 16}, {1e-6, 2e-6}).segments.size(), 1u);
}

namespace {

// PRTT values of an ideal LogGP network.
LogGPPoint ideal_point(double s, int n, double L, double os, double orr, double g, double G) {
  LogGPPoint p;
  p.size = s;
  p.prtt_1_0 = 2 * (L + os + orr + (s - 1) * G);
  p.prtt_n_0 = p.prtt_1_0 + (n - 1) * (g + G * s);
  p.prtt_n_d = p.prtt_1_0 + (n - 1) * (p.prtt_1_0 + os);
  p.o_r = orr;
  return p;
}

}  // namespace

TEST(LogGP, DerivedValues) {
  const LogGPPoint p{64, 2e-6, 11e-6, 40e-6, 0.5e-6};
  const LogGPDerived d = derive_loggp(p, 10);
  EXPECT_DOUBLE_EQ(d.d, 2e-6);
  EXPECT_NEAR(d.g_plus_Gs, 1e-6, 1e-18);
  EXPECT_NEAR(d.o_s, 38e-6 / 9 - 2e-6, 1e-18);
}

TEST(LogGP, IdealNetworkRecovered) {
  const int n = 10;
  const double L = 1e-6, os = 0.3e-6, orr = 0.4e-6, g = 0.5e-6, G = 0.1e-9;
  std::vector<LogGPPoint> pts;
  for (double s : powers_of_two(1, 1 << 20)) pts.push_back(ideal_point(s, n, L, os, orr, g, G));
  const LogGPFit f = fit_loggp(pts, n);
  EXPECT_EQ(f.n, n);
  EXPECT_NEAR(f.g, g, 1e-15);
  EXPECT_NEAR(f.G, G, 1e-18);
  EXPECT_NEAR(f.o_s, os, 1e-15);
  EXPECT_NEAR(f.o_r, orr, 1e-15);
  EXPECT_NEAR(f.L, L, 1e-15);
  EXPECT_NEAR(f.r2, 1.0, 1e-9);
  ASSERT_EQ(f.residuals.size(), pts.size());
  for (double r : f.residuals) EXPECT_NEAR(r, 0.0, 1e-15);
  EXPECT_TRUE(f.warnings.empty());
}

TEST(LogGP, ParametersOutsideTheirPhysicalRangeAreNamed) {
  const int n = 10;
  std::vector<LogGPPoint> pts;
  for (double s : powers_of_two(1, 1 << 20)) pts.push_back(ideal_point(s, n, 1e-6, 0.3e-6, 0.4e-6, 0.5e-6, 0.1e-9));
  EXPECT_TRUE(unphysical(fit_loggp(pts, n), pts).empty());  // the ideal network's
  // The smallest size's round trip shorter than its overheads: a negative L, as measured on shared memory.
  pts.front().prtt_1_0 = 0.4e-6;
  pts.front().prtt_n_0 = pts.front().prtt_1_0 + (n - 1) * 0.5e-6;
  pts.front().prtt_n_d = pts.front().prtt_1_0 + (n - 1) * (pts.front().prtt_1_0 + 0.3e-6);
  const LogGPFit f = fit_loggp(pts, n);
  EXPECT_NEAR(f.L, 0.2e-6 - 0.7e-6, 1e-12);
  const auto wrong = unphysical(f, pts);
  ASSERT_EQ(wrong.size(), 1u);
  EXPECT_EQ(wrong[0].parameter, "L");
  EXPECT_EQ(wrong[0].reason, "L = -0.500 us is not a latency: at 1 B half the round trip (0.200 us) is no longer "
                             "than o_s + o_r + (s-1)G (0.700 us), so the overheads measured there are too large");
  // Not fitted (no points): NaN everywhere, nothing to call wrong.
  EXPECT_TRUE(unphysical(fit_loggp({}, n), {}).empty());
}

TEST(LogGP, WarnsWhereTheDelayIsShorterThanTheGap) {
  const int n = 10;
  std::vector<LogGPPoint> pts;
  for (double s : powers_of_two(1, 1024)) pts.push_back(ideal_point(s, n, 1e-6, 0.3e-6, 0.4e-6, 10e-6, 0.1e-9));
  const LogGPFit f = fit_loggp(pts, n);  // g = 10 us > d = 3.4 us at every size
  ASSERT_EQ(f.warnings.size(), pts.size());
  EXPECT_NE(f.warnings[0].find("size 1:"), std::string::npos);
  EXPECT_NE(f.warnings[0].find("o_s is not measured"), std::string::npos);
}

TEST(DatatypeOverhead, PerByteAndPerMessageRecovered) {
  std::vector<double> bytes, overhead, reference;
  for (double b : powers_of_two(8, 1 << 20)) {
    bytes.push_back(b);
    overhead.push_back(0.2e-6 + 0.5e-9 * b);
    reference.push_back(1e-6 + b / 5e9);
  }
  const OverheadFit f = fit_overhead(bytes, overhead, reference);
  EXPECT_NEAR(f.O, 0.5e-9, 1e-18);
  EXPECT_NEAR(f.o, 0.2e-6, 1e-15);
  EXPECT_NEAR(f.r2, 1.0, 1e-9);
  EXPECT_EQ(f.points, int(bytes.size()));
}
