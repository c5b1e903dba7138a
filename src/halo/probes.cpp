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

namespace {

constexpr long long kRounds = 5;

template <class Real>
ComputeProbe timed_compute(const Grid& g, const Motion& m, const BackendChoice& choice, long long steps) {
  const auto backend = make_backend<Real>(choice);
  ComputeProbe probe;
  probe.compute = run_compute(Compute::Auto, backend->kind());
  probe.steps = steps;
  const std::size_t fields = std::size_t(m.fields());
  FieldPtrs<Real> f(fields, nullptr), other(fields, nullptr);
  const std::vector<Real> start(g.cells(), Real(1));
  for (std::size_t k = 0; k < fields; ++k) {
    f[k] = backend->allocate(g.cells());
    backend->upload(f[k], start.data(), g.cells());
    if (probe.compute == Compute::OnePass) other[k] = backend->allocate(g.cells());
  }
  const Boxes all(fields, interior_box(g));
  const auto step = [&] {
    if (probe.compute == Compute::InPlace) {
      backend->shift_in_place(g, f, all, m, kComputeQueue);
    } else {
      backend->shift(g, other, f, all, m, kComputeQueue);
      std::swap(f, other);
    }
    backend->wait(kComputeQueue);
  };
  // The kernels in turns, the first of each round alternating, so that a slow spell reaches both alike.
  std::vector<InPlaceKernel> kernels{InPlaceKernel::Chosen};
  if (probe.compute == Compute::InPlace && backend->use_in_place_kernel(InPlaceKernel::Lines))
    kernels = {InPlaceKernel::Lines, InPlaceKernel::Sweep};
  const long long rounds = std::min<long long>(kRounds, steps);
  std::vector<std::vector<double>> times(kernels.size());
  for (long long r = 0; r < rounds; ++r) {
    const long long n = steps * (r + 1) / rounds - steps * r / rounds;
    for (std::size_t i = 0; i < kernels.size(); ++i) {
      const std::size_t which = (i + std::size_t(r)) % kernels.size();
      backend->use_in_place_kernel(kernels[which]);
      for (int warm = 0; warm < 2; ++warm) step();
      const double t0 = MPI_Wtime();
      for (long long t = 0; t < n; ++t) step();
      times[which].push_back((MPI_Wtime() - t0) / double(n));
    }
  }
  backend->use_in_place_kernel(InPlaceKernel::Chosen);
  probe.seconds_per_step = 1e300;
  for (std::size_t i = 0; i < kernels.size(); ++i) {
    std::vector<double>& v = times[i];
    std::sort(v.begin(), v.end());
    const double median = quantile_sorted(v, 0.5);
    if (kernels.size() > 1) probe.kernels.emplace_back(in_place_kernel_name(kernels[i]), median);
    probe.seconds_per_step = std::min(probe.seconds_per_step, median);
  }
  for (std::size_t k = 0; k < fields; ++k) {
    backend->release(f[k]);
    if (other[k]) backend->release(other[k]);
  }
  return probe;
}

}  // namespace

ComputeProbe compute_probe(const Grid& g, const Motion& m, Precision p, const BackendChoice& backend, long long steps) {
  return p == Precision::Single ? timed_compute<float>(g, m, backend, steps)
                                : timed_compute<double>(g, m, backend, steps);
}

}  // namespace checkmpi
