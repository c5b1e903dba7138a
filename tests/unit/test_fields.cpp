#include <gtest/gtest.h>

#include <cmath>

#include "grid/fields.hpp"
#include "grid/planes.hpp"
#include "reference_shift.hpp"

using namespace checkmpi;

namespace {
// Periodic exchange of a single rank with itself: what MPI does when a
// direction has one rank, done here by hand.
template <class Real>
void self_exchange(Fields<Real>& fs) {
  const Grid& g = fs.grid;
  std::vector<Real> buf(3 * std::max({plane_count(g, 0), plane_count(g, 1), plane_count(g, 2)}));
  for (int dir = 0; dir < 3; ++dir)
    for (int sign : {Up, Down})
      for (int f = 0; f < 3; ++f) {
        pack_plane(fs.data(f), plane(g, dir, send_index(g, dir, sign)), buf.data());
        unpack_plane(buf.data(), plane(g, dir, recv_index(g, dir, sign)), fs.data(f));
      }
}

template <class Real>
void run_steps(Fields<Real>& fs, long long steps, bool reverse) {
  for (long long t = 0; t < steps; ++t) {
    self_exchange(fs);
    reference_shift(fs.grid, fs.pointers(), reverse);
  }
}
}  // namespace

TEST(Fields, InitialProfileIsCheckMpisSine) {
  auto p = initial_profile<float>(8);
  ASSERT_EQ(p.size(), 10u);
  EXPECT_EQ(p[1], std::sin(0.0f));
  EXPECT_EQ(p[3], std::sin(2.0f * 3.14159265358979f * 0.25f));
  EXPECT_EQ(p[0], std::sin(2.0f * 3.14159265358979f * (-0.125f)));
}

TEST(Fields, UpstreamWrapsInBothDirections) {
  EXPECT_EQ(upstream(1, 1, 4, false), 4);
  EXPECT_EQ(upstream(3, 1, 4, false), 2);
  EXPECT_EQ(upstream(4, 1, 4, true), 1);
  EXPECT_EQ(upstream(2, 9, 4, false), 1);
  EXPECT_EQ(upstream(2, 100003, 4, true), 1);
}

TEST(Fields, PlanesCoverTheRightCells) {
  Grid g{3, 4, 5};
  Plane x = plane(g, 0, 3);
  EXPECT_EQ(x.count(), 6u * 7u);
  EXPECT_EQ(x.offset, 3u);
  EXPECT_EQ(x.col_stride, 5u);
  Plane z = plane(g, 2, 6);
  EXPECT_EQ(z.offset, g.index(0, 0, 6));
  EXPECT_EQ(z.count(), 5u * 6u);
  Plane y = plane(g, 1, 1);
  EXPECT_EQ(y.offset, g.index(0, 1, 0));
  EXPECT_EQ(y.row_stride, 5u * 6u);
}

class ShiftTest : public ::testing::TestWithParam<std::tuple<bool, int>> {};

TEST_P(ShiftTest, SelfExchangedShiftValidatesExactly) {
  const bool reverse = std::get<0>(GetParam());
  const int steps = std::get<1>(GetParam());
  Grid g{5, 3, 4};
  InitialProfiles<float> p(g);
  Fields<float> fs(g);
  initialise(fs, p);
  run_steps(fs, steps, reverse);
  Mismatch m = validate(fs, p, steps, reverse);
  EXPECT_EQ(m.count, 0) << m.describe();
  // The same fields are wrong for any other step count.
  EXPECT_GT(validate(fs, p, steps + 1, reverse).count, 0);
}

INSTANTIATE_TEST_SUITE_P(BothWays, ShiftTest,
                         ::testing::Combine(::testing::Bool(), ::testing::Values(1, 4, 7, 60)));

TEST(Fields, ValidatorReportsTheFirstWrongCell) {
  Grid g{4, 4, 4};
  InitialProfiles<double> p(g);
  Fields<double> fs(g);
  initialise(fs, p);
  run_steps(fs, 3, false);
  fs.f[1][g.index(2, 3, 4)] += 1e-12;
  fs.f[2][g.index(4, 4, 4)] = -0.0;
  Mismatch m = validate(fs, p, 3, false);
  EXPECT_EQ(m.count, 2);
  EXPECT_EQ(m.field, 2);
  EXPECT_EQ(m.i, 2);
  EXPECT_EQ(m.j, 3);
  EXPECT_EQ(m.k, 4);
  EXPECT_EQ(m.actual, m.expected + 1e-12);
}

TEST(Fields, SignOfZeroCounts) {
  // 0.0 and -0.0 compare equal as numbers but are different results.
  EXPECT_FALSE(same_bits(0.0f, -0.0f));
  EXPECT_TRUE(same_bits(1.5, 1.5));
}
