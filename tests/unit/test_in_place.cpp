// The host backend's in-place shift against CheckMPI's loop: any boxes, the
// shell around what was done, the overlaps cut short anywhere, on more
// threads than a block has planes; and the shell's decomposition.
#include <gtest/gtest.h>

#include <algorithm>

#include "backends/backend.hpp"
#include "grid/fields.hpp"
#include "host_kernel_testing.hpp"
#include "strategies/compute.hpp"

using namespace checkmpi;

namespace {

bool inside(const Box& b, int i, int j, int k) {
  return i >= b.lo[0] && i <= b.hi[0] && j >= b.lo[1] && j <= b.hi[1] && k >= b.lo[2] && k <= b.hi[2];
}

// Every interior cell of got: for field f, inside boxes[f] the value its upstream cell had in `before`,
// outside the value it had.
void expect_box_shift(const Grid& g, const Fields<float>& got, const Fields<float>& before,
                      const std::array<Box, 3>& boxes, bool reverse, const std::string& what) {
  const auto st = g.stride();
  const long s = reverse ? 1 : -1;
  for (int f = 0; f < 3; ++f)
    for (int k = 1; k <= g.n; ++k)
      for (int j = 1; j <= g.m; ++j)
        for (int i = 1; i <= g.l; ++i) {
          const std::size_t c = g.index(i, j, k);
          const float want = inside(boxes[f], i, j, k) ? before.f[f][long(c) + s * long(st[f])] : before.f[f][c];
          ASSERT_EQ(got.f[f][c], want) << what << ": field " << f + 1 << " at " << i << "," << j << "," << k
                                       << (reverse ? " reverse" : "");
        }
}

class InPlace : public HostThreadsTest {
 protected:
  // Small and odd, thin in z (fewer planes than threads), and one past the caches' lines per row.
  const std::vector<Grid> grids{Grid{5, 4, 3}, Grid{9, 7, 2}, Grid{1, 6, 5}, Grid{67, 33, 21}};
};

// A box each: the whole interior, boxes as wide as the interior (one run per
// plane) and narrower ones, boxes touching the halo and not, a single cell.
TEST_P(InPlace, AnyBoxesTakeTheirUpstreamValues) {
  for (const Grid& g : grids) {
    const Box all = interior_box(g);
    std::vector<std::array<Box, 3>> cases{{all, all, all}, halo_free_boxes(g, false), halo_free_boxes(g, true)};
    const Box wide{{1, 2, 1}, {g.l, g.m, g.n}}, narrow{{std::min(2, g.l), 1, 2}, {g.l, std::max(1, g.m - 1), g.n}};
    const Box cell{{g.l, g.m, g.n}, {g.l, g.m, g.n}};
    cases.push_back({wide, narrow, cell});
    cases.push_back({narrow, cell, wide});
    cases.push_back({cell, wide, narrow});
    for (const auto& boxes : cases)
      for (bool reverse : {false, true}) {
        const Fields<float> before = numbered(g, 1.0f);
        Fields<float> got = before;
        backend->shift_in_place(g, got.pointers(), boxes, reverse, kComputeQueue);
        backend->wait(kComputeQueue);
        expect_box_shift(g, got, before, boxes, reverse, "grid " + std::to_string(g.l) + "x" +
                                                              std::to_string(g.m) + "x" + std::to_string(g.n));
        if (HasFatalFailure()) return;
      }
  }
}

// What an overlapped step does in place: a box per field reaching the
// downstream end (halo-free cells, the masked inner box extended, any
// number of planes of them), then the shell around it, is CheckMPI's loop.
TEST_P(InPlace, DoneThenShellIsTheWholeShift) {
  for (const Grid& g : grids)
    for (bool reverse : {false, true}) {
      std::vector<std::array<Box, 3>> cases{halo_free_boxes(g, reverse), std::array<Box, 3>{}};
      for (long long border : {1, 2, 3})
        cases.push_back(in_place_masked_boxes(g, border, reverse));
      for (std::array<Box, 3> boxes : {halo_free_boxes(g, reverse), in_place_masked_boxes(g, 1, reverse)}) {
        // One plane in z of each: fields 1 and 2 from the bottom, field3 at its downstream end.
        for (int f = 0; f < 2; ++f)
          if (!boxes[f].empty()) boxes[f].hi[2] = boxes[f].lo[2];
        Box& z = boxes[2];
        if (!z.empty()) z.lo[2] = z.hi[2] = reverse ? z.lo[2] : z.hi[2];
        cases.push_back(boxes);
      }
      for (const auto& done : cases) {
        const Fields<float> before = numbered(g, 1.0f);
        Fields<float> got = before;
        backend->shift_in_place(g, got.pointers(), done, reverse, kComputeQueue);
        backend->shift_shell_in_place(g, got.pointers(), done, reverse, kComputeQueue);
        backend->wait(kComputeQueue);
        expect_whole_shift(g, got, before, reverse, "grid " + std::to_string(g.l) + "x" + std::to_string(g.m) +
                                                        "x" + std::to_string(g.n));
        if (HasFatalFailure()) return;
      }
    }
}

// The host's overlap, in place and one pass, in slices stopped at the first
// test that finds the halos in (interior: the halo-free cells, in place
// field1's rows whole; masked: the inner box, in place extended downstream
// and field3 sliced from its downstream end), the halos then unpacked:
// wherever it stops (before the first slice, within a field, between
// fields, after the last), after() completes exactly CheckMPI's loop; in
// place it needs no second buffer.
TEST_P(InPlace, OverlapCutShortAnywhereIsTheWholeShift) {
  const Grid grid{131, 67, 45};  // 14 planes a slice: three or four slices per field
  const Decomposition dec;
  StepTimers timers;
  for (Compute mode : {Compute::InPlace, Compute::OnePass})
    for (Overlap overlap : {Overlap::Masked, Overlap::Interior})
      for (bool reverse : {false, true}) {
        StepOptions config;
        config.border = 3;
        config.reverse = reverse;
        const Fields<float> src = numbered(grid, 1.0f);
        const std::string what = std::string(compute_name(mode)) + " " + name(overlap);
        // The fields where after() left them, copied out.
        const auto result = [&](const HaloState<float>& s) {
          Fields<float> got(grid);
          for (int field = 0; field < 3; ++field)
            std::copy(s.f[field], s.f[field] + grid.cells(), got.f[field].begin());
          return got;
        };
        for (int cut = 0;; ++cut) {
          Fields<float> f = src;
          HaloState<float> s{dec, grid, f.pointers(), config, timers, *backend};
          ComputeStep<float> compute;
          compute.setup(s, mode, overlap);
          ASSERT_TRUE(compute.sliced(s));
          if (mode == Compute::InPlace) {
            EXPECT_EQ(compute.other(), FieldPtrs<float>{});
          }
          compute.begin_slices();
          bool more = true;
          for (int i = 0; i < cut && more; ++i) more = compute.next_slice(s);
          unpack_halos(grid, f, src);
          compute.after(s);
          if (mode == Compute::InPlace) {
            ASSERT_EQ(s.f, f.pointers());  // in the same arrays
          }
          expect_whole_shift(grid, result(s), src, reverse, what + " cut after " + std::to_string(cut));
          if (HasFatalFailure()) return;
          if (!more) break;
        }
        // Whole, without slices.
        Fields<float> f = src;
        HaloState<float> s{dec, grid, f.pointers(), config, timers, *backend};
        ComputeStep<float> compute;
        compute.setup(s, mode, overlap);
        compute.in_flight(s, false);
        unpack_halos(grid, f, src);
        compute.after(s);
        expect_whole_shift(grid, result(s), src, reverse, what + " whole");
      }
}

INSTANTIATE_TEST_SUITE_P(Threads, InPlace, ::testing::Values(1, 2, 3, 5));

// The shell in place and the done box cover the interior exactly once, each
// line along the field's direction outside done lies whole in one shell box,
// and a done box short of the downstream end is refused.
TEST(InPlaceShell, BoxesPartitionTheInteriorByLines) {
  const Grid g{7, 5, 6};
  for (bool reverse : {false, true})
    for (int axis = 0; axis < 3; ++axis)
      for (const Box& done : {halo_free_boxes(g, reverse)[axis], in_place_masked_boxes(g, 1, reverse)[axis],
                              in_place_masked_boxes(g, 2, reverse)[axis], Box{}}) {
        std::vector<int> owner(g.cells(), -1);
        const std::vector<Box> shell = in_place_shell_boxes(g, done, axis, reverse);
        for (std::size_t n = 0; n <= shell.size(); ++n) {
          const Box& b = n < shell.size() ? shell[n] : done;
          for (int k = b.lo[2]; k <= b.hi[2]; ++k)
            for (int j = b.lo[1]; j <= b.hi[1]; ++j)
              for (int i = b.lo[0]; i <= b.hi[0]; ++i) {
                ASSERT_EQ(owner[g.index(i, j, k)], -1) << "cell covered twice";
                owner[g.index(i, j, k)] = int(n);
              }
        }
        const auto st = g.stride();
        for (int k = 1; k <= g.n; ++k)
          for (int j = 1; j <= g.m; ++j)
            for (int i = 1; i <= g.l; ++i) {
              const std::size_t c = g.index(i, j, k);
              ASSERT_NE(owner[c], -1) << "interior cell not covered";
              // Its neighbour along the line, if interior: the same shell box, or done.
              const int at[3] = {i, j, k};
              if (at[axis] == g.interior()[axis] || owner[c] == int(shell.size())) continue;
              const int next = owner[c + st[axis]];
              ASSERT_TRUE(next == owner[c] || next == int(shell.size())) << "axis " << axis << " line split";
            }
      }
  Box short_of_end = interior_box(g);
  short_of_end.hi[0] = g.l - 1;
  EXPECT_THROW(in_place_shell_boxes(g, short_of_end, 0, false), std::logic_error);
  EXPECT_NO_THROW(in_place_shell_boxes(g, short_of_end, 0, true));
}

}  // namespace
