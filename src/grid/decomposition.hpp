// The periodic Cartesian decomposition of the global box and each rank's
// block, halo included.
#pragma once

#include <mpi.h>

#include <array>
#include <cstddef>
#include <string>

#include "grid/config.hpp"

namespace checkmpi {

// Index space of one rank's field: 1-h..l+h x 1-h..m+h x 1-h..n+h, x
// fastest: the interior 1..l (as the Fortran arrays field(0:l+1, 0:m+1,
// 0:n+1) of CheckMPI, whose halo is one cell) and h halo cells on each side.
struct Grid {
  int l = 0, m = 0, n = 0;
  int h = 1;  // halo width

  std::array<int, 3> interior() const { return {l, m, n}; }
  std::array<std::size_t, 3> extent() const {
    return {std::size_t(l) + 2 * std::size_t(h), std::size_t(m) + 2 * std::size_t(h),
            std::size_t(n) + 2 * std::size_t(h)};
  }
  // Distance between neighbours along each direction.
  std::array<std::size_t, 3> stride() const {
    auto e = extent();
    return {1, e[0], e[0] * e[1]};
  }
  std::size_t cells() const {
    auto e = extent();
    return e[0] * e[1] * e[2];
  }
  std::size_t index(int i, int j, int k) const {
    auto e = extent();
    return std::size_t(i + h - 1) + e[0] * (std::size_t(j + h - 1) + e[1] * std::size_t(k + h - 1));
  }
  // Where a cell's value comes from when its field moves by v: c + offset(v).
  long offset(const std::array<int, 3>& v) const {
    auto st = stride();
    return -(long(v[0]) * long(st[0]) + long(v[1]) * long(st[1]) + long(v[2]) * long(st[2]));
  }
};

// A box of cells, bounds inclusive, in the index
// space of Grid.
struct Box {
  std::array<int, 3> lo{1, 1, 1}, hi{0, 0, 0};
  bool empty() const { return hi[0] < lo[0] || hi[1] < lo[1] || hi[2] < lo[2]; }
  std::size_t cells() const {
    if (empty()) return 0;
    return std::size_t(hi[0] - lo[0] + 1) * std::size_t(hi[1] - lo[1] + 1) * std::size_t(hi[2] - lo[2] + 1);
  }
};

// Which fields a kernel works on: `count` fields from `first`, or (count
// < 0) all of them.
struct FieldRange {
  int first = 0, count = -1;
  int end(int fields) const { return count < 0 ? fields : first + count; }
};

inline Box interior_box(const Grid& g) { return Box{{1, 1, 1}, {g.l, g.m, g.n}}; }
inline Box whole_box(const Grid& g) { return Box{{1 - g.h, 1 - g.h, 1 - g.h}, {g.l + g.h, g.m + g.h, g.n + g.h}}; }

struct Decomposition {
  MPI_Comm comm = MPI_COMM_NULL;      // periodic Cartesian, not reordered
  int rank = 0, size = 1;
  std::array<int, 3> dims{1, 1, 1};
  std::array<int, 3> coords{0, 0, 0};
  // neighbour[d][0]: the rank below in direction d (coords-1), [1]: above.
  std::array<std::array<int, 2>, 3> neighbour{};
  // The rank at every offset in {-1,0,1}^3 (at(o)); the faces' are neighbour's.
  std::array<int, 27> around{};
  int at(const std::array<int, 3>& o) const { return around[std::size_t(9 * (o[2] + 1) + 3 * (o[1] + 1) + o[0] + 1)]; }
  Grid grid;
};

// Fills zero proc_* entries with MPI_Dims_create (where that grid does not
// divide the global size, with the grid that does and has the least halo
// surface per rank) and checks that the grid matches `nranks` and divides the
// global size. Throws UsageError. Pure arithmetic, identical on every rank.
std::array<int, 3> choose_dims(const HaloConfig& c, int nranks);

// With --local: lx, ly, lz = the size per rank times the grid choose_dims
// gives for `nranks`. Throws UsageError when a direction grows past kMaxExtent.
void resolve_local_size(HaloConfig& c, int nranks);

// Creates the Cartesian communicator (collective over `world`).
Decomposition make_decomposition(const HaloConfig& c, MPI_Comm world);

// Test hook (--inject-misroute): makes direction `dir`'s neighbours wrong,
// consistently on every rank so that no message is left unmatched: "self",
// "swap" or "axis" (see HaloConfig), and with them every edge and corner
// that moves along `dir` (the offsets are mapped linearly: dir's component
// dropped, negated, or moved to the next direction). Every strategy takes its
// peers from this table, so the routing check must then fail for each of them.
void misroute(Decomposition& d, const std::string& kind, int dir);

// Fills the neighbour table from dims and coords (no communication).
void set_neighbours(Decomposition& d);

// UsageError unless every direction of the block holds at least the halo
// width: a rank's halo comes from its neighbour's cells alone.
void check_block(const Grid& g);

void free_decomposition(Decomposition& d);

}  // namespace checkmpi
