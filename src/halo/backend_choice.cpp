#include "halo/backend_choice.hpp"

#include "backends/cuda.hpp"
#include "core/context.hpp"
#include "core/errors.hpp"

namespace checkmpi {

BackendChoice choose_backend(const HaloConfig& cfg, MPI_Comm comm) {
  BackendChoice c;
  // Unknown on one rank is unknown for all, so that all ranks stage or none.
  const std::optional<bool> aware = mpi_cuda_aware(&c.aware_query);
  int mine = aware ? int(*aware) : -1, least = -1;
  MPI_Allreduce(&mine, &least, 1, MPI_INT, MPI_MIN, comm);
  if (least >= 0) c.gpu_aware = least == 1;

  std::string why;
  const int devices = cuda_device_count(&why);
  int fewest = 0;
  MPI_Allreduce(&devices, &fewest, 1, MPI_INT, MPI_MIN, comm);
  if (cfg.backend == BackendRequest::Host) return c;
  if (cfg.backend == BackendRequest::Auto && fewest == 0) {
    c.why_host = !cuda_built() ? "built without CUDA"
                 : devices == 0 ? "no CUDA device visible (" + why + ")"
                                : "some rank sees no CUDA device";
    return c;
  }
  collectively(comm, [&] {
    if (!cuda_built()) throw UsageError("--backend cuda: " + why);
    if (devices == 0) throw UsageError("--backend cuda: no CUDA device visible (" + why + ")");
    if (cfg.require_gpu_aware && c.gpu_aware != true)
      throw UsageError(std::string("--require-gpu-aware: ") +
                       (c.gpu_aware ? "MPI is not CUDA-aware" : "cannot tell whether MPI is CUDA-aware") + " (" +
                       c.aware_query + ")");
  });
  c.kind = BackendKind::Cuda;
  c.device_buffers = c.gpu_aware == true && !cfg.stage;
  int local_rank = 0, local_size = 1;
  node_local(comm, local_rank, local_size);
  c.device = local_rank % devices;
  c.sharing = (local_size - c.device + devices - 1) / devices;  // local ranks r with r % devices == device
  int size = 1;
  MPI_Comm_size(comm, &size);
  c.devices.resize(size_t(size));
  MPI_Allgather(&c.device, 1, MPI_INT, c.devices.data(), 1, MPI_INT, comm);
  c.names = allgather_strings(comm, cuda_device_name(c.device));
  return c;
}

template <class Real>
std::unique_ptr<Backend<Real>> make_backend(const BackendChoice& c) {
  if (c.kind == BackendKind::Cuda) return make_cuda_backend<Real>(c.device, c.device_buffers);
  return make_host_backend<Real>();
}
template std::unique_ptr<Backend<float>> make_backend<float>(const BackendChoice&);
template std::unique_ptr<Backend<double>> make_backend<double>(const BackendChoice&);

std::vector<Skipped> skip_unrunnable(std::vector<const StrategyInfo*>& chosen, const HaloConfig& cfg,
                                     BackendKind kind) {
  std::vector<Skipped> skipped;
  std::vector<const StrategyInfo*> kept;
  for (const StrategyInfo* s : chosen) {
    std::string reason = unavailable_reason(s->parts);  // the MPI library's, whatever the backend
    const bool backend_reason = reason.empty() && kind == BackendKind::Cuda && s->host_only();
    if (backend_reason)
      reason = "host only: " + host_only_reason(s->parts) + ", and the cuda backend keeps the fields on the GPU "
               "(run it with --backend host)";
    if (reason.empty()) {
      kept.push_back(s);
    } else if (chosen_by_all(*s, cfg.strategies)) {
      skipped.push_back({s, reason});
    } else {
      throw UsageError(s->id + " (" + s->alias + ") cannot run " +
                       (backend_reason ? "on the cuda backend" : "here") + ": " + reason);
    }
  }
  chosen = kept;
  return skipped;
}

Compute run_compute(Compute requested, BackendKind kind) {
  const bool cuda = kind == BackendKind::Cuda;
  if (requested == Compute::Auto) return default_compute(kind);
  if (requested == Compute::InPlace && cuda)
    throw UsageError("--compute in-place works on host memory; the cuda backend runs one-pass or two-pass "
                     "(or run with --backend host)");
  return requested;
}

std::string backend_line(const BackendChoice& c) {
  if (c.kind == BackendKind::Host) return make_host_backend<float>()->describe();
  return "cuda, one GPU per rank: node-local rank modulo the node's GPUs";
}

std::string cuda_mpi_line(const BackendChoice& c, const HaloConfig& cfg) {
  std::string line = c.gpu_aware ? (*c.gpu_aware ? "yes" : "no") : "unknown";
  line += " (" + c.aware_query + "): ";
  if (c.device_buffers) return line + "device buffers from step4 on (step3 stages by design)";
  line += "every message staged through pinned host memory";
  if (c.gpu_aware == true && cfg.stage) line += " (--stage)";
  return line;
}

}  // namespace checkmpi
