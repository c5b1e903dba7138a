// How much of a non-blocking operation the library hides behind computation,
// as the OSU micro-benchmarks measure it (osu_util_mpi.c: dummy_compute,
// do_compute_and_probe, print_stats_nbc).
#pragma once

#include <mpi.h>

namespace checkmpi::p2p {

// OSU's overlap in percent: max(0, 100 - (overall - (compute - test)) /
// pure_comm * 100). `compute` is the whole compute phase including the
// MPI_Test calls in it, `test` the time spent inside those calls (an
// overhead, so taken out of the compute), `overall` post + compute + wait,
// `pure_comm` post + wait with nothing between. NaN when pure_comm is not
// positive. 100: the operation cost nothing beyond the compute; 0: nothing
// of it was hidden.
double osu_overlap(double overall, double compute, double test, double pure_comm);

// Busy computation for `seconds`, without any MPI call (no library progress
// happens in it): OSU's 25 x 25 float kernel, whole kernels until their own
// times add up to `seconds`, as OSU's do_compute_cpu (the last kernel
// overshoots, and the clock reads between kernels are not counted).
void compute_for(double seconds);

// OSU's dummy_compute with `tests` probes: tests = 0 computes `seconds` in
// one go; otherwise `tests` times computes seconds / tests, then calls
// MPI_Test(request). Returns the time spent inside MPI_Test.
double compute_and_probe(double seconds, long long tests, MPI_Request* request);

}  // namespace checkmpi::p2p
