// Yardsticks measured in the same process as the strategies, for bench/.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "backends/backend.hpp"
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
// kernel; one-pass on cuda) of the run's own fields moving as `m` says, with
// no MPI, every rank at once. It takes a turn in every round of the run among
// the strategies' (halo/main.cpp), so that the VM's slow spells reach it and
// them alike. One turn: `steps` timed steps of each kernel, in turns, the
// first alternating with `round`, after two untimed steps each; each kernel's
// seconds per step (name, seconds; one entry "chosen" where the backend has
// no choice of kernels). The fields' values are left as they come out: every
// strategy's round starts from its own exact state.
template <class Real>
std::vector<std::pair<std::string, double>> probe_turn(Backend<Real>& backend, const Grid& g,
                                                       const FieldPtrs<Real>& f, const Motion& m, long long steps,
                                                       long long round);

// The probe over the run: each kernel's time is the median of its turns;
// seconds_per_step is the fastest kernel's.
struct ComputeProbe {
  Compute compute = Compute::InPlace;
  long long steps = 0;  // per kernel, over all turns
  double seconds_per_step = 0;
  std::vector<std::pair<std::string, double>> kernels;  // name, seconds per step; none on cuda
};
ComputeProbe summarise_probe(const std::vector<std::vector<std::pair<std::string, double>>>& turns,
                             long long steps, BackendKind kind);

}  // namespace checkmpi
