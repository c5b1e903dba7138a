// The kernel API: where the fields live and the data-parallel kernels that
// pack, unpack, copy and shift them. Strategies from step3 on are written
// against this interface only, so the same strategy code runs on the host
// (OpenMP) and on a GPU (CUDA).
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "grid/config.hpp"
#include "grid/decomposition.hpp"
#include "grid/planes.hpp"

namespace checkmpi {

template <class Real>
using FieldPtrs = std::array<Real*, 3>;

// A box of cells, bounds inclusive, in the 0..l+1 x 0..m+1 x 0..n+1 index
// space of Grid.
struct Box {
  std::array<int, 3> lo{1, 1, 1}, hi{0, 0, 0};
  bool empty() const { return hi[0] < lo[0] || hi[1] < lo[1] || hi[2] < lo[2]; }
  std::size_t cells() const {
    if (empty()) return 0;
    return std::size_t(hi[0] - lo[0] + 1) * std::size_t(hi[1] - lo[1] + 1) * std::size_t(hi[2] - lo[2] + 1);
  }
};

// Which fields a kernel works on: `count` fields from `first`.
struct FieldRange {
  int first = 0, count = 3;
};

inline Box interior_box(const Grid& g) { return Box{{1, 1, 1}, {g.l, g.m, g.n}}; }
inline Box whole_box(const Grid& g) { return Box{{0, 0, 0}, {g.l + 1, g.m + 1, g.n + 1}}; }

// The slabs of `core` below and above `inner` in direction d, into `out`
// (the empty ones left out); then `core` narrowed to `inner` in d.
inline void peel_slabs(Box& core, const Box& inner, int d, std::vector<Box>& out) {
  Box below = core, above = core;
  below.hi[d] = inner.lo[d] - 1;
  above.lo[d] = inner.hi[d] + 1;
  for (const Box& b : {below, above})
    if (!b.empty()) out.push_back(b);
  core.lo[d] = inner.lo[d];
  core.hi[d] = inner.hi[d];
}

// The interior minus `inner`, as at most six disjoint boxes: slabs below and
// above in z (whole planes), then in y within inner's z range (whole rows),
// then in x within both.
inline std::vector<Box> shell_boxes(const Grid& g, const Box& inner) {
  const Box all = interior_box(g);
  if (inner.empty()) return {all};
  std::vector<Box> out;
  Box core = all;  // narrowed to inner one direction at a time
  for (int d = 2; d >= 0; --d) peel_slabs(core, inner, d, out);
  return out;
}

// For the in-place shift: the interior minus `done` (cells of a field moving
// along `axis` already shifted in place), as boxes that each hold whole
// stretches of the lines along `axis`: slabs across the other two directions
// first (whole lines), then, within done's cross-section, the stretch
// upstream of it. `done` must reach the interior's downstream end along
// `axis` (the cells beyond it would read its cells after they changed);
// std::logic_error otherwise.
inline std::vector<Box> in_place_shell_boxes(const Grid& g, const Box& done, int axis, bool reverse) {
  const Box all = interior_box(g);
  if (done.empty()) return {all};
  std::vector<Box> out;
  Box core = all;  // narrowed to done one direction at a time
  for (int d = 2; d >= 0; --d)
    if (d != axis) peel_slabs(core, done, d, out);
  Box upstream = core, downstream = core;
  if (reverse) {
    upstream.lo[axis] = done.hi[axis] + 1;
    downstream.hi[axis] = done.lo[axis] - 1;
  } else {
    upstream.hi[axis] = done.lo[axis] - 1;
    downstream.lo[axis] = done.hi[axis] + 1;
  }
  if (!downstream.empty()) throw std::logic_error("in-place shell: the done box stops short of the downstream end");
  if (!upstream.empty()) out.push_back(upstream);
  return out;
}

// Streams of work. Kernels on one queue run in order; kernels on different
// queues may run concurrently. The host backend runs every kernel at once,
// in the caller's thread team, so its queues are only names.
enum Queue : int { kComputeQueue = 0, kQueueX = 1, kQueueY = 2, kQueueZ = 3, kQueues = 4 };
inline int direction_queue(int dir) { return kQueueX + dir; }

enum class BackendKind { Host, Cuda };
inline const char* backend_name(BackendKind k) { return k == BackendKind::Host ? "host" : "cuda"; }

// What --compute auto runs: in place on the host; one pass into a second
// buffer on a GPU, whose threads cannot keep an in-place sweep's order.
inline Compute default_compute(BackendKind k) { return k == BackendKind::Host ? Compute::InPlace : Compute::OnePass; }

template <class Real>
class Backend {
 public:
  virtual ~Backend() = default;
  virtual BackendKind kind() const = 0;
  // One line for the header: "host, 2 OpenMP threads", "cuda, NVIDIA H200".
  virtual std::string describe() const = 0;

  // Backend memory, zeroed; on the host first touched by the threads that
  // will work on it. The run loop copies the fields to the host to check them.
  virtual Real* allocate(std::size_t n) = 0;
  virtual void release(Real* p) = 0;
  // Host memory for messages MPI cannot take from backend memory (pinned on
  // a GPU so the copies are DMA transfers).
  virtual Real* allocate_host(std::size_t n) = 0;
  virtual void release_host(Real* p) = 0;
  // Whether MPI can be handed backend memory (always on the host; GPU-aware
  // MPI on a GPU).
  virtual bool mpi_takes_backend_memory() const = 0;

  // Blocking whole-array transfers between the host and backend memory.
  virtual void upload(Real* dst, const Real* src, std::size_t n) = 0;
  virtual void download(Real* dst, const Real* src, std::size_t n) = 0;

