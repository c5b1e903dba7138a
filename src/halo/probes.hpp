// Yardsticks measured in the same process as the strategies, for bench/.
#pragma once

#include "grid/config.hpp"
#include "grid/decomposition.hpp"
#include "grid/stencil.hpp"
#include "halo/backend_choice.hpp"

namespace checkmpi {

// Memory-copy bandwidth on buffers the size of the fields' interior (bytes
// read + written per second), best of five. On the cuda backend,
// device-to-device cudaMemcpy on this rank's GPU.
double memcpy_bandwidth(const Grid& g, int fields, Precision p, const BackendChoice& backend);

// The reference every strategy's compute phase is held to: the backend's own
// whole-step compute (in place on the host, one-pass on cuda) of the run's
// fields moving as `m` says, on grid `g`, with no MPI: seconds per step, the
// mean over `steps` steps after two untimed ones.
struct ComputeProbe {
  Compute compute = Compute::InPlace;
  long long steps = 0;
  double seconds_per_step = 0;
};
ComputeProbe compute_probe(const Grid& g, const Motion& m, Precision p, const BackendChoice& backend, long long steps);

}  // namespace checkmpi
