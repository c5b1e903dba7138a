// Where each direction's neighbours are: the rank itself, on its node or on
// another node. Off-node messages take the network, on-node ones shared memory;
// the model and a reader of the results need to know which.
#pragma once

#include <array>
#include <string>

#include "core/context.hpp"
#include "core/json.hpp"
#include "grid/decomposition.hpp"

namespace checkmpi {

// Messages of one direction, over every rank and both signs (2 per rank).
struct NeighbourCounts {
  int self = 0;
  int on_node = 0;
  int off_node = 0;
};

// From the Cartesian grid (MPI_Cart_coords/MPI_Cart_rank, no communication)
// and the context's node of each rank; the same on every rank.
std::array<NeighbourCounts, 3> neighbour_counts(const Decomposition& dec, const RunContext& ctx);

// "self", "on node", "off node" or "mixed" (some messages on, some off node).
std::string neighbour_where(const NeighbourCounts& c);

// {"x": {"self", "on_node", "off_node", "where"}, "y": ..., "z": ...}
Json neighbours_json(const std::array<NeighbourCounts, 3>& counts);

// "x off node, y on node, z self" (mixed: "x 4 of 8 off node").
std::string neighbours_text(const std::array<NeighbourCounts, 3>& counts);

}  // namespace checkmpi
