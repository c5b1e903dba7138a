// The shape of a halo exchange (issue 34): how wide the halo is, how many
// fields there are, which neighbours a rank exchanges with, and how each
// field moves every step, so that the result stays known exactly.
//
// With 6 neighbours field f moves along axis f mod 3, as CheckMPI's three
// fields do. With 18 or 26 the fields take the velocities of a D3Q19 or
// D3Q27 lattice, the diagonal ones first so that even one field reads an
// edge (18) or a corner (26) halo: a halo that arrived wrong then fails the
// check. Every velocity is scaled by the halo width, so that a field moves W
// cells along each axis of its velocity and reads every halo layer.
#pragma once

#include <array>
#include <string>
#include <vector>

namespace checkmpi {

using Offset = std::array<int, 3>;

struct Stencil {
  int width = 1;       // --halo-width: halo cells on each side
  int fields = 3;      // --fields
  int neighbours = 6;  // --neighbours: 6 (faces), 18 (and edges), 26 (and corners)
  bool defaults() const { return width == 1 && fields == 3 && neighbours == 6; }
};

constexpr int kMaxHaloWidth = 4;
// Tags are 1 + field + (fields + 1) * neighbour, within the 32767 every MPI allows.
constexpr int kMaxFields = 1024;

// The neighbours of a rank, as offsets in ranks: the 6 faces (+x, -x, +y,
// -y, +z, -z), then for 18 and 26 the 12 edges, then for 26 the 8 corners.
// A rank's message to the neighbour at offset o is received by that
// neighbour from -o.
const std::vector<Offset>& neighbour_offsets(int neighbours);
// Faces, edges or corners: the nonzero components of an offset.
inline int order_of(const Offset& o) { return (o[0] != 0) + (o[1] != 0) + (o[2] != 0); }
// "x+", "xy+-", "xyz--": the axes an offset moves along and their signs.
std::string offset_name(const Offset& o);
// The index of a face offset in neighbour_offsets: 2 * axis + (negative).
inline int face_index(int axis, bool negative) { return 2 * axis + (negative ? 1 : 0); }

// Field f's velocity in units of the halo width (each component -1, 0 or 1),
// forward: 6: e_(f mod 3); 18: the 12 edges, the 6 faces and rest of D3Q19,
// in that order, f modulo 19; 26: the 8 corners, 12 edges, 6 faces and rest
// of D3Q27, f modulo 27.
Offset lattice_velocity(int neighbours, int f);

// How the fields move: per field, the cells it moves per step (the
// lattice velocity times the width, negated with --reverse).
struct Motion {
  std::vector<Offset> v;
  Motion() = default;
  Motion(const Stencil& s, bool reverse);
  int fields() const { return int(v.size()); }
  // The one axis field f moves along, or -1 (a diagonal, or at rest).
  int axis(int f) const;
  // The cells it moves along that axis (negative in reverse); 0 when it has no single axis.
  int step(int f) const { return axis(f) < 0 ? 0 : v[std::size_t(f)][std::size_t(axis(f))]; }
};

// Text for headers and errors: "3 fields, halo width 1, 6 neighbours".
std::string describe(const Stencil& s);

}  // namespace checkmpi
