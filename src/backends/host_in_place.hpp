// The host backend's in-place shift: each field moved one cell within its
// own array, swept against its direction so that every cell is read before
// it is overwritten (CheckMPI's CPU loop), split over threads so that no
// thread reads a cell another one writes.
#pragma once

#include "backends/backend.hpp"

namespace checkmpi {

// Thread t of T's share of the in-place shift of the cells of `box` in one
// field `a` moving along `axis` (field1: 0, from i-1; reverse from i+1).
// Inside a parallel region, every thread with the same arguments; no thread
// waits for another. The pieces are independent by construction: field1's
// rows, field2's planes (or columns of them when threads outnumber planes),
// field3's columns, each walked plane by plane from the downstream end.
// Halo cells between the rows of a box as wide as the interior may be
// overwritten (they are copied across as one run); interior cells outside
// the box keep their values.
template <class Real>
void shift_box_in_place(const Grid& g, Real* a, int axis, const Box& box, bool reverse, int t, int T);

// The same over the two x faces of a box's rows, x < gap_lo and x > gap_hi,
// for field2 or field3 (axis 1 or 2; the faces' lines along the axis are
// whole in them): one run per pair of rows, the right face of a row, the two
// halo cells after it and the left face of the next, rather than two short
// runs per row. Field2's planes are shared out (as many as threads at least:
// `faces_fit`), field3's runs.
bool faces_fit(const Box& box, int axis, int T);
template <class Real>
void shift_faces_in_place(const Grid& g, Real* a, int axis, const Box& box, int gap_lo, int gap_hi, bool reverse,
                          int t, int T);

// An in-place shell (in_place_shell_boxes) as the host sweeps it: a box, or
// with gap_lo <= gap_hi a box's x faces (the two x slabs the decomposition
// gives field2 and field3, joined).
struct ShellPart {
  Box box;
  int gap_lo = 1, gap_hi = 0;
};
std::vector<ShellPart> in_place_shell_parts(const Grid& g, const Box& done, int axis, bool reverse, int T);

}  // namespace checkmpi
