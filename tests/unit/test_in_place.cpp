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
void expect_box_shift(const Grid& g, const Fields<float>& got, const Fields<float>& before, const Boxes& boxes,
                      const Motion& m, const std::string& what) {
  for (int f = 0; f < got.count(); ++f)
    for (int k = 1; k <= g.n; ++k)
      for (int j = 1; j <= g.m; ++j)
        for (int i = 1; i <= g.l; ++i) {
          const std::size_t c = g.index(i, j, k);
          const auto& old = before.f[std::size_t(f)];
          const float want =
              inside(boxes[std::size_t(f)], i, j, k) ? old[std::size_t(long(c) + g.offset(m.v[std::size_t(f)]))] : old[c];
          ASSERT_EQ(got.f[std::size_t(f)][c], want) << what << ": field " << f + 1 << " at " << i << "," << j << ","
                                                    << k;
        }
}

// The motions the tests run: CheckMPI's both ways, wider halos, and the
// lattices' velocities (edges and corners: the memory-order sweep).
struct Case {
  std::string name;
  Stencil stencil;
  bool reverse;
};
std::vector<Case> motions() {
  return {{"checkmpi", Stencil{}, false},
          {"checkmpi reverse", Stencil{}, true},
          {"width 2", Stencil{2, 3, 6}, false},
          {"width 3 reverse", Stencil{3, 4, 6}, true},
          {"d3q19", Stencil{1, 19, 18}, false},
          {"d3q27 width 2 reverse", Stencil{2, 27, 26}, true}};
}

std::string text(const Grid& g, const Case& c) {
  return c.name + " grid " + std::to_string(g.l) + "x" + std::to_string(g.m) + "x" + std::to_string(g.n);
}

class InPlace : public HostThreadsTest {
 protected:
  // body(kernel) with the backend's in-place kernel forced to each in turn (the backend's choice, the lines, the
  // memory-order sweep), until a fatal failure; then the backend's choice again.
  template <class Body>
  void each_kernel(const Body& body) {
    for (const InPlaceKernel kernel : {InPlaceKernel::Chosen, InPlaceKernel::Lines, InPlaceKernel::Sweep}) {
      ASSERT_TRUE(backend->use_in_place_kernel(kernel));
      body(kernel);
      if (HasFatalFailure()) break;
    }
    backend->use_in_place_kernel(InPlaceKernel::Chosen);
  }

  // Small and odd, thin in z (fewer planes than threads), and one past the caches' lines per row.
  std::vector<Grid> grids(int h) const {
    const std::vector<Grid> base{Grid{5, 4, 3}, Grid{9, 7, 2}, Grid{1, 6, 5}, Grid{67, 33, 21}};
    std::vector<Grid> out;
    for (Grid g : base) {
      g.h = h;
      g.l = std::max(g.l, h), g.m = std::max(g.m, h), g.n = std::max(g.n, h);
      out.push_back(g);
    }
    return out;
  }
};

