// The CUDA backend's kernels against the host backend, bit for bit: every
// kernel, single and double, forward and reverse, whole and partial boxes, on
// grids from one cell to rows longer than a thread block. Built only with
// CUDA (ctest label gpu); without a visible device every test is skipped
// with the reason, which ctest reports as skipped.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <numeric>
#include <vector>

#include "backends/backend.hpp"
#include "backends/cuda.hpp"
#include "grid/fields.hpp"
#include "reference_shift.hpp"
#include "strategies/compute.hpp"

using namespace checkmpi;

namespace {

const Grid kGrids[] = {{5, 4, 3}, {1, 1, 1}, {17, 9, 6}, {130, 3, 2}};

// Every cell a distinct value, plus a -0.0 and a NaN, so a misplaced element,
// a lost sign or an altered payload is seen by the bitwise comparison.
template <class Real>
Fields<Real> numbered(const Grid& g, Real base, const Motion& m = checkmpi_motion(false)) {
  Fields<Real> fs(g, m);
  for (std::size_t f = 0; f < fs.f.size(); ++f) std::iota(fs.f[f].begin(), fs.f[f].end(), base + Real(f) * Real(100000));
  fs.f[0][g.index(1, 1, 1)] = -Real(0);
  fs.f.back()[g.cells() - 1] = std::nan("7");
  return fs;
}

// The fields' arrays, for kernels that only read them.
template <class Real>
FieldPtrs<Real> pointers(const Fields<Real>& fs) {
  FieldPtrs<Real> p;
  for (const auto& v : fs.f) p.push_back(const_cast<Real*>(v.data()));
  return p;
}

template <class Real>
bool same_bits(const std::vector<Real>& a, const std::vector<Real>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(Real)) == 0;
}

// Boxes the strategies use (interior, whole) and partial ones, including a
// single cell and boxes touching the halo (copy only: a shift box must stay
// in the interior, whose upstream cell exists).
std::vector<Box> copy_boxes(const Grid& g) {
  return {whole_box(g), interior_box(g), Box{{0, 0, 0}, {0, g.m + 1, g.n + 1}},
          Box{{1, 1, g.n}, {g.l, g.m, g.n}}, Box{{g.l, 0, 1}, {g.l + 1, 1, 1}}};
}
std::vector<Box> shift_boxes(const Grid& g) {
  std::vector<Box> boxes{interior_box(g), Box{{1, 1, 1}, {1, 1, 1}}, Box{{g.l, g.m, g.n}, {g.l, g.m, g.n}},
                         Box{{1, (g.m + 1) / 2, 1}, {g.l, g.m, (g.n + 1) / 2}}};
  const Box inner = inner_box(g, 1);
  boxes.push_back(inner);
  for (const Box& b : shell_boxes(g, inner)) boxes.push_back(b);
  return boxes;
}

// The fields in one backend's memory, released with it.
template <class Real>
struct Resident {
  Backend<Real>& backend;
  Grid grid;
  Motion motion;
  FieldPtrs<Real> p;
  Resident(Backend<Real>& b, const Fields<Real>& from) : backend(b), grid(from.grid), motion(from.motion) {
    for (int f = 0; f < from.count(); ++f) {
      p.push_back(b.allocate(grid.cells()));
      b.upload(p.back(), from.data(f), grid.cells());
    }
  }
  ~Resident() {
    for (Real* q : p) backend.release(q);
  }
  Fields<Real> fetch() const {
    Fields<Real> out(grid, motion);
    for (int f = 0; f < out.count(); ++f) backend.download(out.data(f), p[std::size_t(f)], grid.cells());
    return out;
  }
};