  // Asynchronous kernels; `wait(queue)` returns once everything enqueued on
  // `queue` has finished.
  // Copies n elements; either side may be backend or host-from-allocate_host memory.
  virtual void copy(Real* dst, const Real* src, std::size_t n, int queue) = 0;
  // The plane `p` of the fields in `which`, into buf: field f's plane goes to
  // buf + f * p.count() (a message holds the three fields one after another;
  // a partial range fills only its sections).
  virtual void pack(const Grid& g, FieldPtrs<const Real> fields, const Plane& p, Real* buf, int queue,
                    FieldRange which = {}) = 0;
  virtual void unpack(const Grid& g, const Real* buf, const Plane& p, FieldPtrs<Real> fields, int queue,
                      FieldRange which = {}) = 0;
  // Plane `to` of dst takes plane `from` of src (same shape), every field.
  virtual void copy_plane(const Grid& g, FieldPtrs<Real> dst, const Plane& to, FieldPtrs<const Real> src,
                          const Plane& from, int queue) = 0;
  // dst = src over `box`, every field.
  virtual void copy_box(const Grid& g, FieldPtrs<Real> dst, FieldPtrs<const Real> src, const Box& box,
                        int queue) = 0;
  // The one-cell shift, in one pass: for each field f and every cell of
  // boxes[f], dst_f(c) = src_f(upstream c): field1 from i-1, field2 from j-1,
  // field3 from k-1 (i+1, j+1, k+1 in reverse). dst and src differ. Interior
  // cells of dst outside the boxes keep their values; halo cells of dst may
  // be overwritten (the next exchange refreshes them before anything reads
  // them), which lets a backend copy long contiguous runs.
  virtual void shift(const Grid& g, FieldPtrs<Real> dst, FieldPtrs<const Real> src, const std::array<Box, 3>& boxes,
                     bool reverse, int queue) = 0;
  void shift(const Grid& g, FieldPtrs<Real> dst, FieldPtrs<const Real> src, const Box& box, bool reverse,
             int queue) {
    shift(g, dst, src, {box, box, box}, reverse, queue);
  }
  // The same shift over every interior cell of field f outside inner[f]
  // (what an overlapped step does once the halos are in, after the cells of
  // inner[f] were updated while messages flew: step10's shell, step8's
  // planes next to the halos; an empty box: the whole interior), with the
  // same licence on dst's halo cells. By default one shift per shell box.
  virtual void shift_shell(const Grid& g, FieldPtrs<Real> dst, FieldPtrs<const Real> src,
                           const std::array<Box, 3>& inner, bool reverse, int queue) {
    std::array<std::vector<Box>, 3> shells;
    std::size_t most = 0;
    for (int f = 0; f < 3; ++f) most = std::max(most, (shells[f] = shell_boxes(g, inner[f])).size());
    for (std::size_t i = 0; i < most; ++i) {
      std::array<Box, 3> boxes{};  // empty where a field has fewer
      for (int f = 0; f < 3; ++f)
        if (i < shells[f].size()) boxes[f] = shells[f][i];
      shift(g, dst, src, boxes, reverse, queue);
    }
  }
  void shift_shell(const Grid& g, FieldPtrs<Real> dst, FieldPtrs<const Real> src, const Box& inner, bool reverse,
                   int queue) {
    shift_shell(g, dst, src, {inner, inner, inner}, reverse, queue);
  }
  // The shift in place, on host memory only (a GPU's threads cannot keep
  // the order it needs; the cuda backend throws std::logic_error): for each
  // field f, every cell of boxes[f] takes the value its upstream cell had
  // before the call, each field swept against its direction. Interior cells
  // outside the boxes keep their values; halo cells may be overwritten, as
  // with shift.
  virtual void shift_in_place(const Grid& g, FieldPtrs<Real> f, const std::array<Box, 3>& boxes, bool reverse,
                              int queue) {
    (void)g, (void)f, (void)boxes, (void)reverse, (void)queue;
    throw std::logic_error(describe() + ": no in-place shift on this backend");
  }
  // After done[f] was shifted in place, every other interior cell of field f
  // (in_place_shell_boxes: done[f] must reach the downstream end; an empty
  // box: the whole interior). By default one shift_in_place per shell box.
  virtual void shift_shell_in_place(const Grid& g, FieldPtrs<Real> f, const std::array<Box, 3>& done, bool reverse,
                                    int queue) {
    std::array<std::vector<Box>, 3> shells;
    std::size_t most = 0;
    for (int k = 0; k < 3; ++k) most = std::max(most, (shells[k] = in_place_shell_boxes(g, done[k], k, reverse)).size());
    for (std::size_t i = 0; i < most; ++i) {
      std::array<Box, 3> boxes{};
      for (int k = 0; k < 3; ++k)
        if (i < shells[k].size()) boxes[k] = shells[k][i];
      shift_in_place(g, f, boxes, reverse, queue);
    }
  }
  virtual void wait(int queue) = 0;
  void wait_all() {
    for (int q = 0; q < kQueues; ++q) wait(q);
  }
};

template <class Real>
FieldPtrs<const Real> as_const(FieldPtrs<Real> f) {
  return {f[0], f[1], f[2]};
}

// The host backend: OpenMP-parallel loops over host memory.
template <class Real>
std::unique_ptr<Backend<Real>> make_host_backend();

// Threads the host kernels use. Without OMP_NUM_THREADS in the environment
// this is one per rank: ranks already fill the cores, and oversubscribing
// them with threads would distort the timings.
int host_threads();
void set_default_host_threads();
// UsageError when OMP_NUM_THREADS asks for more threads than the node can
// run: above kThreadsPerCpu per online CPU, or above RLIMIT_NPROC.
constexpr long long kThreadsPerCpu = 4;
void check_host_threads();

}  // namespace checkmpi
