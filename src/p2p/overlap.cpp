#include "p2p/overlap.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace checkmpi::p2p {

namespace {

// OSU's compute_on_host is a 25 x 25 float kernel; a smaller one keeps the
// overshoot of the last kernel below a fifth of a microsecond.
constexpr int kDim = 16;
float a[kDim][kDim], x[kDim], y[kDim];
volatile float sink;

void kernel() {
  for (int i = 0; i < kDim; ++i)
    for (int j = 0; j < kDim; ++j) x[i] = x[i] * 0.5f + a[i][j] * a[j][i] + y[j];
  sink = x[0];
}

}  // namespace

double osu_overlap(double overall, double compute, double test, double pure_comm) {
  if (!(pure_comm > 0)) return std::numeric_limits<double>::quiet_NaN();
  return std::max(0.0, 100.0 - (overall - (compute - test)) / pure_comm * 100.0);
}

void compute_for(double seconds) {
  const double end = MPI_Wtime() + seconds;
  while (MPI_Wtime() < end) kernel();
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