template <class Real>
class CudaKernels : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (cuda_device_count(&why) == 0) GTEST_SKIP() << "no CUDA device visible: " << why;
    gpu = make_cuda_backend<Real>(0, false);
  }

  // The same kernel on both backends, fields starting equal; the results
  // must be identical to the bit, halos included (only the interior for a
  // shift, which may overwrite halo cells).
  template <class Run>
  void expect_same_fields(const Grid& g, Run run, const std::string& what, bool interior_only = false,
                          const Motion& m = checkmpi_motion(false)) {
    Fields<Real> src = numbered<Real>(g, Real(1), m), host_dst = numbered<Real>(g, Real(-500000), m);
    Resident<Real> dsrc(*gpu, src), ddst(*gpu, host_dst);
    run(*host, host_dst.pointers(), src.pointers());
    run(*gpu, ddst.p, dsrc.p);
    host->wait_all();
    gpu->wait_all();
    const Fields<Real> got = ddst.fetch();
    for (std::size_t f = 0; f < got.f.size(); ++f) {
      if (interior_only) {
        for (int k = 1; k <= g.n; ++k)
          for (int j = 1; j <= g.m; ++j)
            for (int i = 1; i <= g.l; ++i) {
              const Real a = got.at(int(f), i, j, k), b = host_dst.at(int(f), i, j, k);
              ASSERT_EQ(std::memcmp(&a, &b, sizeof(Real)), 0)
                  << what << ", field " << f + 1 << " at " << i << "," << j << "," << k;
            }
      } else {
        EXPECT_TRUE(same_bits(got.f[f], host_dst.f[f]))
            << what << ", field " << f + 1 << ", grid " << g.l << "x" << g.m << "x" << g.n;
      }
    }
  }

  std::unique_ptr<Backend<Real>> host = make_host_backend<Real>();
  std::unique_ptr<Backend<Real>> gpu;
};

using Reals = ::testing::Types<float, double>;
TYPED_TEST_SUITE(CudaKernels, Reals);

TYPED_TEST(CudaKernels, DescribesItself) {
  EXPECT_EQ(this->gpu->kind(), BackendKind::Cuda);
  EXPECT_FALSE(this->gpu->mpi_takes_backend_memory());
  EXPECT_TRUE(make_cuda_backend<TypeParam>(0, true)->mpi_takes_backend_memory());
  EXPECT_EQ(this->gpu->describe().rfind("cuda, ", 0), 0u) << this->gpu->describe();
  EXPECT_GT(cuda_free_memory(0), 0u);
}

TYPED_TEST(CudaKernels, PackEveryPlaneOnEveryQueue) {
  using Real = TypeParam;
  for (const Grid& g : kGrids) {
    const Fields<Real> fs = numbered<Real>(g, Real(1));
    Resident<Real> d(*this->gpu, fs);
    for (int dir = 0; dir < 3; ++dir)
      for (int index : {0, 1, g.interior()[dir], g.interior()[dir] + 1}) {
        const Plane p = plane(g, dir, index);
        std::vector<Real> want(3 * p.count()), got(3 * p.count());
        this->host->pack(g, pointers(fs), p, want.data(), kQueueX);
        Real* buf = this->gpu->allocate(want.size());
        const int queue = (dir + index) % kQueues;
        this->gpu->pack(g, d.p, p, buf, queue);
        this->gpu->wait(queue);
        this->gpu->download(got.data(), buf, got.size());
        this->gpu->release(buf);
        EXPECT_TRUE(same_bits(got, want)) << "dir " << dir << " index " << index << " grid " << g.l;
      }
  }
}

TYPED_TEST(CudaKernels, UnpackEveryPlane) {
  using Real = TypeParam;
  for (const Grid& g : kGrids)
    for (int dir = 0; dir < 3; ++dir)
      for (int index : {0, g.interior()[dir] + 1}) {
        const Plane p = plane(g, dir, index);
        std::vector<Real> buf(3 * p.count());
        std::iota(buf.begin(), buf.end(), Real(-1000));
        this->expect_same_fields(
            g,
            [&](Backend<Real>& b, const FieldPtrs<Real>& dst, const FieldPtrs<Real>&) {
              // The buffer in that backend's memory, as the strategies have it.
              Real* at = b.allocate(buf.size());
              b.upload(at, buf.data(), buf.size());
              b.unpack(g, at, p, dst, kQueueZ);
              b.wait(kQueueZ);
              b.release(at);
            },
            "unpack dir " + std::to_string(dir) + " index " + std::to_string(index));
      }
}

TYPED_TEST(CudaKernels, CopyBoxWholeAndPartial) {
  using Real = TypeParam;
  for (const Grid& g : kGrids)
    for (const Box& box : copy_boxes(g))
      this->expect_same_fields(
          g,
          [&](Backend<Real>& b, const FieldPtrs<Real>& dst, const FieldPtrs<Real>& src) {
            b.copy_box(g, dst, src, box, kComputeQueue);
          },
          "copy_box");
}

