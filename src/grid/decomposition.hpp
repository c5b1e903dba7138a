// The periodic Cartesian decomposition of the global box and each rank's
// block, halo included.
#pragma once

#include <mpi.h>

#include <array>
#include <cstddef>
#include <string>

#include "grid/config.hpp"

namespace checkmpi {

// Index space of one rank's field: 0..l+1 x 0..m+1 x 0..n+1, x fastest, as the
// Fortran arrays field(0:l+1, 0:m+1, 0:n+1).
struct Grid {
  int l = 0, m = 0, n = 0;

  std::array<int, 3> interior() const { return {l, m, n}; }
  std::array<std::size_t, 3> extent() const {
    return {std::size_t(l) + 2, std::size_t(m) + 2, std::size_t(n) + 2};
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
    return std::size_t(i) + e[0] * (std::size_t(j) + e[1] * std::size_t(k));
  }
};

struct Decomposition {
  MPI_Comm comm = MPI_COMM_NULL;      // periodic Cartesian, not reordered
  int rank = 0, size = 1;
  std::array<int, 3> dims{1, 1, 1};
  std::array<int, 3> coords{0, 0, 0};
  // neighbour[d][0]: the rank below in direction d (coords-1), [1]: above.
  std::array<std::array<int, 2>, 3> neighbour{};
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
// "swap" or "axis" (see HaloConfig). Every strategy takes its peers from this
// table, so the routing check must then fail for each of them.
void misroute(Decomposition& d, const std::string& kind, int dir);

void free_decomposition(Decomposition& d);

}  // namespace checkmpi
