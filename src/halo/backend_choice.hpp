// Where the kernels run, decided once for the whole job, and what follows
// from it: the backend objects, the strategies that cannot run there, and
// how the header describes the choice.
#pragma once

#include <mpi.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "grid/config.hpp"
#include "strategies/strategy.hpp"

namespace checkmpi {

// The same kind on every rank, each rank on one GPU of its node.
struct BackendChoice {
  BackendKind kind = BackendKind::Host;
  std::string why_host;           // --backend auto chose host: why (empty otherwise)
  std::optional<bool> gpu_aware;  // MPI's answer, the same on every rank; nullopt: it cannot tell
  std::string aware_query;        // how MPI was asked
  bool device_buffers = false;    // cuda: MPI gets device memory (CUDA-aware and no --stage)
  int device = -1;                // this rank's GPU
  int sharing = 0;                // ranks of this node on that GPU
  std::vector<int> devices;       // cuda: every rank's GPU, in rank order
  std::vector<std::string> names; // and its name
};

// Collective: every rank takes the same decision, and a rank that cannot
// follow it (no GPU) makes all of them stop with the same error.
BackendChoice choose_backend(const HaloConfig& cfg, MPI_Comm comm);

template <class Real>
std::unique_ptr<Backend<Real>> make_backend(const BackendChoice& c);

// Strategies that cannot run here: host-only ones (host packing, in-place
// compute, shared memory) on the cuda backend, and those this MPI library
// lacks (partitioned before MPI 4). Named explicitly they are a usage error;
// picked by "all" they are taken out of `chosen` and returned, to be reported.
struct Skipped {
  const StrategyInfo* info;
  std::string reason;
};
std::vector<Skipped> skip_unrunnable(std::vector<const StrategyInfo*>& chosen, const HaloConfig& cfg,
                                     BackendKind kind);

// The run's --compute on this backend: auto is the backend's default_compute;
// in-place on cuda is a usage error.
Compute run_compute(Compute requested, BackendKind kind);

// "host, 1 OpenMP thread per rank" or the cuda line, for the header.
std::string backend_line(const BackendChoice& c);

// What MPI is handed on the cuda backend, and why.
std::string cuda_mpi_line(const BackendChoice& c, const HaloConfig& cfg);

}  // namespace checkmpi