TYPED_TEST(CudaKernels, ShiftForwardAndReverse) {
  using Real = TypeParam;
  for (const Grid& g : kGrids)
    for (bool reverse : {false, true})
      for (const Box& box : shift_boxes(g))
        this->expect_same_fields(
            g,
            [&](Backend<Real>& b, const FieldPtrs<Real>& dst, const FieldPtrs<Real>& src) {
              b.shift(g, dst, src, box, checkmpi_motion(reverse), kQueueY);
            },
            std::string("shift ") + (reverse ? "reverse" : "forward") + " box lo " + std::to_string(box.lo[0]) +
                "," + std::to_string(box.lo[1]) + "," + std::to_string(box.lo[2]),
            true);
}

// step8/step9's one-pass overlap: a different box per field (the cells that
// need no halo), then the shell around them: the plane next to each halo.
TYPED_TEST(CudaKernels, ShiftPerFieldBoxes) {
  using Real = TypeParam;
  for (const Grid& g : kGrids)
    for (bool reverse : {false, true})
      this->expect_same_fields(
          g,
          [&](Backend<Real>& b, const FieldPtrs<Real>& dst, const FieldPtrs<Real>& src) {
            b.shift(g, dst, src, halo_free_boxes(g, checkmpi_motion(reverse)), checkmpi_motion(reverse), kComputeQueue);
            b.shift_shell(g, dst, src, halo_free_boxes(g, checkmpi_motion(reverse)), checkmpi_motion(reverse), kComputeQueue);
          },
          "halo-free boxes, then the shell around them", true);
}

// Planes from one set of fields into another (shared-memory halos), and
// packing one field's section of a message (partitioned).
TYPED_TEST(CudaKernels, CopyPlaneAndPartialPack) {
  using Real = TypeParam;
  for (const Grid& g : kGrids)
    for (int dir = 0; dir < 3; ++dir) {
      const int n = g.interior()[dir];
      this->expect_same_fields(
          g,
          [&](Backend<Real>& b, const FieldPtrs<Real>& dst, const FieldPtrs<Real>& src) {
            b.copy_plane(g, dst, plane(g, dir, 0), src, plane(g, dir, n), kQueueX);
            b.copy_plane(g, dst, plane(g, dir, n + 1), src, plane(g, dir, 1), kQueueX);
          },
          "copy_plane dir " + std::to_string(dir));
      this->expect_same_fields(
          g,
          [&](Backend<Real>& b, const FieldPtrs<Real>& dst, const FieldPtrs<Real>& src) {
            const Plane p = plane(g, dir, n);
            Real* buf = b.allocate(3 * p.count());
            for (int f = 0; f < 3; ++f) b.pack(g, src, p, buf, kQueueX, FieldRange{f, 1});
            b.unpack(g, buf, plane(g, dir, 0), dst, kQueueX, FieldRange{1, 2});
            b.wait(kQueueX);
            b.release(buf);
          },
          "partial pack/unpack dir " + std::to_string(dir));
    }
}

// step10's update: the inner boxes and then the shell, queued back to back
// on one queue and waited for once, as the strategy does. The same inner box
// for every field, and a different one per field, as an update cut short by
// the messages' arrival leaves them: one whole, one cut within its planes,
// one not started (empty).
TYPED_TEST(CudaKernels, InnerThenShellOnOneQueue) {
  using Real = TypeParam;
  for (const Grid& g : kGrids) {
    const Box inner = inner_box(g, 2), thin = inner_box(g, 1);
    Box cut = thin;
    cut.hi[2] = (thin.lo[2] + thin.hi[2]) / 2;
    for (const Boxes& done : {Boxes{inner, inner, inner}, Boxes{thin, cut, Box{}}})
      for (bool reverse : {false, true})
        this->expect_same_fields(
            g,
            [&](Backend<Real>& b, const FieldPtrs<Real>& dst, const FieldPtrs<Real>& src) {
              b.shift(g, dst, src, done, checkmpi_motion(reverse), kComputeQueue);
              b.shift_shell(g, dst, src, done, checkmpi_motion(reverse), kComputeQueue);
            },
            "inner + shell", true);
  }
}

