#include "halo/probes.hpp"

#include <mpi.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "backends/cuda.hpp"
#include "core/samples.hpp"

namespace checkmpi {

double memcpy_bandwidth(const Grid& g, int fields, Precision p, const BackendChoice& backend) {
  const std::size_t bytes = std::size_t(fields) * std::size_t(g.l) * g.m * g.n * real_bytes(p);
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

template <class Real>
std::vector<std::pair<std::string, double>> probe_turn(Backend<Real>& backend, const Grid& g,
                                                       const FieldPtrs<Real>& f, const Motion& m, long long steps,
                                                       long long round) {
  const Compute compute = run_compute(Compute::Auto, backend.kind());
  const std::size_t fields = f.size();
  FieldPtrs<Real> cur = f, other, owned;
  if (compute == Compute::OnePass)
    for (std::size_t k = 0; k < fields; ++k) owned.push_back(backend.allocate(g.cells()));
  other = owned;
  const Boxes all(fields, interior_box(g));
  const auto step = [&] {
    if (compute == Compute::InPlace) {
      backend.shift_in_place(g, cur, all, m, kComputeQueue);
    } else {
      backend.shift(g, other, cur, all, m, kComputeQueue);
      std::swap(cur, other);
    }
    backend.wait(kComputeQueue);
  };
  std::vector<InPlaceKernel> kernels{InPlaceKernel::Chosen};
  if (compute == Compute::InPlace && backend.use_in_place_kernel(InPlaceKernel::Lines))
    kernels = {InPlaceKernel::Lines, InPlaceKernel::Sweep};
  std::vector<std::pair<std::string, double>> out(kernels.size());
  for (std::size_t i = 0; i < kernels.size(); ++i) {
    const std::size_t which = (i + std::size_t(round)) % kernels.size();
    backend.use_in_place_kernel(kernels[which]);
    for (int warm = 0; warm < 2; ++warm) step();
    const double t0 = MPI_Wtime();
    for (long long t = 0; t < steps; ++t) step();
    out[which] = {in_place_kernel_name(kernels[which]), (MPI_Wtime() - t0) / double(steps)};
  }
  backend.use_in_place_kernel(InPlaceKernel::Chosen);
  for (Real* p : owned) backend.release(p);
  return out;
}

template std::vector<std::pair<std::string, double>> probe_turn(Backend<float>&, const Grid&,
                                                                const FieldPtrs<float>&, const Motion&, long long,
                                                                long long);
template std::vector<std::pair<std::string, double>> probe_turn(Backend<double>&, const Grid&,
                                                                const FieldPtrs<double>&, const Motion&, long long,
                                                                long long);

ComputeProbe summarise_probe(const std::vector<std::vector<std::pair<std::string, double>>>& turns,
                             long long steps, BackendKind kind) {
  ComputeProbe probe;
  probe.compute = run_compute(Compute::Auto, kind);
  probe.steps = steps;
  probe.seconds_per_step = 1e300;
  const std::size_t kernels = turns.empty() ? 0 : turns.front().size();
  for (std::size_t i = 0; i < kernels; ++i) {
    std::vector<double> v;
    for (const auto& turn : turns) v.push_back(turn[i].second);
    std::sort(v.begin(), v.end());
    const double median = quantile_sorted(v, 0.5);
    if (kernels > 1) probe.kernels.emplace_back(turns.front()[i].first, median);
    probe.seconds_per_step = std::min(probe.seconds_per_step, median);
  }
  return probe;
}

}  // namespace checkmpi
