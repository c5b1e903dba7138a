// Yardsticks measured in the same process as the strategies, for bench/.
#pragma once

#include "core/config.hpp"
#include "core/decomposition.hpp"
#include "halo/backend_choice.hpp"

namespace checkmpi {

// Memory-copy bandwidth on buffers the size of the three fields' interior
// (bytes read + written per second), best of five. On the cuda backend,
// device-to-device cudaMemcpy on this rank's GPU.
double memcpy_bandwidth(const Grid& g, Precision p, const BackendChoice& backend);

}  // namespace checkmpi
