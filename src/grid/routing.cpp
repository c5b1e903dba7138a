#include "grid/routing.hpp"

namespace checkmpi {

GlobalBox::GlobalBox(const Decomposition& d) {
  const auto local = d.grid.interior();
  for (size_t a = 0; a < 3; ++a) {
    size[a] = (long long)(local[a]) * d.dims[a];
    origin[a] = (long long)(local[a]) * d.coords[a];
  }
}

namespace {

std::string cell_text(const std::array<long long, 3>& at) {
  return "(" + std::to_string(at[0] + 1) + "," + std::to_string(at[1] + 1) + "," + std::to_string(at[2] + 1) + ")";
}

// The rank holding a global cell, from the Cartesian communicator itself
// (not from the neighbour table, which is what is being checked).
int owner(const Decomposition& d, const std::array<long long, 3>& at) {
  int coords[3];
  for (size_t a = 0; a < 3; ++a) coords[a] = int(at[a] / (long long)(d.grid.interior()[a]));
  int rank = -1;
  MPI_Cart_rank(d.comm, coords, &rank);
  return rank;
}

}  // namespace

std::string RouteMismatch::describe(const Decomposition& d) const {
  const GlobalBox box(d);
  std::string found_text = "no cell's value (a halo never received)";
  // Codes wrap around for huge boxes: a decoded index beyond the box is none of its cells.
  const std::uint64_t cells = box.index({0, 0, box.size[2]});
  if (decodable && found < cells) {
    std::array<long long, 3> at{};
    at[0] = (long long)(found % std::uint64_t(box.size[0]));
    at[1] = (long long)(found / std::uint64_t(box.size[0]) % std::uint64_t(box.size[1]));
    at[2] = (long long)(found / std::uint64_t(box.size[0] * box.size[1]));
    found_text = "the value of global cell " + cell_text(at) + " (rank " + std::to_string(owner(d, at)) + ")";
  } else if (decodable) {
    found_text = "a value of no cell";
  }
  return "field" + std::to_string(field) + "(" + std::to_string(i) + "," + std::to_string(j) + "," +
         std::to_string(k) + ") holds " + found_text + ", expected global cell " + cell_text(expected) +
         " from rank " + std::to_string(owner(d, expected)) + "; " + std::to_string(count) +
         " wrong cell(s) on this rank";
}

}  // namespace checkmpi
