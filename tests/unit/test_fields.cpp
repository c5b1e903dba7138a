#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "grid/fields.hpp"
#include "grid/planes.hpp"
#include "reference_shift.hpp"

using namespace checkmpi;

namespace {
// Periodic exchange of a single rank with itself: what MPI does when a
// direction has one rank, done here by hand, direction by direction with
// whole faces (which relays edges and corners).
template <class Real>
void self_exchange(Fields<Real>& fs) {
  const Grid& g = fs.grid;
  std::vector<Real> buf(std::max({plane_count(g, 0), plane_count(g, 1), plane_count(g, 2)}));
  for (int dir = 0; dir < 3; ++dir)
    for (int sign : {Up, Down})
      for (int f = 0; f < fs.count(); ++f) {
        pack_plane(fs.data(f), face(g, dir, sign, false), buf.data());
        unpack_plane(buf.data(), face(g, dir, sign, true), fs.data(f));
      }
}

template <class Real>
void run_steps(Fields<Real>& fs, long long steps) {
  for (long long t = 0; t < steps; ++t) {
    self_exchange(fs);
    reference_shift(fs.grid, fs.pointers(), fs.motion);
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
  EXPECT_EQ(upstream(1, 1, 4, 1), 4);
  EXPECT_EQ(upstream(3, 1, 4, 1), 2);
  EXPECT_EQ(upstream(4, 1, 4, -1), 1);
  EXPECT_EQ(upstream(2, 9, 4, 1), 1);
  EXPECT_EQ(upstream(2, 100003, 4, -1), 1);
  EXPECT_EQ(upstream(1, 1, 5, 3), 3);   // three cells a step
  EXPECT_EQ(upstream(1, 2, 5, -2), 5);  // 1 + 4 wraps to 5
  EXPECT_EQ(upstream(1, -1, 4, 1), 2);  // a step before the start: the cell downstream
  EXPECT_EQ(upstream(4, -3, 4, 1), 3);
  EXPECT_EQ(upstream(2, -5, 4, -1), 1);
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

// A halo two cells wide: the whole faces are two layers of planes, the
// direct ones only the interior beside the face; edges and corners are h x h
// columns and h x h x h cubes.
TEST(Fields, RegionsOfAWideHalo) {
  const Grid g{6, 5, 4, 2};
  EXPECT_EQ(g.index(-1, -1, -1), 0u);
  EXPECT_EQ(g.cells(), 10u * 9u * 8u);
  const Plane xs = face(g, 0, Up, false), xr = face(g, 0, Up, true);
  EXPECT_EQ(xs.layers, 2u);
  EXPECT_EQ(xs.count(), 2u * 9u * 8u);
  EXPECT_EQ(xs.offset, g.index(5, -1, -1));  // interior layers 5 and 6
  EXPECT_EQ(xr.offset, g.index(-1, -1, -1));  // into the halo below
  EXPECT_EQ(plane_count(g, 2), 2u * 10u * 9u);
  const Box direct = region_box(g, {0, 1, 0}, false, false);
  EXPECT_EQ(direct.lo, (std::array<int, 3>{1, 4, 1}));
  EXPECT_EQ(direct.hi, (std::array<int, 3>{6, 5, 4}));
  const Box edge = region_box(g, {1, -1, 0}, true, false);  // from the neighbour at (-1, +1, 0)
  EXPECT_EQ(edge.lo, (std::array<int, 3>{-1, 6, 1}));
  EXPECT_EQ(edge.hi, (std::array<int, 3>{0, 7, 4}));
  EXPECT_EQ(region(g, region_box(g, {-1, -1, -1}, false, false), 2).count(), 8u);
}

TEST(Stencil, NeighboursAndVelocities) {
  EXPECT_EQ(neighbour_offsets(6).size(), 6u);
  EXPECT_EQ(neighbour_offsets(18).size(), 18u);
  EXPECT_EQ(neighbour_offsets(26).size(), 26u);
  // Each offset once, each followed by its opposite; the faces first, as the channels number them.
  for (int n : {6, 18, 26}) {
    const auto& o = neighbour_offsets(n);
    for (std::size_t i = 0; i < o.size(); i += 2) EXPECT_EQ(o[i + 1], opposite(o[i]));
    for (std::size_t i = 0; i < o.size(); ++i)
      for (std::size_t j = i + 1; j < o.size(); ++j) EXPECT_NE(o[i], o[j]);
  }
  EXPECT_EQ(neighbour_offsets(26)[face_index(1, true)], (Offset{0, -1, 0}));
  // CheckMPI's fields; a lattice's first velocities are diagonal.
  EXPECT_EQ(lattice_velocity(6, 0), (Offset{1, 0, 0}));
  EXPECT_EQ(lattice_velocity(6, 5), (Offset{0, 0, 1}));
  EXPECT_EQ(lattice_velocity(18, 0), (Offset{1, 1, 0}));
  EXPECT_EQ(lattice_velocity(18, 18), (Offset{0, 0, 0}));
  EXPECT_EQ(lattice_velocity(18, 19), (Offset{1, 1, 0}));
  EXPECT_EQ(lattice_velocity(26, 0), (Offset{1, 1, 1}));
  // D3Q19 and D3Q27: every velocity once.
  for (int n : {18, 26}) {
    std::set<Offset> seen;
    for (int f = 0; f < n + 1; ++f) seen.insert(lattice_velocity(n, f));
    EXPECT_EQ(seen.size(), std::size_t(n + 1));
  }
  const Motion m(Stencil{2, 4, 26}, true);
  EXPECT_EQ(m.v[0], (Offset{-2, -2, -2}));
  EXPECT_EQ(m.axis(0), -1);
  const Motion six(Stencil{3, 3, 6}, true);
  EXPECT_EQ(six.axis(1), 1);
  EXPECT_EQ(six.step(1), -3);
}

// Any stencil, self-exchanged by whole faces and moved by the reference loop,
// validates exactly, and only at its own step count.
class ShiftTest : public ::testing::TestWithParam<std::tuple<bool, int, Stencil>> {};

TEST_P(ShiftTest, SelfExchangedShiftValidatesExactly) {
  const bool reverse = std::get<0>(GetParam());
  const int steps = std::get<1>(GetParam());
  const Stencil st = std::get<2>(GetParam());
  Grid g{5, 3, 4, st.width};
  InitialProfiles<float> p(g);
  Fields<float> fs(g, Motion(st, reverse));
  initialise(fs, p);
  run_steps(fs, steps);
  Mismatch m = validate(fs, p, steps);
  EXPECT_EQ(m.count, 0) << m.describe();
  // The same fields are wrong for any other step count.
  EXPECT_GT(validate(fs, p, steps + 1).count, 0);
  // and the exact state is what initialise gives for that step.
  Fields<float> direct(g, fs.motion);
  initialise(direct, p, steps);
  EXPECT_EQ(validate(direct, p, steps).count, 0);
  // A state before the start (a round's warm-up from step 0) reaches the start in as many steps.
  Fields<float> early(g, fs.motion);
  initialise(early, p, -steps);
  run_steps(early, steps);
  EXPECT_EQ(validate(early, p, 0).count, 0);
}

INSTANTIATE_TEST_SUITE_P(BothWays, ShiftTest,
                         ::testing::Combine(::testing::Bool(), ::testing::Values(1, 4, 7, 60),
                                            ::testing::Values(Stencil{}, Stencil{2, 3, 6}, Stencil{3, 1, 6},
                                                              Stencil{1, 19, 18}, Stencil{2, 27, 26})));

TEST(Fields, ValidatorReportsTheFirstWrongCell) {
  Grid g{4, 4, 4};
  InitialProfiles<double> p(g);
  Fields<double> fs(g);
  initialise(fs, p);
  run_steps(fs, 3);
  fs.f[1][g.index(2, 3, 4)] += 1e-12;
  fs.f[2][g.index(4, 4, 4)] = -0.0;
  Mismatch m = validate(fs, p, 3);
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

// The start, cell by cell, against the definition: a field is the sum of the
// profiles of the directions it moves along, x then y then z, at the cell's
// periodic image (halos included); one at rest is x's profile.
TEST(Fields, InitialStateIsTheSumOfTheProfilesAtEachImage) {
  for (const Stencil st : {Stencil{}, Stencil{2, 27, 26}}) {
    Grid g{5, 3, 4, st.width};
    InitialProfiles<float> p(g);
    Fields<float> fs(g, Motion(st, false));
    initialise(fs, p);
    const int n[3] = {g.l, g.m, g.n};
    for (int f = 0; f < fs.count(); ++f) {
      const Offset& v = fs.motion.v[std::size_t(f)];
      for (int k = 1 - g.h; k <= g.n + g.h; ++k)
        for (int j = 1 - g.h; j <= g.m + g.h; ++j)
          for (int i = 1 - g.h; i <= g.l + g.h; ++i) {
            const int at[3] = {image(i, n[0]), image(j, n[1]), image(k, n[2])};
            float want = 0;
            bool any = false;
            for (std::size_t a = 0; a < 3; ++a)
              if (v[a] != 0) {
                want = any ? want + p.along[a][std::size_t(at[a])] : p.along[a][std::size_t(at[a])];
                any = true;
              }
            if (!any) want = p.along[0][std::size_t(at[0])];
            ASSERT_TRUE(same_bits(fs.f[std::size_t(f)][g.index(i, j, k)], want))
                << "field " << f + 1 << " (" << i << "," << j << "," << k << ")";
          }
    }
  }
}
