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

// The fields of a rank, one array each. Kernels take the ones they only
// read the same way: the names say which.
template <class Real>
using FieldPtrs = std::vector<Real*>;
// One box per field.
using Boxes = std::vector<Box>;

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
// `step` cells along `axis` already shifted in place), as boxes that each
// hold whole stretches of the lines along `axis`: slabs across the other two
// directions first (whole lines), then, within done's cross-section, the
// stretch upstream of it. `done` must reach the interior's downstream end
// along `axis` (the cells beyond it would read its cells after they
// changed); std::logic_error otherwise.
inline std::vector<Box> in_place_shell_boxes(const Grid& g, const Box& done, int axis, int step) {
  const bool reverse = step < 0;
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

enum class InPlaceKernel { Chosen, Lines, Sweep };
inline const char* in_place_kernel_name(InPlaceKernel k) {
  return k == InPlaceKernel::Lines ? "lines" : k == InPlaceKernel::Sweep ? "sweep" : "chosen";
}

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
  // The block `p` of the fields in `which`, into buf: field f's block goes
  // to buf + f * p.count() (a message holds the fields one after another; a
  // partial range fills only its sections).
  virtual void pack(const Grid& g, const FieldPtrs<Real>& fields, const Plane& p, Real* buf, int queue,
                    FieldRange which = {}) = 0;
  virtual void unpack(const Grid& g, const Real* buf, const Plane& p, const FieldPtrs<Real>& fields, int queue,
                      FieldRange which = {}) = 0;
  // Block `to` of dst takes block `from` of src (same shape), every field.
  virtual void copy_plane(const Grid& g, const FieldPtrs<Real>& dst, const Plane& to, const FieldPtrs<Real>& src,
                          const Plane& from, int queue) = 0;
  // dst = src over `box`, every field.
  virtual void copy_box(const Grid& g, const FieldPtrs<Real>& dst, const FieldPtrs<Real>& src, const Box& box,
                        int queue) = 0;
  // The motion of one step, in one pass: for each field f and every cell c
  // of boxes[f], dst_f(c) = src_f(c - m.v[f]) (CheckMPI's fields: field1
  // from i-1, field2 from j-1, field3 from k-1; i+1, j+1, k+1 in reverse).
  // dst and src differ. Interior cells of dst outside the boxes keep their
  // values; halo cells of dst may be overwritten (the next exchange
  // refreshes them before anything reads them), which lets a backend copy
  // long contiguous runs.
  virtual void shift(const Grid& g, const FieldPtrs<Real>& dst, const FieldPtrs<Real>& src, const Boxes& boxes,
                     const Motion& m, int queue) = 0;
  void shift(const Grid& g, const FieldPtrs<Real>& dst, const FieldPtrs<Real>& src, const Box& box,
             const Motion& m, int queue) {
    shift(g, dst, src, Boxes(dst.size(), box), m, queue);
  }
  // The same over every interior cell of field f outside inner[f] (what an
  // overlapped step does once the halos are in, after the cells of inner[f]
  // were updated while messages flew: step10's shell, step8's layers next
  // to the halos; an empty box: the whole interior), with the same licence
  // on dst's halo cells. By default one shift per shell box.
  virtual void shift_shell(const Grid& g, const FieldPtrs<Real>& dst, const FieldPtrs<Real>& src,
                           const Boxes& inner, const Motion& m, int queue) {
    std::vector<std::vector<Box>> shells(inner.size());
    std::size_t most = 0;
    for (std::size_t f = 0; f < inner.size(); ++f) most = std::max(most, (shells[f] = shell_boxes(g, inner[f])).size());
    for (std::size_t i = 0; i < most; ++i) {
      Boxes boxes(inner.size());  // empty where a field has fewer
      for (std::size_t f = 0; f < inner.size(); ++f)
        if (i < shells[f].size()) boxes[f] = shells[f][i];
      shift(g, dst, src, boxes, m, queue);
    }
  }
  void shift_shell(const Grid& g, const FieldPtrs<Real>& dst, const FieldPtrs<Real>& src, const Box& inner,
                   const Motion& m, int queue) {
    shift_shell(g, dst, src, Boxes(dst.size(), inner), m, queue);
  }
  // The motion in place, on host memory only (a GPU's threads cannot keep
  // the order it needs; the cuda backend throws std::logic_error): for each
  // field f, every cell of boxes[f] takes the value its upstream cell had
  // before the call, each field swept against its velocity. Interior cells
  // outside the boxes keep their values; halo cells may be overwritten, as
  // with shift.
  virtual void shift_in_place(const Grid& g, const FieldPtrs<Real>& f, const Boxes& boxes, const Motion& m,
                              int queue) {
    (void)g, (void)f, (void)boxes, (void)m, (void)queue;
    throw std::logic_error(describe() + ": no in-place shift on this backend");
  }
  // Which in-place kernel a field moving along one axis takes (the compute
  // probe times each; strategies keep Chosen). Lines: each field by its
  // lines along the motion, threads sharing out the other axes. Sweep: the
  // box in memory order against the velocity, shared out by cells. Chosen:
  // the backend's pick per box (the host's: its shift_in_place). False
  // where the backend has no in-place kernels.
  virtual bool use_in_place_kernel(InPlaceKernel k) {
    (void)k;
    return false;
  }
  // After done[f] was shifted in place, every other interior cell of field
  // f. done[f] must be closed downstream: with a cell, the interior cells its
  // value moves to, else they would read it after it changed (an empty box:
  // the whole interior).
  virtual void shift_shell_in_place(const Grid& g, const FieldPtrs<Real>& f, const Boxes& done, const Motion& m,
                                    int queue) {
    (void)g, (void)f, (void)done, (void)m, (void)queue;
    throw std::logic_error(describe() + ": no in-place shift on this backend");
  }
  virtual void wait(int queue) = 0;
  void wait_all() {
    for (int q = 0; q < kQueues; ++q) wait(q);
  }
};

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
