// Shared halo-exchange plumbing: which plane goes where, how a plane is laid
// out in memory, packing and unpacking, and the timers strategies fill in.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <vector>

#include "grid/decomposition.hpp"
#include "grid/stencil.hpp"

namespace checkmpi {

template <class Real> MPI_Datatype mpi_type();
template <> inline MPI_Datatype mpi_type<float>() { return MPI_FLOAT; }
template <> inline MPI_Datatype mpi_type<double>() { return MPI_DOUBLE; }

// Direction d, sign s. Each step every rank exchanges both signs of every
// direction, like CheckMPI:
//   Up   (s=0): send its top interior layers to the neighbour above, receive the halo below from below;
//   Down (s=1): send its bottom interior layers to the neighbour below, receive the halo above from above.
// Forward propagation reads the halo below, reverse the one above; both are refreshed.
// With 18 or 26 neighbours the same holds for every offset o (stencil.hpp):
// the cells next to side o go to the neighbour at o, and the halo on side
// -o comes from the neighbour at -o.
enum Sign { Up = 0, Down = 1 };

inline Offset face_offset(int dir, int sign) {
  Offset o{0, 0, 0};
  o[std::size_t(dir)] = sign == Up ? 1 : -1;
  return o;
}
inline Offset opposite(const Offset& o) { return {-o[0], -o[1], -o[2]}; }

// Distinct tag per (field, neighbour) of a stencil with `fields` fields;
// field = fields for a message that carries them all. With the default
// stencil: 1 + field + 4 * (2 * dir + sign), as always.
inline int halo_tag(int field, int neighbour, int fields) { return 1 + field + (fields + 1) * neighbour; }

// The cells a rank sends towards offset o (`receive` false), or the halo
// cells it receives from the neighbour at -o into (true): along each axis of
// o the h layers next to that side (interior, or the halo beyond the other
// side), along the others the interior, or with `whole` the whole extent,
// halos included: a whole face carries the halos of the directions before
// it, which relays edges and corners through the faces.
inline Box region_box(const Grid& g, const Offset& o, bool receive, bool whole) {
  const auto n = g.interior();
  Box b;
  for (std::size_t a = 0; a < 3; ++a) {
    const int side = receive ? -o[a] : o[a];  // the side of this rank the cells lie on
    if (side == 0) {
      b.lo[a] = whole ? 1 - g.h : 1;
      b.hi[a] = whole ? n[a] + g.h : n[a];
    } else if (side > 0) {  // top: interior layers n-h+1..n, or the halo n+1..n+h
      b.lo[a] = receive ? n[a] + 1 : n[a] - g.h + 1;
      b.hi[a] = b.lo[a] + g.h - 1;
    } else {  // bottom: interior layers 1..h, or the halo 1-h..0
      b.lo[a] = receive ? 1 - g.h : 1;
      b.hi[a] = b.lo[a] + g.h - 1;
    }
  }
  return b;
}

// A block of cells as layers of planes of rows x cols, with element strides;
// packed messages hold it field by field, layer by layer, row by row, columns
// fastest. As a plane normal to `dir`: x planes are strided points (columns
// y, rows z), y planes rows of x (rows z), z planes contiguous (rows y); the
// layers run along `dir`.
struct Plane {
  std::size_t offset = 0, rows = 0, cols = 0, row_stride = 0, col_stride = 0;
  std::size_t layers = 1, layer_stride = 0;
  std::size_t count() const { return layers * rows * cols; }
};

inline Plane region(const Grid& g, const Box& b, int dir) {
  const auto st = g.stride();
  // The two directions spanning the plane, the faster one as columns.
  const int c = dir == 0 ? 1 : 0;
  const int r = dir == 2 ? 1 : 2;
  const auto ext = [&](int a) { return std::size_t(b.hi[a] - b.lo[a] + 1); };
  return Plane{g.index(b.lo[0], b.lo[1], b.lo[2]), ext(r), ext(c), st[r], st[c], ext(dir), st[dir]};
}

// One whole plane normal to `dir` at coordinate `index` (halo rows and columns included).
inline Plane plane(const Grid& g, int dir, int index) {
  Box b{{1 - g.h, 1 - g.h, 1 - g.h}, {g.l + g.h, g.m + g.h, g.n + g.h}};
  b.lo[dir] = b.hi[dir] = index;
  return region(g, b, dir);
}

// A face's whole layers (halo rows and columns included): sent (receive
// false) or received, as by-direction schedules exchange them.
inline Plane face(const Grid& g, int dir, int sign, bool receive) {
  return region(g, region_box(g, face_offset(dir, sign), receive, true), dir);
}

// Elements of one field's whole face in a direction (the message size of
// one field with the default stencil: its plane).
inline std::size_t plane_count(const Grid& g, int dir) { return face(g, dir, Up, false).count(); }

// One run of a plane: n elements `stride` apart to or from a contiguous run.
template <class Real>
void gather_row(const Real* src, std::size_t stride, std::size_t n, Real* dst) {
  if (stride == 1) {
    std::copy(src, src + n, dst);
  } else {
    for (std::size_t c = 0; c < n; ++c) dst[c] = src[c * stride];
  }
}

template <class Real>
void scatter_row(const Real* src, std::size_t n, Real* dst, std::size_t stride) {
  if (stride == 1) {
    std::copy(src, src + n, dst);
  } else {
    for (std::size_t c = 0; c < n; ++c) dst[c * stride] = src[c];
  }
}

template <class Real>
void pack_plane(const Real* field, const Plane& p, Real* buf) {
  for (std::size_t l = 0; l < p.layers; ++l)
    for (std::size_t r = 0; r < p.rows; ++r)
      gather_row(field + p.offset + l * p.layer_stride + r * p.row_stride, p.col_stride, p.cols,
                 buf + (l * p.rows + r) * p.cols);
}

template <class Real>
void unpack_plane(const Real* buf, const Plane& p, Real* field) {
  for (std::size_t l = 0; l < p.layers; ++l)
    for (std::size_t r = 0; r < p.rows; ++r)
      scatter_row(buf + (l * p.rows + r) * p.cols, p.cols, field + p.offset + l * p.layer_stride + r * p.row_stride,
                  p.col_stride);
}

// The committed MPI datatype of a block of one field, from the element at
// its offset (CheckMPI's yzplane, xzplane, xyplane for its planes). The
// caller frees it.
MPI_Datatype make_plane_datatype(const Plane& p, MPI_Datatype real);

// Seconds accumulated by one rank over the timed loop.
struct StepTimers {
  double loop = 0, compute = 0, diag = 0, comm = 0;
  std::array<double, 3> dir{};  // x, y, z share of comm (pack + MPI + unpack + barrier)
  double pack = 0, unpack = 0;
  std::array<double, 3> pack_dir{}, unpack_dir{};  // pack and unpack split by direction
  // The transport's own calls, packing and unpacking inside them left out:
  // posting receives and sends, and waiting (or testing) for them to complete.
  double post = 0, wait = 0;
  double excluded = 0;  // inside the loop but not measured (see Untimed); the loop time leaves it out
  double mpi() const { return comm - pack - unpack; }
};

inline StepTimers& operator+=(StepTimers& a, const StepTimers& b) {
  a.loop += b.loop, a.compute += b.compute, a.diag += b.diag, a.comm += b.comm;
  a.pack += b.pack, a.unpack += b.unpack;
  a.post += b.post, a.wait += b.wait, a.excluded += b.excluded;
  for (int d = 0; d < 3; ++d) {
    a.dir[d] += b.dir[d];
    a.pack_dir[d] += b.pack_dir[d];
    a.unpack_dir[d] += b.unpack_dir[d];
  }
  return a;
}

// Adds the seconds between construction and destruction to one timer, or two
// (a total and its share, e.g. pack and pack in x).
class Timed {
 public:
  explicit Timed(double& sink, double* also = nullptr) : sink_(sink), also_(also), start_(MPI_Wtime()) {}
  ~Timed() {
    const double dt = MPI_Wtime() - start_;
    sink_ += dt;
    if (also_) *also_ += dt;
  }
  Timed(const Timed&) = delete;
  Timed& operator=(const Timed&) = delete;

 private:
  double& sink_;
  double* also_;
  double start_;
};

// Time spent in its scope is work a strategy must do but does not measure
// (mock's untimed exchange, inside its wait): it is taken back out of the
// enclosing comm and wait timers and recorded as excluded, which the loop
// time leaves out.
class Untimed {
 public:
  explicit Untimed(StepTimers& t) : t_(t), start_(MPI_Wtime()) {}
  ~Untimed() {
    const double dt = MPI_Wtime() - start_;
    t_.comm -= dt;
    t_.wait -= dt;
    t_.excluded += dt;
  }
  Untimed(const Untimed&) = delete;
  Untimed& operator=(const Untimed&) = delete;

 private:
  StepTimers& t_;
  double start_;
};

}  // namespace checkmpi
