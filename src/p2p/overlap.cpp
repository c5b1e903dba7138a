#include "p2p/overlap.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace checkmpi::p2p {

namespace {

// OSU's compute_on_host (osu_util_mpi.c): a 25 x 25 float kernel on three
// arrays of its own (distinct objects, so that x[i] stays in a register
// over j: through pointers into one struct the compiler stored it at every
// step, and a call took 0.45 us against OSU's 0.34 here), set as
// allocate_host_arrays sets them (a = 2, x = y = 1). OSU's overall time holds
// whole calls of it (do_compute_cpu), so a call must cost what OSU's does:
// this file is compiled as OSU's build compiles it, at -O2
// (src/CMakeLists.txt); at -O3 a call took 0.36 us.
constexpr int kDim = 25;
float a[kDim][kDim], x[kDim], y[kDim];
volatile float sink;

[[maybe_unused]] const bool arrays_set = [] {
  for (int i = 0; i < kDim; ++i) {
    x[i] = y[i] = 1.0f;
    for (int j = 0; j < kDim; ++j) a[i][j] = 2.0f;
  }
  return true;
}();

void kernel() {
  for (int i = 0; i < kDim; ++i)
    for (int j = 0; j < kDim; ++j) x[i] = x[i] + a[i][j] * a[j][i] + y[j];
  sink = x[0];
}

}  // namespace

double osu_overlap(double overall, double compute, double test, double pure_comm) {
  if (!(pure_comm > 0)) return std::numeric_limits<double>::quiet_NaN();
  return std::max(0.0, 100.0 - (overall - (compute - test)) / pure_comm * 100.0);
}

void compute_for(double seconds) {
  // As OSU's do_compute_cpu: whole kernels until their own times add up to
  // `seconds` (the clock reads between them are not counted).
  double elapsed = 0.0;
  while (elapsed < seconds) {
    const double t = MPI_Wtime();
    kernel();
    elapsed += MPI_Wtime() - t;
  }
}

double compute_and_probe(double seconds, long long tests, MPI_Request* request) {
  if (tests == 0) {
    compute_for(seconds);
    return 0.0;
  }
  double in_test = 0.0;
  for (long long n = 0; n < tests; ++n) {
    compute_for(seconds / double(tests));
    int done = 0;
    const double t = MPI_Wtime();
    MPI_Test(request, &done, MPI_STATUS_IGNORE);
    in_test += MPI_Wtime() - t;
  }
  return in_test;
}

}  // namespace checkmpi::p2p
