#include "grid/decomposition.hpp"

#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "core/errors.hpp"

namespace checkmpi {

namespace {

// Among the grids of `nranks` ranks that keep the given proc_* (> 0) and
// divide `global`, the one with the least halo surface per rank; ties go to
// more ranks along x, then y, as MPI_Dims_create orders them.
std::optional<std::array<int, 3>> fitting_dims(const long long (&asked)[3], const long long (&global)[3],
                                               int nranks) {
  std::optional<std::array<int, 3>> best;
  double best_surface = 0;
  auto fits = [&](int d, long long p) { return (asked[d] == 0 || asked[d] == p) && global[d] % p == 0; };
  std::vector<long long> divisors;
  for (long long k = 1; k * k <= nranks; ++k)
    if (nranks % k == 0) {
      divisors.push_back(k);
      if (k * k != nranks) divisors.push_back(nranks / k);
    }
  for (const long long a : divisors) {
    if (!fits(0, a)) continue;
    const long long rest = nranks / a;
    for (const long long b : divisors) {
      if (rest % b != 0 || !fits(1, b) || !fits(2, rest / b)) continue;
      const std::array<int, 3> d{int(a), int(b), int(rest / b)};
      const double l = double(global[0]) / a, m = double(global[1]) / b, n = double(global[2]) / d[2];
      const double surface = l * m + m * n + l * n;
      if (!best || surface < best_surface ||
          (surface == best_surface && std::make_pair(-d[0], -d[1]) < std::make_pair(-(*best)[0], -(*best)[1]))) {
        best = d;
        best_surface = surface;
      }
    }
  }
  return best;
}

// The ranks at every offset around this one, the offsets first mapped by
// the misrouting hook (dir < 0: none). The map is linear, so a message sent
// towards map(o) is received from map(-o) = -map(o): every message still
// finds its receive.
void fill_around(Decomposition& d, int dir, const std::string& kind) {
  for (int z = -1; z <= 1; ++z)
    for (int y = -1; y <= 1; ++y)
      for (int x = -1; x <= 1; ++x) {
        std::array<int, 3> o{x, y, z};
        if (dir >= 0) {
          const int along = o[std::size_t(dir)];
          if (kind == "self") o[std::size_t(dir)] = 0;
          else if (kind == "swap") o[std::size_t(dir)] = -along;
          else if (kind == "axis") o[std::size_t(dir)] = 0, o[std::size_t((dir + 1) % 3)] += along;
        }
        // MPI_Cart_create (not reordered) numbers the ranks row-major, z fastest.
        int rank = 0;
        for (std::size_t a = 0; a < 3; ++a)
          rank = rank * d.dims[a] + ((d.coords[a] + o[a]) % d.dims[a] + d.dims[a]) % d.dims[a];
        d.around[std::size_t(9 * (z + 1) + 3 * (y + 1) + x + 1)] = rank;
      }
  for (int a = 0; a < 3; ++a) {
    std::array<int, 3> o{0, 0, 0};
    o[std::size_t(a)] = -1;
    d.neighbour[std::size_t(a)][0] = d.at(o);
    o[std::size_t(a)] = 1;
    d.neighbour[std::size_t(a)][1] = d.at(o);
  }
}

}  // namespace

std::array<int, 3> choose_dims(const HaloConfig& c, int nranks) {
  const long long asked[3] = {c.proc_x, c.proc_y, c.proc_z};
  const long long global[3] = {c.lx, c.ly, c.lz};
  const char* axis = "xyz";
  // A proc_* above the ranks is wrong whatever the others; below them, the
  // product of the three overflows only when it is far above them.
  long long fixed = 1;
  bool overflow = false;
  for (int d = 0; d < 3; ++d) {
    if (asked[d] > nranks)
      throw UsageError(std::string("proc_") + axis[d] + " = " + std::to_string(asked[d]) + " is more than the " +
                       std::to_string(nranks) + " MPI ranks");
    if (asked[d] > 0) overflow = overflow || __builtin_mul_overflow(fixed, asked[d], &fixed);
  }
  if (overflow) throw UsageError("proc_x*proc_y*proc_z overflows: far more than the " + std::to_string(nranks) +
                                 " MPI ranks");
  if (fixed > nranks || nranks % fixed != 0) {
    throw UsageError("proc_x*proc_y*proc_z = " + std::to_string(fixed) + " does not match the " +
                     std::to_string(nranks) + " MPI ranks");
  }
  std::array<int, 3> dims{int(asked[0]), int(asked[1]), int(asked[2])};
  if (dims[0] == 0 || dims[1] == 0 || dims[2] == 0) {
    MPI_Dims_create(nranks, 3, dims.data());
    // MPI's balanced grid may not divide the domain where another grid does:
    // then the one with the least halo surface per rank.
    bool divides = true;
    for (int d = 0; d < 3; ++d) divides = divides && global[d] % dims[d] == 0;
    if (!divides) dims = fitting_dims(asked, global, nranks).value_or(dims);
  }
  if (static_cast<long long>(dims[0]) * dims[1] * dims[2] != nranks) {
    throw UsageError("proc_x*proc_y*proc_z = " + std::to_string(fixed) + " does not match the " +
                     std::to_string(nranks) + " MPI ranks");
  }
  for (int d = 0; d < 3; ++d) {
    if (global[d] % dims[d] != 0) {
      throw UsageError(std::string("l") + axis[d] + " = " + std::to_string(global[d]) +
                       " is not divisible by proc_" + axis[d] + " = " + std::to_string(dims[d]));
    }
  }
  return dims;
}

void resolve_local_size(HaloConfig& c, int nranks) {
  if (c.local[0] <= 0) return;
  c.lx = c.ly = c.lz = 0;  // only the grid is checked here
  const std::array<int, 3> dims = choose_dims(c, nranks);
  long long* global[3] = {&c.lx, &c.ly, &c.lz};
  for (int d = 0; d < 3; ++d) {
    long long size = 0;
    if (__builtin_mul_overflow(c.local[size_t(d)], static_cast<long long>(dims[size_t(d)]), &size) ||
        size > kMaxExtent)
      throw UsageError("--local " + std::to_string(c.local[0]) + "x" + std::to_string(c.local[1]) + "x" +
                       std::to_string(c.local[2]) + " on a grid of " + std::to_string(dims[0]) + "x" +
                       std::to_string(dims[1]) + "x" + std::to_string(dims[2]) + " ranks makes l" + "xyz"[d] +
                       " larger than " + std::to_string(kMaxExtent));
    *global[d] = size;
  }
}

Decomposition make_decomposition(const HaloConfig& c, MPI_Comm world) {
  Decomposition d;
  int nranks = 1;
  MPI_Comm_size(world, &nranks);
  d.dims = choose_dims(c, nranks);
  const int periods[3] = {1, 1, 1};
  MPI_Cart_create(world, 3, d.dims.data(), periods, /*reorder=*/0, &d.comm);
  MPI_Comm_rank(d.comm, &d.rank);
  MPI_Comm_size(d.comm, &d.size);
  MPI_Cart_coords(d.comm, d.rank, 3, d.coords.data());
  set_neighbours(d);
  int cart = MPI_PROC_NULL;  // the numbering assumed above, checked once
  MPI_Cart_rank(d.comm, d.coords.data(), &cart);
  if (cart != d.at({0, 0, 0})) throw std::logic_error("MPI_Cart_create numbered its ranks in an unexpected order");
  if (c.misroute_dir >= 0) misroute(d, c.misroute_kind, c.misroute_dir);
  d.grid = Grid{int(c.lx / d.dims[0]), int(c.ly / d.dims[1]), int(c.lz / d.dims[2]), c.stencil.width};
  try {
    check_block(d.grid);
  } catch (...) {
    free_decomposition(d);
    throw;
  }
  return d;
}

void misroute(Decomposition& d, const std::string& kind, int dir) { fill_around(d, dir, kind); }

void set_neighbours(Decomposition& d) { fill_around(d, -1, ""); }

void check_block(const Grid& g) {
  const auto n = g.interior();
  for (int d = 0; d < 3; ++d)
    if (n[std::size_t(d)] < g.h)
      throw UsageError("local block " + std::to_string(g.l) + "x" + std::to_string(g.m) + "x" + std::to_string(g.n) +
                       " is thinner than the halo width " + std::to_string(g.h) + " in " + "xyz"[d] +
                       ": every direction needs at least that many cells per rank");
}

void free_decomposition(Decomposition& d) {
  if (d.comm != MPI_COMM_NULL) MPI_Comm_free(&d.comm);
}

}  // namespace checkmpi
