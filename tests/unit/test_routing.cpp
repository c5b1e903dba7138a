// The routing check on one rank, its own neighbour in every direction: the
// exchange is done here by hand, right or in the ways a strategy can get it
// wrong, and the check must tell them apart.
#include <gtest/gtest.h>

#include <cmath>

#include "grid/planes.hpp"
#include "grid/routing.hpp"
#include "reference_shift.hpp"

using namespace checkmpi;

namespace {

// One rank, periodic in every direction, block l x m x n.
struct OneRank {
  Decomposition dec;
  OneRank(int l, int m, int n) {
    const int dims[3] = {1, 1, 1}, periods[3] = {1, 1, 1};
    MPI_Cart_create(MPI_COMM_SELF, 3, dims, periods, 0, &dec.comm);
    dec.grid = Grid{l, m, n};
    dec.neighbour = {{{0, 0}, {0, 0}, {0, 0}}};
    dec.around.fill(0);
  }
  ~OneRank() { free_decomposition(dec); }
};

// Halo plane `to` of field f along its own direction takes plane `from`.
template <class Real>
void copy_plane(Fields<Real>& fs, int f, int from, int to) {
  const Grid& g = fs.grid;
  for (int k = 1 - g.h; k <= g.n + g.h; ++k)
    for (int j = 1 - g.h; j <= g.m + g.h; ++j)
      for (int i = 1 - g.h; i <= g.l + g.h; ++i) {
        int src[3] = {i, j, k}, dst[3] = {i, j, k};
        if (src[f] != to) continue;
        src[f] = from;
        fs.f[std::size_t(f)][g.index(dst[0], dst[1], dst[2])] = fs.f[std::size_t(f)][g.index(src[0], src[1], src[2])];
      }
}

enum class Exchange { Right, WrongSign, Stale, Missing };

// kRoutingSteps forward steps with the given exchange.
template <class Real>
RouteMismatch steps(const OneRank& r, Exchange how) {
  Fields<Real> fs(r.dec.grid);
  initialise_routing(fs, r.dec);
  const auto n = r.dec.grid.interior();
  for (int t = 1; t <= kRoutingSteps; ++t) {
    for (int f = 0; f < 3; ++f) {
      if (how == Exchange::Missing || (how == Exchange::Stale && t > 1)) continue;
      copy_plane(fs, f, how == Exchange::WrongSign ? 1 : n[f], 0);  // forward reads halo 0
    }
    reference_shift(fs.grid, fs.pointers(), false);
  }
  return check_routing(fs, r.dec, kRoutingSteps);
}

}  // namespace

TEST(Routing, CodesRoundTripAndAreNormalNumbers) {
  for (std::uint64_t index : {0ULL, 1ULL, 8388607ULL, 8388608ULL, 123456789ULL, 4261412863ULL}) {
    const float f = CellCode<float>::encode(index);
    EXPECT_TRUE(std::isnormal(f)) << index;
    std::uint64_t back = 0;
    ASSERT_TRUE(CellCode<float>::decode(f, back));
    EXPECT_EQ(back, index);
    const double d = CellCode<double>::encode(index * 1000003ULL);
    EXPECT_TRUE(std::isnormal(d));
    ASSERT_TRUE(CellCode<double>::decode(d, back));
    EXPECT_EQ(back, index * 1000003ULL);
  }
  std::uint64_t none = 0;
  EXPECT_FALSE(CellCode<float>::decode(0.0f, none));  // the halos' initial value
  EXPECT_FALSE(CellCode<double>::decode(NAN, none));
}

TEST(Routing, RightExchangePasses) {
  OneRank r(5, 4, 3);
  EXPECT_EQ(steps<float>(r, Exchange::Right).count, 0);
  EXPECT_EQ(steps<double>(r, Exchange::Right).count, 0);
}

TEST(Routing, WrongSignIsCaughtAndNamed) {
  OneRank r(5, 4, 3);
  const RouteMismatch m = steps<float>(r, Exchange::WrongSign);
  EXPECT_GT(m.count, 0);
  EXPECT_EQ(m.field, 1);
  EXPECT_EQ(m.describe(r.dec).rfind("field1(1,1,1) holds the value of global cell (", 0), 0u) << m.describe(r.dec);
  EXPECT_NE(m.describe(r.dec).find("expected global cell (4,1,1) from rank 0"), std::string::npos)
      << m.describe(r.dec);
}

TEST(Routing, StaleHaloIsCaught) {
  OneRank r(5, 4, 3);
  const RouteMismatch m = steps<double>(r, Exchange::Stale);
  EXPECT_GT(m.count, 0);
  EXPECT_NE(m.describe(r.dec).find("expected global cell (4,1,1)"), std::string::npos) << m.describe(r.dec);
}

TEST(Routing, HaloNeverReceivedIsCaught) {
  OneRank r(5, 4, 3);
  const RouteMismatch m = steps<float>(r, Exchange::Missing);
  EXPECT_GT(m.count, 0);
  EXPECT_NE(m.describe(r.dec).find("holds no cell's value (a halo never received)"), std::string::npos)
      << m.describe(r.dec);
}

// A diagonal motion reads the edge and corner halos: a corner halo left
// unset, or filled from the wrong side, fails the check; whole faces relayed
// direction by direction pass it.
TEST(Routing, CornersMustArriveForACornerVelocity) {
  OneRank r(4, 5, 3);
  const Motion m(Stencil{1, 1, 26}, false);  // one field, moving (1, 1, 1)
  for (int how = 0; how < 3; ++how) {
    Fields<float> fs(r.dec.grid, m);
    initialise_routing(fs, r.dec);
    const Grid& g = fs.grid;
    for (int t = 1; t <= kRoutingSteps; ++t) {
      // Relay: x, then y, then z, whole faces (halo rows included), the way by-direction schedules exchange.
      for (int dir = 0; dir < 3; ++dir)
        for (int sign : {Up, Down}) {
          std::vector<float> buf(plane_count(g, dir));
          pack_plane(fs.data(0), face(g, dir, sign, false), buf.data());
          unpack_plane(buf.data(), face(g, dir, sign, true), fs.data(0));
        }
      if (how == 1) fs.f[0][g.index(0, 0, 0)] = 0.0f;  // the corner halo lost
      if (how == 2) fs.f[0][g.index(0, 0, 0)] = fs.f[0][g.index(g.l + 1, g.m + 1, g.n + 1)];  // from the other corner
      reference_shift(g, fs.pointers(), m);
    }
    const RouteMismatch bad = check_routing(fs, r.dec, kRoutingSteps);
    if (how == 0) {
      EXPECT_EQ(bad.count, 0) << bad.describe(r.dec);
    } else {
      EXPECT_GT(bad.count, 0) << how;
      EXPECT_EQ(bad.i, 1);
      EXPECT_EQ(bad.j, 1);
      EXPECT_EQ(bad.k, 1);
    }
  }
}
