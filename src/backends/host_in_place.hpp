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

}  // namespace checkmpi
