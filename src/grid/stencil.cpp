#include "grid/stencil.hpp"

#include <stdexcept>

namespace checkmpi {

namespace {

// Each offset followed by its opposite, as the faces are (+x, -x, ...).
std::vector<Offset> with_opposites(const std::vector<Offset>& half) {
  std::vector<Offset> out;
  for (const Offset& o : half) {
    out.push_back(o);
    out.push_back({-o[0], -o[1], -o[2]});
  }
  return out;
}

const std::vector<Offset>& faces() {
  static const std::vector<Offset> v = with_opposites({{1, 0, 0}, {0, 1, 0}, {0, 0, 1}});
  return v;
}
const std::vector<Offset>& edges() {
  static const std::vector<Offset> v = with_opposites(
      {{1, 1, 0}, {1, -1, 0}, {1, 0, 1}, {1, 0, -1}, {0, 1, 1}, {0, 1, -1}});
  return v;
}
const std::vector<Offset>& corners() {
  static const std::vector<Offset> v = with_opposites({{1, 1, 1}, {1, 1, -1}, {1, -1, 1}, {-1, 1, 1}});
  return v;
}

std::vector<Offset> joined(std::initializer_list<const std::vector<Offset>*> parts) {
  std::vector<Offset> out;
  for (const auto* p : parts) out.insert(out.end(), p->begin(), p->end());
  return out;
}

// The lattice velocities, diagonal ones first (so that three fields of an
// 18-neighbour stencil read the three lower faces and the edges between
// them, one field of a 26-neighbour stencil the seven lower halos), rest last.
const std::vector<Offset>& q19() {
  static const std::vector<Offset> v{
      {1, 1, 0},  {0, 1, 1},  {1, 0, 1},  {-1, -1, 0}, {0, -1, -1}, {-1, 0, -1}, {1, -1, 0},
      {0, 1, -1}, {-1, 0, 1}, {-1, 1, 0}, {0, -1, 1},  {1, 0, -1},  {1, 0, 0},   {0, 1, 0},
      {0, 0, 1},  {-1, 0, 0}, {0, -1, 0}, {0, 0, -1},  {0, 0, 0}};
  return v;
}
const std::vector<Offset>& q27() {
  static const std::vector<Offset> v = [] {
    std::vector<Offset> out{{1, 1, 1},  {-1, -1, -1}, {1, 1, -1}, {-1, -1, 1},
                            {1, -1, 1}, {-1, 1, -1},  {-1, 1, 1}, {1, -1, -1}};
    out.insert(out.end(), q19().begin(), q19().end());
    return out;
  }();
  return v;
}

}  // namespace

const std::vector<Offset>& neighbour_offsets(int neighbours) {
  static const std::vector<Offset> six = faces();
  static const std::vector<Offset> eighteen = joined({&faces(), &edges()});
  static const std::vector<Offset> twenty_six = joined({&faces(), &edges(), &corners()});
  if (neighbours == 6) return six;
  if (neighbours == 18) return eighteen;
  if (neighbours == 26) return twenty_six;
  throw std::logic_error("neighbour_offsets: 6, 18 or 26");
}

std::string offset_name(const Offset& o) {
  std::string axes, signs;
  for (int a = 0; a < 3; ++a)
    if (o[std::size_t(a)] != 0) {
      axes += "xyz"[a];
      signs += o[std::size_t(a)] > 0 ? '+' : '-';
    }
  return axes + signs;
}

Offset lattice_velocity(int neighbours, int f) {
  if (neighbours == 6) {
    Offset v{0, 0, 0};
    v[std::size_t(f % 3)] = 1;
    return v;
  }
  const std::vector<Offset>& q = neighbours == 18 ? q19() : q27();
  return q[std::size_t(f) % q.size()];
}

Motion::Motion(const Stencil& s, bool reverse) {
  for (int f = 0; f < s.fields; ++f) {
    Offset u = lattice_velocity(s.neighbours, f);
    for (int& c : u) c *= reverse ? -s.width : s.width;
    v.push_back(u);
  }
}

int Motion::axis(int f) const {
  const Offset& u = v[std::size_t(f)];
  if (order_of(u) != 1) return -1;
  return u[0] != 0 ? 0 : u[1] != 0 ? 1 : 2;
}

std::string describe(const Stencil& s) {
  return std::to_string(s.fields) + " field" + (s.fields == 1 ? "" : "s") + ", halo width " +
         std::to_string(s.width) + ", " + std::to_string(s.neighbours) + " neighbours";
}

}  // namespace checkmpi
