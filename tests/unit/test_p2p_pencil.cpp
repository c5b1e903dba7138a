// The pencil decomposition of mode nbc --pencil: 2DECOMP's splits, pencil
// boxes, transpose counts and displacements for uneven splits, and a whole
// transpose simulated without MPI (every rank's pack, the all-to-all as
// copies, every rank's unpack and check).
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "p2p/pencil.hpp"

using namespace checkmpi::p2p;

namespace {

const Pencil kPencils[] = {Pencil::X, Pencil::Y, Pencil::Z};
const Transpose kTransposes[] = {Transpose::XtoY, Transpose::YtoZ};

// Uneven in every direction, and rows != columns.
const PencilGrid kGrids[] = {{{9, 7, 5}, 2, 2}, {{13, 11, 10}, 2, 4}, {{7, 5, 4}, 3, 2}, {{8, 8, 8}, 2, 4},
                             {{5, 6, 3}, 1, 3}, {{6, 5, 7}, 4, 1}};

}  // namespace

TEST(Pencil, SplitGivesTheRemainderToTheLastParts) {
  const auto s = split(7, 3);  // 2DECOMP distribute(): 2, 2, 3
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].start, 0);
  EXPECT_EQ(s[0].size, 2);
  EXPECT_EQ(s[1].start, 2);
  EXPECT_EQ(s[1].size, 2);
  EXPECT_EQ(s[2].start, 4);
  EXPECT_EQ(s[2].size, 3);
  const auto t = split(8, 3);  // 2, 3, 3
  EXPECT_EQ(t[0].size, 2);
  EXPECT_EQ(t[1].start, 2);
  EXPECT_EQ(t[1].size, 3);
  EXPECT_EQ(t[2].start, 5);
  EXPECT_EQ(t[2].size, 3);
  for (long long n : {1, 4, 9, 100})
    for (int parts = 1; parts <= n && parts <= 7; ++parts) {
      long long at = 0;
      for (int p = 0; p < parts; ++p) {
        const Range r = part(n, parts, p);
        EXPECT_EQ(r.start, at) << n << "/" << parts;
        EXPECT_TRUE(r.size == n / parts || r.size == n / parts + 1);
        at += r.size;
      }
      EXPECT_EQ(at, n);
    }
}

TEST(Pencil, BoxesOfEachOrientationTileTheGrid) {
  for (const auto& g : kGrids)
    for (Pencil p : kPencils) {
      std::vector<int> owner(std::size_t(g.grid.cells()), 0);
      for (int row = 0; row < g.p_row; ++row)
        for (int col = 0; col < g.p_col; ++col) {
          const Box b = g.box(p, row, col);
          EXPECT_GT(b.count(), 0);
          for (long long k = b.z.start; k < b.z.start + b.z.size; ++k)
            for (long long j = b.y.start; j < b.y.start + b.y.size; ++j)
              for (long long i = b.x.start; i < b.x.start + b.x.size; ++i)
                ++owner[std::size_t((k * g.grid.ny + j) * g.grid.nx + i)];
        }
      EXPECT_TRUE(std::all_of(owner.begin(), owner.end(), [](int n) { return n == 1; })) << g.grid.text();
    }
  // X-pencils hold all of x, Y all of y, Z all of z.
  const PencilGrid g{{9, 7, 5}, 2, 2};
  EXPECT_EQ(g.box(Pencil::X, 1, 0).x.size, 9);
  EXPECT_EQ(g.box(Pencil::X, 1, 0).y.size, 4);  // 7 over 2 rows: 3, 4
  EXPECT_EQ(g.box(Pencil::X, 1, 0).z.size, 2);  // 5 over 2 columns: 2, 3
  EXPECT_EQ(g.box(Pencil::Y, 0, 1).y.size, 7);
  EXPECT_EQ(g.box(Pencil::Y, 0, 1).x.size, 4);  // 9 over 2 rows: 4, 5
  EXPECT_EQ(g.box(Pencil::Z, 1, 1).z.size, 5);
  EXPECT_EQ(g.box(Pencil::Z, 1, 1).y.size, 4);  // 7 over 2 columns: 3, 4
}

TEST(Pencil, CountsAndDisplacementsOfAnUnevenTranspose) {
  // 9x7x5 on 2x2, rank (row 0, col 1), X->Y over its column (rows 0 and 1):
  // X-pencil 9 x 3 x 3 (y 0..2, z 2..4); to row d goes x range d (4, 5).
  const PencilGrid g{{9, 7, 5}, 2, 2};
  const TransposePlan x2y = plan_transpose(g, Transpose::XtoY, 0, 1);
  EXPECT_EQ(x2y.from.count(), 9 * 3 * 3);
  EXPECT_EQ(x2y.send_counts, (std::vector<int>{4 * 3 * 3, 5 * 3 * 3}));
  EXPECT_EQ(x2y.send_displs, (std::vector<int>{0, 36}));
  // Y-pencil 4 x 7 x 3 (x 0..3); from row s comes y range s (3, 4).
  EXPECT_EQ(x2y.to.count(), 4 * 7 * 3);
  EXPECT_EQ(x2y.recv_counts, (std::vector<int>{4 * 3 * 3, 4 * 4 * 3}));
  EXPECT_EQ(x2y.recv_displs, (std::vector<int>{0, 36}));
  // Y->Z of rank (1, 0) over its row (columns 0 and 1): Y-pencil 5 x 7 x 2;
  // to column d goes y range d (3, 4); from column s comes z range s (2, 3).
  const TransposePlan y2z = plan_transpose(g, Transpose::YtoZ, 1, 0);
  EXPECT_EQ(y2z.send_counts, (std::vector<int>{5 * 3 * 2, 5 * 4 * 2}));
  EXPECT_EQ(y2z.recv_counts, (std::vector<int>{5 * 3 * 2, 5 * 3 * 3}));
  EXPECT_EQ(y2z.recv_displs, (std::vector<int>{0, 30}));
}

