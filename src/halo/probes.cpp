#include "halo/probes.hpp"

#include <mpi.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "backends/cuda.hpp"

namespace checkmpi {

double memcpy_bandwidth(const Grid& g, Precision p, const BackendChoice& backend) {
  const std::size_t bytes = 3 * std::size_t(g.l) * g.m * g.n * (p == Precision::Single ? 4 : 8);
  if (backend.kind == BackendKind::Cuda) return cuda_memcpy_bandwidth(backend.device, bytes);
  std::vector<char> a(bytes, 1), b(bytes, 0);
  double best = 1e300;
  for (int rep = 0; rep < 5; ++rep) {
    const double t0 = MPI_Wtime();
    std::memcpy(b.data(), a.data(), bytes);
    best = std::min(best, MPI_Wtime() - t0);
    a[rep] = b[bytes - 1 - rep];  // keeps the copies observable
  }
  return best > 0 ? 2.0 * double(bytes) / best : 0.0;
}

}  // namespace checkmpi
