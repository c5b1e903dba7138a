#include "halo/neighbours.hpp"

namespace checkmpi {

std::array<NeighbourCounts, 3> neighbour_counts(const Decomposition& dec, const RunContext& ctx) {
  std::array<NeighbourCounts, 3> out{};
  for (int r = 0; r < dec.size; ++r) {
    int coords[3];
    MPI_Cart_coords(dec.comm, r, 3, coords);
    for (int d = 0; d < 3; ++d) {
      for (int sign : {-1, 1}) {
        int c[3] = {coords[0], coords[1], coords[2]};
        c[d] = (c[d] + sign + dec.dims[d]) % dec.dims[d];
        int peer = r;
        MPI_Cart_rank(dec.comm, c, &peer);
        const bool same_node = size_t(peer) < ctx.node_of_rank.size() && size_t(r) < ctx.node_of_rank.size() &&
                               ctx.node_of_rank[peer] == ctx.node_of_rank[r];
        if (peer == r) ++out[d].self;
        else if (same_node) ++out[d].on_node;
        else ++out[d].off_node;
      }
    }
  }
  return out;
}

std::string neighbour_where(const NeighbourCounts& c) {
  if (c.off_node == 0) return c.on_node == 0 ? "self" : "on node";
  return c.on_node == 0 && c.self == 0 ? "off node" : "mixed";
}

Json neighbours_json(const std::array<NeighbourCounts, 3>& counts) {
  static const char* names[3] = {"x", "y", "z"};
  Json j = Json::object();
  for (int d = 0; d < 3; ++d) {
    Json c = Json::object();
    c["self"] = counts[d].self;
    c["on_node"] = counts[d].on_node;
    c["off_node"] = counts[d].off_node;
    c["where"] = neighbour_where(counts[d]);
    j[names[d]] = c;
  }
  return j;
}

std::string neighbours_text(const std::array<NeighbourCounts, 3>& counts) {
  static const char* names[3] = {"x", "y", "z"};
  std::string out;
  for (int d = 0; d < 3; ++d) {
    const auto& c = counts[d];
    const int all = c.self + c.on_node + c.off_node;
    const std::string where = neighbour_where(c);
    out += (d ? ", " : "") + std::string(names[d]) + " " +
           (where == "mixed" ? std::to_string(c.off_node) + " of " + std::to_string(all) + " off node" : where);
  }
  return out;
}

}  // namespace checkmpi