// Issue 34's blocks and motions: the layers of a wide halo's faces, edges
// and corners packed and unpacked, and fields moving along a D3Q27
// lattice's velocities two cells a step, in one pass, in groups of fields.
TYPED_TEST(CudaKernels, WideHalosAndLatticeVelocities) {
  using Real = TypeParam;
  const Motion m(Stencil{2, 27, 26}, false);
  for (Grid g : {Grid{5, 4, 3, 2}, Grid{17, 9, 6, 2}}) {
    const Fields<Real> fs = numbered<Real>(g, Real(1), m);
    Resident<Real> d(*this->gpu, fs);
    for (const Offset& o : neighbour_offsets(26)) {
      const Plane p = region(g, region_box(g, o, false, order_of(o) == 1), o[2] != 0 ? 2 : o[1] != 0 ? 1 : 0);
      std::vector<Real> want(27 * p.count()), got(want.size());
      this->host->pack(g, pointers(fs), p, want.data(), kQueueX);
      Real* buf = this->gpu->allocate(want.size());
      this->gpu->pack(g, d.p, p, buf, kQueueY);
      this->gpu->wait(kQueueY);
      this->gpu->download(got.data(), buf, got.size());
      this->gpu->release(buf);
      EXPECT_TRUE(same_bits(got, want)) << offset_name(o);
      const Plane to = region(g, region_box(g, o, true, order_of(o) == 1), o[2] != 0 ? 2 : o[1] != 0 ? 1 : 0);
      this->expect_same_fields(
          g,
          [&](Backend<Real>& b, const FieldPtrs<Real>& dst, const FieldPtrs<Real>& src) {
            b.copy_plane(g, dst, to, src, p, kQueueZ);
          },
          "copy_plane " + offset_name(o), false, m);
    }
    this->expect_same_fields(
        g,
        [&](Backend<Real>& b, const FieldPtrs<Real>& dst, const FieldPtrs<Real>& src) {
          b.shift(g, dst, src, halo_free_boxes(g, m), m, kComputeQueue);
          b.shift_shell(g, dst, src, halo_free_boxes(g, m), m, kComputeQueue);
        },
        "d3q27 halo-free boxes, then the shell", true, m);
  }
}

// copy between every kind of memory the strategies use (device, pinned
// host), and the engine's staging pipeline: pack, then copy
// to pinned memory on the same queue, one wait.
TYPED_TEST(CudaKernels, CopyAndStaging) {
  using Real = TypeParam;
  Backend<Real>& gpu = *this->gpu;
  std::vector<Real> a(100003), back(a.size());
  std::iota(a.begin(), a.end(), Real(0));
  Real* pinned = gpu.allocate_host(a.size());
  Real* dev1 = gpu.allocate(a.size());
  Real* dev2 = gpu.allocate(a.size());
  std::memcpy(pinned, a.data(), a.size() * sizeof(Real));
  gpu.copy(dev1, pinned, a.size(), kQueueX);  // host to device
  gpu.copy(dev2, dev1, a.size(), kQueueX);    // device to device, ordered after it
  gpu.wait(kQueueX);
  std::memset(pinned, 0, a.size() * sizeof(Real));
  gpu.copy(pinned, dev2, a.size(), kQueueZ);  // device to host
  gpu.wait(kQueueZ);
  EXPECT_EQ(std::memcmp(pinned, a.data(), a.size() * sizeof(Real)), 0);
  gpu.download(back.data(), dev2, back.size());
  EXPECT_TRUE(same_bits(back, a));

  const Grid g = kGrids[2];
  const Fields<Real> fs = numbered<Real>(g, Real(3));
  Resident<Real> d(gpu, fs);
  const Plane p = plane(g, 0, g.l);
  std::vector<Real> want(3 * p.count());
  this->host->pack(g, pointers(fs), p, want.data(), kQueueX);
  gpu.pack(g, d.p, p, dev1, kQueueY);
  gpu.copy(pinned, dev1, want.size(), kQueueY);
  gpu.wait(kQueueY);
  EXPECT_EQ(std::memcmp(pinned, want.data(), want.size() * sizeof(Real)), 0);
  gpu.release(dev1);
  gpu.release(dev2);
  gpu.release_host(pinned);
}

TYPED_TEST(CudaKernels, MemcpyProbeMeasuresSomething) {
  EXPECT_GT(cuda_memcpy_bandwidth(0, std::size_t(64) << 20), 0.0);
}

}  // namespace
