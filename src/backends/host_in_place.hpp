// The host backend's in-place shift: each field moved one cell within its
// own array, swept against its direction so that every cell is read before
// it is overwritten (CheckMPI's CPU loop), split over threads so that no
// thread reads a cell another one writes.
#pragma once

#include "backends/backend.hpp"

namespace checkmpi {

// Thread t of T's share of the in-place shift of the cells of `box` in one
// field `a` moving `step` cells along `axis` (field1: 0 and 1, from i-1;
// reverse -1, from i+1).
// Inside a parallel region, every thread with the same arguments; no thread
// waits for another. The pieces are independent by construction: field1's
// rows, field2's planes (or columns of them when threads outnumber planes),
// field3's columns, each walked plane by plane from the downstream end.
// Halo cells between the rows of a box as wide as the interior may be
// overwritten (they are copied across as one run); interior cells outside
// the box keep their values.
template <class Real>
void shift_box_in_place(const Grid& g, Real* a, int axis, const Box& box, int step, int t, int T);

// The same over the two x faces of a box's rows, x < gap_lo and x > gap_hi,
// for field2 or field3 (axis 1 or 2; the faces' lines along the axis are
// whole in them): one run per pair of rows, the right face of a row, the two
// halo cells after it and the left face of the next, rather than two short
// runs per row. Field2's planes are shared out (as many as threads at least:
// `faces_fit`), field3's runs.
bool faces_fit(const Box& box, int axis, int T);
template <class Real>
void shift_faces_in_place(const Grid& g, Real* a, int axis, const Box& box, int gap_lo, int gap_hi, int step,
                          int t, int T);

// An in-place shell (in_place_shell_boxes) as the host sweeps it: a box, or
// with gap_lo <= gap_hi a box's x faces (the two x slabs the decomposition
// gives field2 and field3, joined).
struct ShellPart {
  Box box;
  int gap_lo = 1, gap_hi = 0;
};
std::vector<ShellPart> in_place_shell_parts(const Grid& g, const Box& done, int axis, int step, int T);

// The in-place motion of a field whose velocity `v` is no single axis's (an
// edge or corner of a D3Q19/D3Q27 lattice): the cells of `box` but those of
// `hole` (empty: none), in memory order against the velocity, cut into one
// piece per thread; before any thread writes, each keeps a copy of the cells
// below (or above) its piece that it reads and another thread may write
// (an orphaned barrier: every thread of the team must call it, and no thread
// may have written the field earlier in the same parallel region). Any
// constant offset, one axis's included: a box as wide as the interior is one
// stream per plane, or one in all.
template <class Real>
void shift_rows_in_place(const Grid& g, Real* a, const Offset& v, const Box& box, const Box& hole, int t, int T);

}  // namespace checkmpi