// A box each: the whole interior, boxes as wide as the interior (one run per
// plane) and narrower ones, boxes touching the halo and not, a single cell:
// each closed downstream (with a cell, the cells its value moves to); by
// each kernel (the lines, the memory-order sweep, and the backend's choice).
TEST_P(InPlace, AnyBoxesTakeTheirUpstreamValues) {
  for (const Case& mc : motions()) {
    const Motion m(mc.stencil, mc.reverse);
    for (const Grid& g : grids(mc.stencil.width)) {
      const std::size_t fields = std::size_t(m.fields());
      const Box all = interior_box(g);
      std::vector<Boxes> cases{Boxes(fields, all), halo_free_boxes(g, m)};
      const Box wide{{1, 2, 1}, {g.l, g.m, g.n}}, narrow{{std::min(2, g.l), 1, 2}, {g.l, std::max(1, g.m - 1), g.n}};
      const Box cell{{g.l, g.m, g.n}, {g.l, g.m, g.n}};
      for (const Box& pick : {wide, narrow, cell}) {
        // Extended to the downstream end along each axis of the field's velocity.
        Boxes boxes;
        for (std::size_t f = 0; f < fields; ++f) {
          Box b = pick;
          for (std::size_t a = 0; a < 3; ++a) {
            if (m.v[f][a] > 0) b.hi[a] = g.interior()[a];
            if (m.v[f][a] < 0) b.lo[a] = 1;
          }
          boxes.push_back(b);
        }
        cases.push_back(boxes);
      }
      each_kernel([&](InPlaceKernel kernel) {
        for (const Boxes& boxes : cases) {
          const Fields<float> before = numbered(g, 1.0f, m);
          Fields<float> got = before;
          backend->shift_in_place(g, got.pointers(), boxes, m, kComputeQueue);
          backend->wait(kComputeQueue);
          expect_box_shift(g, got, before, boxes, m, text(g, mc) + ", kernel " + in_place_kernel_name(kernel));
          if (HasFatalFailure()) return;
        }
      });
      if (HasFatalFailure()) return;
    }
  }
}

// What an overlapped step does in place: a box per field closed downstream
// (halo-free cells, the masked inner box extended, any number of planes of
// them), then the shell around it, is CheckMPI's loop.
TEST_P(InPlace, DoneThenShellIsTheWholeShift) {
  for (const Case& mc : motions()) {
    const Motion m(mc.stencil, mc.reverse);
    for (const Grid& g : grids(mc.stencil.width)) {
      const std::size_t fields = std::size_t(m.fields());
      std::vector<Boxes> cases{halo_free_boxes(g, m), Boxes(fields)};
      for (long long border : {1, 2, 3}) cases.push_back(masked_boxes(g, border, m, true));
      for (Boxes boxes : {halo_free_boxes(g, m), masked_boxes(g, 1, m, true)}) {
        // One plane in z of each: from the bottom, or the top for a field moving up in z.
        for (std::size_t f = 0; f < fields; ++f) {
          Box& b = boxes[f];
          if (b.empty()) continue;
          if (m.v[f][2] > 0) b.lo[2] = b.hi[2];
          else b.hi[2] = b.lo[2];
        }
        cases.push_back(boxes);
      }
      // The shell's boxes by each kernel: with the sweep, a shell's parts of whole planes (on one thread, any
      // wide part) go by the sweep beside the others' lines in one parallel region.
      each_kernel([&](InPlaceKernel kernel) {
        for (const Boxes& done : cases) {
          const Fields<float> before = numbered(g, 1.0f, m);
          Fields<float> got = before;
          backend->shift_in_place(g, got.pointers(), done, m, kComputeQueue);
          backend->shift_shell_in_place(g, got.pointers(), done, m, kComputeQueue);
          backend->wait(kComputeQueue);
          expect_whole_shift(g, got, before, m, text(g, mc) + ", kernel " + in_place_kernel_name(kernel));
          if (HasFatalFailure()) return;
        }
      });
      if (HasFatalFailure()) return;
    }
  }
}

