// Yardsticks measured in the same process as the strategies, for bench/.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "grid/config.hpp"
#include "grid/decomposition.hpp"
#include "grid/stencil.hpp"
#include "halo/backend_choice.hpp"

namespace checkmpi {

// Memory-copy bandwidth on buffers the size of the fields' interior (bytes
// read + written per second), best of five. On the cuda backend,
// device-to-device cudaMemcpy on this rank's GPU.
double memcpy_bandwidth(const Grid& g, int fields, Precision p, const BackendChoice& backend);

// The reference every strategy's compute phase is held to: the fastest
// correct whole-step compute the backend has (on the host each in-place
// kernel, timed in turns on the same fields; one-pass on cuda) of the run's
// fields moving as `m` says, on grid `g`, with no MPI. Seconds per step of
// each kernel: the median over rounds of a round's mean, after two untimed
// steps; seconds_per_step is the fastest kernel's.
struct ComputeProbe {
  Compute compute = Compute::InPlace;
  long long steps = 0;  // per kernel
  double seconds_per_step = 0;
  std::vector<std::pair<std::string, double>> kernels;  // name, seconds per step; none on cuda
};
ComputeProbe compute_probe(const Grid& g, const Motion& m, Precision p, const BackendChoice& backend, long long steps);

}  // namespace checkmpi