TEST(Pencil, EveryPlanMatchesItsPeers) {
  for (const auto& g : kGrids)
    for (Transpose t : kTransposes)
      for (int row = 0; row < g.p_row; ++row)
        for (int col = 0; col < g.p_col; ++col) {
          const TransposePlan me = plan_transpose(g, t, row, col);
          EXPECT_EQ(me.send_total(), me.from.count());
          EXPECT_EQ(me.recv_total(), me.to.count());
          EXPECT_EQ(me.peers(), t == Transpose::XtoY ? g.p_row : g.p_col);
          for (int d = 0; d < me.peers(); ++d) {
            // What I send to peer d is what d expects from me (I am peer `mine` to it).
            const bool x2y = t == Transpose::XtoY;
            const TransposePlan peer = plan_transpose(g, t, x2y ? d : row, x2y ? col : d);
            const int mine = x2y ? row : col;
            EXPECT_EQ(me.send_counts[std::size_t(d)], peer.recv_counts[std::size_t(mine)]);
            const Box a = me.send_boxes[std::size_t(d)], b = peer.recv_boxes[std::size_t(mine)];
            EXPECT_EQ(a.x.start, b.x.start);
            EXPECT_EQ(a.y.start, b.y.start);
            EXPECT_EQ(a.z.start, b.z.start);
            if (d > 0) {
              EXPECT_EQ(me.send_displs[std::size_t(d)],
                        me.send_displs[std::size_t(d - 1)] + me.send_counts[std::size_t(d - 1)]);
              EXPECT_EQ(me.recv_displs[std::size_t(d)],
                        me.recv_displs[std::size_t(d - 1)] + me.recv_counts[std::size_t(d - 1)]);
            }
          }
        }
}

// Every rank packs its pencil, the all-to-all runs as copies between their
// buffers, every rank unpacks and checks: every cell lands where it belongs.
TEST(Pencil, SimulatedTransposeMovesEveryCellToItsPlace) {
  for (const auto& g : kGrids)
    for (Transpose t : kTransposes) {
      const bool x2y = t == Transpose::XtoY;
      const int ranks = g.p_row * g.p_col;
      std::vector<TransposePlan> plans;
      std::vector<std::vector<double>> send(static_cast<std::size_t>(ranks)), recv(static_cast<std::size_t>(ranks));
      for (int r = 0; r < ranks; ++r) {
        plans.push_back(plan_transpose(g, t, r / g.p_col, r % g.p_col));
        std::vector<double> from(std::size_t(plans.back().from.count()));
        fill_pencil(g.grid, plans.back().from, from.data(), 5);
        send[std::size_t(r)].resize(std::size_t(plans.back().send_total()));
        recv[std::size_t(r)].resize(std::size_t(plans.back().recv_total()));
        pack(plans.back(), from.data(), send[std::size_t(r)].data());
      }
      for (int r = 0; r < ranks; ++r) {
        const int row = r / g.p_col, col = r % g.p_col;
        const TransposePlan& p = plans[std::size_t(r)];
        for (int d = 0; d < p.peers(); ++d) {
          const int dest = x2y ? d * g.p_col + col : row * g.p_col + d, mine = x2y ? row : col;
          const TransposePlan& q = plans[std::size_t(dest)];
          ASSERT_EQ(p.send_counts[std::size_t(d)], q.recv_counts[std::size_t(mine)]);
          std::copy_n(send[std::size_t(r)].begin() + p.send_displs[std::size_t(d)], p.send_counts[std::size_t(d)],
                      recv[std::size_t(dest)].begin() + q.recv_displs[std::size_t(mine)]);
        }
      }
      for (int r = 0; r < ranks; ++r) {
        std::vector<double> to(std::size_t(plans[std::size_t(r)].to.count()), -1.0);
        unpack(plans[std::size_t(r)], recv[std::size_t(r)].data(), to.data());
        EXPECT_EQ(check_pencil(g.grid, plans[std::size_t(r)].to, to.data(), 5), "")
            << transpose_name(t) << " " << g.grid.text() << " rank " << r;
      }
    }
}

TEST(Pencil, CheckNamesTheFirstWrongCell) {
  const Grid3 grid{4, 3, 2};
  const Box b{{0, 4}, {0, 3}, {1, 1}};  // the z = 1 plane
  std::vector<double> data(std::size_t(b.count()));
  fill_pencil(grid, b, data.data(), 2);
  EXPECT_EQ(check_pencil(grid, b, data.data(), 2), "");
  // Data of another iteration is wrong too.
  EXPECT_EQ(check_pencil(grid, b, data.data(), 3), "cell (0,0,1): expected 51, got 50");
  data[std::size_t(b.offset(2, 1, 1))] = 0;
  EXPECT_EQ(check_pencil(grid, b, data.data(), 2), "cell (2,1,1): expected 74, got 0");
  EXPECT_EQ(cell_value(grid, 2, 1, 1, 2), ((1 * 3 + 1) * 4 + 2) * 4 + 2);
}
