#include "halo/resources.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "backends/cuda.hpp"
#include "core/context.hpp"
#include "core/errors.hpp"
#include "core/output.hpp"

namespace checkmpi {

double bytes_per_rank(const Grid& g, Precision p) {
  const double real = p == Precision::Single ? 4.0 : 8.0;
  double planes = 0;
  for (int d = 0; d < 3; ++d) planes += double(plane_count(g, d));
  const double cells = double(g.l + 2) * double(g.m + 2) * double(g.n + 2);
  return real * (6.0 * cells + 2.0 * 2.0 * 3.0 * planes);
}

void check_resources(const HaloConfig& cfg, const Decomposition& dec, const BackendChoice& backend,
                     const std::vector<const StrategyInfo*>& chosen) {
  int local_rank = 0, local_size = 1;
  node_local(dec.comm, local_rank, local_size);
  // The estimate is made before allocating so an oversized run fails cleanly
  // rather than in the allocator.
  collectively(dec.comm, [&] {
    for (int d = 0; d < 3; ++d)
      if (3.0 * double(plane_count(dec.grid, d)) > 2147483647.0)
        throw UsageError("local block too large: one halo message would exceed 2^31 elements");
    const double need = bytes_per_rank(dec.grid, cfg.precision) * local_size;
    const unsigned long long have = available_memory_bytes();
    if (have > 0 && need > double(have)) {
      throw UsageError("not enough memory: " + std::to_string(local_size) + " ranks on this node need " +
                       human_bytes(need) + ", " + human_bytes(double(have)) + " available");
    }
    if (backend.kind != BackendKind::Cuda) return;
    // The same arrays in device memory, for the ranks sharing this GPU.
    const double need_gpu = bytes_per_rank(dec.grid, cfg.precision) * backend.sharing;
    const double free_gpu = double(cuda_free_memory(backend.device));
    if (need_gpu > free_gpu)
      throw UsageError("not enough GPU memory: " + std::to_string(backend.sharing) + " rank(s) on GPU " +
                       std::to_string(backend.device) + " need " + human_bytes(need_gpu) + ", " +
                       human_bytes(free_gpu) + " free");
  });
  collectively(dec.comm, [&] {
    for (const auto* s : chosen) {
      const std::string dir = cfg.outdir + "/" + s->id;
      std::string err = make_directories(dir);
      if (!err.empty()) throw UsageError(err);
      const std::string probe = dir + "/.checkmpi-write-test." + std::to_string(dec.rank);
      std::FILE* f = std::fopen(probe.c_str(), "w");
      if (!f) throw UsageError("output directory '" + dir + "' is not writable: " + std::strerror(errno));
      std::fclose(f);
      std::remove(probe.c_str());
    }
  });
  collectively(dec.comm, [&] {
    if (dec.rank != 0 || cfg.json.empty()) return;
    const std::string error = check_writable_file(cfg.json, "JSON file");
    if (!error.empty()) throw UsageError(error);
  });
}

}  // namespace checkmpi
