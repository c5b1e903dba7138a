// Shared halo-exchange plumbing: which plane goes where, how a plane is laid
// out in memory, packing and unpacking, and the timers strategies fill in.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <vector>

#include "grid/decomposition.hpp"

namespace checkmpi {

template <class Real> MPI_Datatype mpi_type();
template <> inline MPI_Datatype mpi_type<float>() { return MPI_FLOAT; }
template <> inline MPI_Datatype mpi_type<double>() { return MPI_DOUBLE; }

// Direction d, sign s. Each step every rank exchanges both signs of every
// direction, like CheckMPI:
//   Up   (s=0): send interior plane N   to the neighbour above, receive halo 0   from below;
//   Down (s=1): send interior plane 1   to the neighbour below, receive halo N+1 from above.
// Forward propagation reads halo 0, reverse reads halo N+1; both are refreshed.
enum Sign { Up = 0, Down = 1 };

inline int send_index(const Grid& g, int dir, int sign) { return sign == Up ? g.interior()[dir] : 1; }
inline int recv_index(const Grid& g, int dir, int sign) { return sign == Up ? 0 : g.interior()[dir] + 1; }
inline int send_peer(const Decomposition& d, int dir, int sign) { return d.neighbour[dir][sign == Up ? 1 : 0]; }
inline int recv_peer(const Decomposition& d, int dir, int sign) { return d.neighbour[dir][sign == Up ? 0 : 1]; }

// Distinct tag per (field, direction, sign); field = 3 for a message that
// carries all three fields.
inline int halo_tag(int field, int dir, int sign) { return 1 + field + 4 * (2 * dir + sign); }

// A whole plane normal to `dir` (halo rows and columns included) as rows x cols
// with element strides. x: strided points, y: rows of l+2, z: contiguous.
struct Plane {
  std::size_t offset = 0, rows = 0, cols = 0, row_stride = 0, col_stride = 0;
  std::size_t count() const { return rows * cols; }
};

inline Plane plane(const Grid& g, int dir, int index) {
  const auto e = g.extent();
  const auto st = g.stride();
  // The two directions spanning the plane, the faster one as columns.
  const int c = dir == 0 ? 1 : 0;
  const int r = dir == 2 ? 1 : 2;
  return Plane{std::size_t(index) * st[dir], e[r], e[c], st[r], st[c]};
}

// Largest plane of a direction, in elements (the message size of one field).
inline std::size_t plane_count(const Grid& g, int dir) { return plane(g, dir, 0).count(); }

// One row of a plane: n elements `stride` apart to or from a contiguous run.
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
  for (std::size_t r = 0; r < p.rows; ++r)
    gather_row(field + p.offset + r * p.row_stride, p.col_stride, p.cols, buf + r * p.cols);
}

template <class Real>
void unpack_plane(const Real* buf, const Plane& p, Real* field) {
  for (std::size_t r = 0; r < p.rows; ++r)
    scatter_row(buf + r * p.cols, p.cols, field + p.offset + r * p.row_stride, p.col_stride);
}

// The committed MPI datatype of one plane normal to `dir` (CheckMPI's yzplane,
// xzplane, xyplane). The caller frees it.
MPI_Datatype make_plane_datatype(const Grid& g, int dir, MPI_Datatype real);

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