// The host's overlap, in place and one pass, in slices stopped at the first
// test that finds the halos in (interior: the halo-free cells, in place
// rows along x whole; masked: the inner box, in place extended downstream
// and a field moving up in z sliced from its downstream end), the halos then
// unpacked: wherever it stops (before the first slice, within a field,
// between fields, after the last), after() completes exactly CheckMPI's
// loop; in place it needs no second buffer.
TEST_P(InPlace, OverlapCutShortAnywhereIsTheWholeShift) {
  Decomposition dec;
  StepTimers timers;
  for (const Case& mc : {motions()[0], motions()[1], motions()[2], motions()[4], motions()[5]}) {
    const Motion m(mc.stencil, mc.reverse);
    // 14 planes a slice at width 1: three or four slices per field; fewer fields of the lattices, smaller.
    const Grid grid = mc.stencil.fields > 3 ? Grid{37, 19, 17, mc.stencil.width} : Grid{131, 67, 45, mc.stencil.width};
    dec.grid = grid;
    for (Compute mode : {Compute::InPlace, Compute::OnePass})
      for (Overlap overlap : {Overlap::Masked, Overlap::Interior}) {
        StepOptions config;
        config.border = 3;
        config.reverse = mc.reverse;
        const Fields<float> src = numbered(grid, 1.0f, m);
        const std::string what = mc.name + " " + compute_name(mode) + " " + name(overlap);
        // The fields where after() left them, copied out.
        const auto result = [&](const HaloState<float>& s) {
          Fields<float> got(grid, m);
          for (int field = 0; field < got.count(); ++field)
            std::copy(s.f[std::size_t(field)], s.f[std::size_t(field)] + grid.cells(), got.f[std::size_t(field)].begin());
          return got;
        };
        for (int cut = 0;; ++cut) {
          Fields<float> f = src;
          HaloState<float> s{dec, grid, f.pointers(), config, timers, *backend, mc.stencil, m};
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
          expect_whole_shift(grid, result(s), src, m, what + " cut after " + std::to_string(cut));
          if (HasFatalFailure()) return;
          if (!more) break;
        }
        // Whole, without slices.
        Fields<float> f = src;
        HaloState<float> s{dec, grid, f.pointers(), config, timers, *backend, mc.stencil, m};
        ComputeStep<float> compute;
        compute.setup(s, mode, overlap);
        compute.in_flight(s, false);
        unpack_halos(grid, f, src);
        compute.after(s);
        expect_whole_shift(grid, result(s), src, m, what + " whole");
      }
  }
}

// Slices take the field moving in x last (its shell after a cut is a cell per
// row): the first slice moves planes of the field moving in y, none of field1.
TEST_P(InPlace, SlicesLeaveTheFieldMovingInXForLast) {
  Decomposition dec;
  StepTimers timers;
  const Motion m(Stencil{}, false);
  const Grid grid{40, 20, 30, 1};
  dec.grid = grid;
  StepOptions config;
  Fields<float> f = numbered(grid, 1.0f, m);
  const Fields<float> before = f;
  HaloState<float> s{dec, grid, f.pointers(), config, timers, *backend, Stencil{}, m};
  ComputeStep<float> compute;
  compute.setup(s, Compute::InPlace, Overlap::Interior);
  compute.begin_slices();
  ASSERT_TRUE(compute.next_slice(s));
  const auto moved = [&](int field) { return f.f[std::size_t(field)] != before.f[std::size_t(field)]; };
  EXPECT_FALSE(moved(0));
  EXPECT_TRUE(moved(1));
  EXPECT_FALSE(moved(2));
}

INSTANTIATE_TEST_SUITE_P(Threads, InPlace, ::testing::Values(1, 2, 3, 5));

// The shell in place and the done box cover the interior exactly once, each
// line along the field's direction outside done lies whole in one shell box,
// and a done box short of the downstream end is refused.
TEST(InPlaceShell, BoxesPartitionTheInteriorByLines) {
  const Grid g{7, 5, 6};
  for (bool reverse : {false, true})
    for (int axis = 0; axis < 3; ++axis)
      for (const Box& done : {halo_free_boxes(g, checkmpi_motion(reverse))[std::size_t(axis)],
                              masked_boxes(g, 1, checkmpi_motion(reverse), true)[std::size_t(axis)],
                              masked_boxes(g, 2, checkmpi_motion(reverse), true)[std::size_t(axis)], Box{}}) {
        std::vector<int> owner(g.cells(), -1);
        const std::vector<Box> shell = in_place_shell_boxes(g, done, axis, reverse ? -1 : 1);
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
  EXPECT_THROW(in_place_shell_boxes(g, short_of_end, 0, 1), std::logic_error);
  EXPECT_NO_THROW(in_place_shell_boxes(g, short_of_end, 0, -1));
}

}  // namespace
