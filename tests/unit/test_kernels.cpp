// The host backend's kernels against plain reference loops, on one and two
// OpenMP threads (small grids, and one large enough for streaming stores),
// and the splits of the interior the overlapping computes use.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <numeric>
#include <string>

#include "backends/backend.hpp"
#include "backends/cuda.hpp"
#include "backends/plane_kernels.hpp"
#include "core/errors.hpp"
#include "grid/fields.hpp"
#include "host_kernel_testing.hpp"
#include "strategies/compute.hpp"

using namespace checkmpi;

namespace {

class HostKernels : public HostThreadsTest {
 protected:
  Grid g{5, 4, 3};
};

TEST_P(HostKernels, PackMatchesPackPlaneForEveryPlane) {
  Fields<float> fs = numbered(g, 1.0f);
  for (int dir = 0; dir < 3; ++dir)
    for (int index : {0, 1, g.interior()[dir], g.interior()[dir] + 1}) {
      const Plane p = plane(g, dir, index);
      std::vector<float> got(3 * p.count()), want(3 * p.count());
      backend->pack(g, fs.pointers(), p, got.data(), kQueueX);
      backend->wait(kQueueX);
      for (int f = 0; f < 3; ++f) pack_plane(fs.data(f), p, want.data() + f * p.count());
      EXPECT_EQ(got, want) << "dir " << dir << " index " << index;
    }
}

// Planes large enough for a team of threads (1 MiB to touch per thread:
// the x planes of 4x110x110, whose elements each take a cache line, the y
// planes of 420x4x420) pack and unpack as the small ones do.
TEST_P(HostKernels, LargePlanesPackAndUnpackExactly) {
  for (const Grid& big : {Grid{4, 110, 110}, Grid{420, 4, 420}})
    for (int dir = 0; dir < 2; ++dir) {
      Fields<float> fs = numbered(big, 1.0f);
      const Plane p = plane(big, dir, 1);
      std::vector<float> got(3 * p.count()), want(3 * p.count());
      backend->pack(big, fs.pointers(), p, got.data(), kQueueX);
      for (int f = 0; f < 3; ++f) pack_plane(fs.data(f), p, want.data() + f * p.count());
      EXPECT_EQ(got, want) << "dir " << dir;
      for (float& v : got) v = -v;
      const Plane halo = plane(big, dir, 0);
      backend->unpack(big, got.data(), halo, fs.pointers(), kQueueX);
      std::vector<float> back(3 * p.count());
      for (int f = 0; f < 3; ++f) pack_plane(fs.data(f), halo, back.data() + f * p.count());
      EXPECT_EQ(back, got) << "dir " << dir;
    }
}

TEST_P(HostKernels, UnpackWritesExactlyThePlane) {
  for (int dir = 0; dir < 3; ++dir) {
    Fields<float> fs = numbered(g, 1.0f);
    const Fields<float> before = fs;
    const Plane p = plane(g, dir, 0);
    std::vector<float> buf(3 * p.count());
    std::iota(buf.begin(), buf.end(), -1000.0f);
    backend->unpack(g, buf.data(), p, fs.pointers(), kQueueY);
    backend->wait(kQueueY);
    std::vector<float> back(3 * p.count());
    for (int f = 0; f < 3; ++f) pack_plane(fs.data(f), p, back.data() + f * p.count());
    EXPECT_EQ(back, buf);
    // Outside the plane nothing changed.
    for (int f = 0; f < 3; ++f)
      for (int k = 0; k <= g.n + 1; ++k)
        for (int j = 0; j <= g.m + 1; ++j)
          for (int i = 0; i <= g.l + 1; ++i) {
            const int at[3] = {i, j, k};
            if (at[dir] != 0) {
              ASSERT_EQ(fs.at(f, i, j, k), before.at(f, i, j, k));
            }
          }
  }
}

TEST_P(HostKernels, ShiftOverTheInteriorEqualsTheInPlaceShift) {
  for (bool reverse : {false, true}) {
    Fields<float> src = numbered(g, 1.0f);
    Fields<float> dst(g);
    backend->shift(g, dst.pointers(), src.pointers(), interior_box(g), checkmpi_motion(reverse), kComputeQueue);
    backend->wait(kComputeQueue);
    expect_whole_shift(g, dst, src, reverse);
  }
}

// Over 4 MiB written: whole cache lines go out as streaming stores, the
// partial lines at the ends of every run as ordinary ones.
TEST_P(HostKernels, StreamingShiftOfALargeBlock) {
  const Grid big{131, 67, 45};  // 3 fields x 133 x 69 x 47 floats: about 5 MiB each way
  for (bool reverse : {false, true}) {
    Fields<float> src = numbered(big, 3.0f);
    Fields<float> dst(big);
    backend->shift(big, dst.pointers(), src.pointers(), interior_box(big), checkmpi_motion(reverse), kComputeQueue);
    expect_whole_shift(big, dst, src, reverse);
    // The overlapped form: halo-free cells, then the planes next to the halos.
    Fields<float> split(big);
    backend->shift(big, split.pointers(), src.pointers(), halo_free_boxes(big, checkmpi_motion(reverse)), checkmpi_motion(reverse),
                   kComputeQueue);
    backend->shift_shell(big, split.pointers(), src.pointers(), halo_free_boxes(big, checkmpi_motion(reverse)), checkmpi_motion(reverse),
                         kComputeQueue);
    expect_whole_shift(big, split, src, reverse);
  }
}

// A box that spans the interior width may be copied as one run across the
// halo cells between rows; interior cells outside the box never change.
TEST_P(HostKernels, ShiftKeepsInteriorCellsOutsideTheBox) {
  Fields<float> src = numbered(g, 1.0f);
  for (const Box& box : {Box{{1, 2, 1}, {g.l, g.m, g.n}}, Box{{1, 1, 2}, {g.l, g.m, 2}}, Box{{2, 1, 1}, {g.l, 2, 3}}})
    for (bool reverse : {false, true}) {
      Fields<float> dst = numbered(g, -5e5f);
      const Fields<float> before = dst;
      backend->shift(g, dst.pointers(), src.pointers(), box, checkmpi_motion(reverse), kComputeQueue);
      Fields<float> want = src;
      reference_shift(g, want.pointers(), reverse);
      for (int f = 0; f < 3; ++f)
        for (int k = 1; k <= g.n; ++k)
          for (int j = 1; j <= g.m; ++j)
            for (int i = 1; i <= g.l; ++i) {
              const bool inside = i >= box.lo[0] && i <= box.hi[0] && j >= box.lo[1] && j <= box.hi[1] &&
                                  k >= box.lo[2] && k <= box.hi[2];
              ASSERT_EQ(dst.at(f, i, j, k), inside ? want.at(f, i, j, k) : before.at(f, i, j, k))
                  << "field " << f + 1 << " at " << i << "," << j << "," << k;
            }
    }
}

// step10's two sweeps: the inner box, then everything around it (one run
// per pair of rows on the host) give the whole shift, in both directions,
// for thin and wide borders, on a small grid and one large enough for
// streaming stores; the shell alone leaves the inner cells as they were.
TEST_P(HostKernels, InnerThenShellIsTheWholeShift) {
  for (const Grid& grid : {g, Grid{7, 5, 6}, Grid{131, 67, 45}})
    for (long long border : {1, 2, 3, 10})
      for (bool reverse : {false, true}) {
        Fields<float> src = numbered(grid, 1.0f);
        Fields<float> dst = numbered(grid, -5e5f);
        const Fields<float> before = dst;
        const Box inner = inner_box(grid, border);
        backend->shift_shell(grid, dst.pointers(), src.pointers(), inner, checkmpi_motion(reverse), kComputeQueue);
        for (int f = 0; f < 3; ++f)
          for (int k = inner.lo[2]; k <= inner.hi[2]; ++k)
            for (int j = inner.lo[1]; j <= inner.hi[1]; ++j)
              for (int i = inner.lo[0]; i <= inner.hi[0]; ++i)
                ASSERT_EQ(dst.at(f, i, j, k), before.at(f, i, j, k)) << "border " << border;
        backend->shift(grid, dst.pointers(), src.pointers(), inner, checkmpi_motion(reverse), kComputeQueue);
        expect_whole_shift(grid, dst, src, reverse);
      }
}

TEST_P(HostKernels, PartialPackAndCopyPlane) {
  Fields<float> src = numbered(g, 1.0f);
  for (int dir = 0; dir < 3; ++dir) {
    const Plane p = plane(g, dir, g.interior()[dir]);
    std::vector<float> all(3 * p.count()), parts(3 * p.count(), -1.0f);
    backend->pack(g, src.pointers(), p, all.data(), kQueueX);
    for (int f = 2; f >= 0; --f)
      backend->pack(g, src.pointers(), p, parts.data(), kQueueX, FieldRange{f, 1});
    EXPECT_EQ(parts, all) << "dir " << dir;
    // A plane of one set of fields into the halo of another.
    Fields<float> dst = numbered(g, -5e5f);
    const Plane to = plane(g, dir, 0);
    backend->copy_plane(g, dst.pointers(), to, src.pointers(), p, kQueueX);
    std::vector<float> got(3 * p.count());
    for (int f = 0; f < 3; ++f) pack_plane(dst.data(f), to, got.data() + f * p.count());
    EXPECT_EQ(got, all) << "dir " << dir;
  }
}

// The plane kernels' bodies run as the CUDA backend runs them, a column per
// thread (here: one call per column, last column first, so that no order
// between threads is assumed), do what the host backend's rows do: the
// GPU's index math checked without a GPU.
TEST(PlaneKernelBodies, RunAColumnAtATimeAsOnTheGpu) {
  const Grid g{6, 5, 4};
  const Fields<float> src = numbered(g, 1.0f);
  for (int dir = 0; dir < 3; ++dir)
    for (int index : {0, 1, g.interior()[dir], g.interior()[dir] + 1}) {
      SCOPED_TRACE("dir " + std::to_string(dir) + " index " + std::to_string(index));
      const Plane p = plane(g, dir, index);
      std::vector<float> got(3 * p.count(), -1.0f), want(3 * p.count());
      for (std::size_t c = p.cols; c-- > 0;)
        for (std::size_t r = 0; r < p.rows; ++r)
          for (int f = 0; f < 3; ++f) pack_columns(src.data(f), p, got.data(), f, r, c, c + 1);
      for (int f = 0; f < 3; ++f) pack_plane(src.data(f), p, want.data() + f * p.count());
      EXPECT_EQ(got, want);

      Fields<float> dst = numbered(g, -5e5f);
      const Fields<float> before = dst;
      const Plane halo = plane(g, dir, 0);
      for (std::size_t c = halo.cols; c-- > 0;)
        for (std::size_t r = 0; r < halo.rows; ++r)
          for (int f = 0; f < 3; ++f) unpack_columns(want.data(), halo, dst.data(f), f, r, c, c + 1);
      std::vector<float> back(3 * halo.count());
      for (int f = 0; f < 3; ++f) pack_plane(dst.data(f), halo, back.data() + f * halo.count());
      EXPECT_EQ(back, want);
      for (int f = 0; f < 3; ++f)  // outside the halo plane nothing changed
        for (int k = 0; k <= g.n + 1; ++k)
          for (int j = 0; j <= g.m + 1; ++j)
            for (int i = 0; i <= g.l + 1; ++i)
              if (std::array<int, 3>{i, j, k}[std::size_t(dir)] != 0) {
                ASSERT_EQ(dst.at(f, i, j, k), before.at(f, i, j, k));
              }

      Fields<float> copied = numbered(g, -7e5f);
      for (std::size_t c = p.cols; c-- > 0;)
        for (std::size_t r = 0; r < p.rows; ++r)
          for (int f = 0; f < 3; ++f) copy_plane_columns(copied.data(f), halo, src.data(f), p, r, c, c + 1);
      for (int f = 0; f < 3; ++f) pack_plane(copied.data(f), halo, back.data() + f * halo.count());
      EXPECT_EQ(back, want);
    }
}

TEST_P(HostKernels, AllocateGivesZeroedMemory) {
  for (std::size_t n : {std::size_t(1), std::size_t(1000), std::size_t(3) << 20}) {
    float* p = backend->allocate(n);
    EXPECT_EQ(std::count(p, p + n, 0.0f), std::ptrdiff_t(n));
    backend->release(p);
  }
}

TEST_P(HostKernels, BoxKernelsTouchOnlyTheBox) {
  const Box box{{2, 1, 2}, {4, 3, 2}};
  Fields<float> src = numbered(g, 1.0f), copied = numbered(g, -5e5f), shifted = copied;
  const Fields<float> untouched = copied;
  backend->copy_box(g, copied.pointers(), src.pointers(), box, kComputeQueue);
  backend->shift(g, shifted.pointers(), src.pointers(), box, checkmpi_motion(false), kComputeQueue);
  backend->wait_all();
  const auto st = g.stride();
  for (int f = 0; f < 3; ++f)
    for (int k = 0; k <= g.n + 1; ++k)
      for (int j = 0; j <= g.m + 1; ++j)
        for (int i = 0; i <= g.l + 1; ++i) {
          const bool inside = i >= 2 && i <= 4 && j >= 1 && j <= 3 && k == 2;
          const size_t c = g.index(i, j, k);
          ASSERT_EQ(copied.f[f][c], inside ? src.f[f][c] : untouched.f[f][c]);
          ASSERT_EQ(shifted.f[f][c], inside ? src.f[f][c - st[f]] : untouched.f[f][c]);
        }
  // The whole box is one copy per field.
  Fields<float> whole(g);
  backend->copy_box(g, whole.pointers(), src.pointers(), whole_box(g), kComputeQueue);
  EXPECT_EQ(whole.f, src.f);
}

TEST_P(HostKernels, CopyMovesLongRuns) {
  std::vector<float> a(100003), b(100003, 0.0f);
  std::iota(a.begin(), a.end(), 0.0f);
  backend->copy(b.data(), a.data(), a.size(), kQueueZ);
  EXPECT_EQ(a, b);
}

INSTANTIATE_TEST_SUITE_P(Threads, HostKernels, ::testing::Values(1, 2));

// Inner plus shell cover the interior exactly once, for borders from thin to
// wider than the block.
TEST(MaskedOverlap, InnerAndShellPartitionTheInterior) {
  const Grid g{7, 5, 6};
  for (long long border : {1, 2, 3, 4, 10}) {
    const Box inner = inner_box(g, border);
    std::vector<int> hits(g.cells(), 0);
    std::vector<Box> boxes = shell_boxes(g, inner);
    EXPECT_LE(boxes.size(), 6u);
    boxes.push_back(inner);
    for (const Box& b : boxes)
      for (int k = b.lo[2]; k <= b.hi[2]; ++k)
        for (int j = b.lo[1]; j <= b.hi[1]; ++j)
          for (int i = b.lo[0]; i <= b.hi[0]; ++i) ++hits[g.index(i, j, k)];
    for (int k = 0; k <= g.n + 1; ++k)
      for (int j = 0; j <= g.m + 1; ++j)
        for (int i = 0; i <= g.l + 1; ++i) {
          const bool interior = i >= 1 && i <= g.l && j >= 1 && j <= g.m && k >= 1 && k <= g.n;
          ASSERT_EQ(hits[g.index(i, j, k)], interior ? 1 : 0) << "border " << border << " at " << i << j << k;
        }
  }
}

// Around each field's halo-free cells lies exactly the plane next to its
// upstream halo, and the halo-free cells' upstream neighbours are interior.
TEST(InteriorOverlap, AroundTheHaloFreeCellsIsThePlaneNextToTheHalo) {
  const Grid g{7, 5, 3};
  for (bool reverse : {false, true}) {
    const auto free = halo_free_boxes(g, checkmpi_motion(reverse));
    for (int f = 0; f < 3; ++f) {
      const int n = g.interior()[f];
      EXPECT_GE(free[f].lo[f] + (reverse ? 1 : -1), 1);
      EXPECT_LE(free[f].hi[f] + (reverse ? 1 : -1), n);
      const std::vector<Box> shell = shell_boxes(g, free[f]);
      ASSERT_EQ(shell.size(), 1u) << f;
      Box plane = interior_box(g);
      plane.lo[f] = plane.hi[f] = reverse ? n : 1;
      EXPECT_EQ(shell[0].lo, plane.lo) << f;
      EXPECT_EQ(shell[0].hi, plane.hi) << f;
    }
  }
  EXPECT_TRUE(halo_free_boxes(Grid{7, 5, 1}, checkmpi_motion(false))[2].empty());  // n = 1: every field3 cell needs the z halo
}

// The host's update around the interior overlap's halo-free cells (whole, or
// cut short by the messages) writes the interior cells outside them and
// leaves the box alone, the halo cells between its rows and planes included:
// those are skipped, not copied for nothing. (Halo cells elsewhere may be
// written: shift may do that.)
TEST_P(HostKernels, ShellAroundWideBoxesWritesOnlyInteriorCells) {
  const Grid grid{9, 6, 5};
  for (bool reverse : {false, true}) {
    auto cut = halo_free_boxes(grid, checkmpi_motion(reverse));
    for (Box& b : cut) b.hi[2] = std::min(b.hi[2], 3);
    for (const auto& inner : {halo_free_boxes(grid, checkmpi_motion(reverse)), cut}) {
      Fields<float> src = numbered(grid, 1.0f);
      const Fields<float> before = numbered(grid, -5e5f);
      Fields<float> dst = before;
      backend->shift_shell(grid, dst.pointers(), src.pointers(), inner, checkmpi_motion(reverse), kComputeQueue);
      const auto st = grid.stride();
      const long s = reverse ? 1 : -1;
      for (int f = 0; f < 3; ++f)
        for (int k = 0; k <= grid.n + 1; ++k)
          for (int j = 0; j <= grid.m + 1; ++j)
            for (int i = 0; i <= grid.l + 1; ++i) {
              const Box& b = inner[f];
              const bool interior = i >= 1 && i <= grid.l && j >= 1 && j <= grid.m && k >= 1 && k <= grid.n;
              const bool in_box = i >= b.lo[0] && i <= b.hi[0] && j >= b.lo[1] && j <= b.hi[1] && k >= b.lo[2] &&
                                  k <= b.hi[2];
              const std::size_t c = grid.index(i, j, k);
              const bool spanned = c >= grid.index(b.lo[0], b.lo[1], b.lo[2]) &&
                                   c <= grid.index(b.hi[0], b.hi[1], b.hi[2]);  // from the box's first cell to its last
              if (interior && !in_box) {
                ASSERT_EQ(dst.f[f][c], src.f[f][c + s * long(st[f])]) << "field " << f + 1 << " at " << i << ","
                                                                       << j << "," << k;
              } else if (spanned) {
                ASSERT_EQ(dst.f[f][c], before.f[f][c]) << "field " << f + 1 << " at " << i << "," << j << "," << k
                                                       << (reverse ? " reverse" : "") << " (inside the box's span)";
              }
            }
    }
  }
}

TEST(MaskedOverlap, InnerCellsNeedNoHalo) {
  const Grid g{8, 8, 8};
  const Box b = inner_box(g, 1);
  EXPECT_EQ(b.lo, (std::array<int, 3>{2, 2, 2}));
  EXPECT_EQ(b.hi, (std::array<int, 3>{7, 7, 7}));
  EXPECT_TRUE(inner_box(g, 4).empty());  // 2 * border >= 8
  EXPECT_EQ(inner_box(g, 3).cells(), 8u);
}

// The CUDA entry points in any build: without CUDA no device and a usage
// error naming the build; with CUDA but no device (this CI) a reason for 0.
TEST(CudaApi, NoDeviceMeansAReason) {
  std::string why;
  const int devices = cuda_device_count(&why);
  if (!cuda_built()) {
    EXPECT_EQ(devices, 0);
    EXPECT_NE(why.find("built without CUDA"), std::string::npos) << why;
    EXPECT_THROW(make_cuda_backend<float>(0, false), UsageError);
    EXPECT_THROW(make_cuda_backend<double>(0, true), UsageError);
    EXPECT_THROW(cuda_memcpy_bandwidth(0, 1024), UsageError);
    EXPECT_THROW(cuda_free_memory(0), UsageError);
  } else if (devices == 0) {
    EXPECT_FALSE(why.empty());
  }
}

}  // namespace
