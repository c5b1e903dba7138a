// The in-place whole-step shift timed alone, after nothing or after parts of
// step2's exchange on one rank (bench/compute_after_exchange.sh builds and
// runs it): the project's own backend, fields and kernels, no MPI messages.
// Each step: the variant's part of the exchange (pack of the six faces of
// the three fields into one buffer per direction and sign, a copy into the
// receive buffers as the engine makes for a rank that is its own neighbour,
// unpack), then the timed shift. The variants take turns, 10 steps each
// after 2 untimed ones, the first rotating from round to round; printed per
// variant: the median time per step and the median over rounds of the
// round's ratio to "none" in the same round, with the interval from order
// statistics (rounds >= 11).
//
//   compute_after_exchange EDGE ROUNDS
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "grid/planes.hpp"
#include "halo/backend_choice.hpp"

using namespace checkmpi;

namespace {

struct Variant {
  const char* name;
  InPlaceKernel kernel;
  bool pack, copy, unpack;
  int dirs;  // bit d: direction d exchanged
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int edge = argc > 1 ? std::atoi(argv[1]) : 128, rounds = argc > 2 ? std::atoi(argv[2]) : 21, steps = 10;
  if (edge < 4 || rounds < 1) {
    std::fprintf(stderr, "usage: compute_after_exchange EDGE(>=4) ROUNDS(>=1)\n");
    return 2;
  }
  Grid g;
  g.l = g.m = g.n = edge;
  const Motion m(Stencil{}, false);
  auto b = make_backend<float>(BackendChoice{});
  FieldPtrs<float> f;
  const std::vector<float> ones(g.cells(), 1.f);
  for (int k = 0; k < 3; ++k) {
    f.push_back(b->allocate(g.cells()));
    b->upload(f.back(), ones.data(), g.cells());
  }
  Plane sp[3][2], rp[3][2];
  float *sb[3][2], *rb[3][2];
  for (int d = 0; d < 3; ++d)
    for (int s = 0; s < 2; ++s) {  // step2's buffers: from the backend, all fields in one per direction and sign
      sp[d][s] = face(g, d, s, false);
      rp[d][s] = face(g, d, s, true);
      sb[d][s] = b->allocate(3 * sp[d][s].count());
      rb[d][s] = b->allocate(3 * rp[d][s].count());
    }
  const std::vector<Variant> vs = {
      {"none", InPlaceKernel::Chosen, false, false, false, 0},
      {"none, sweep", InPlaceKernel::Sweep, false, false, false, 0},
      {"none, lines", InPlaceKernel::Lines, false, false, false, 0},
      {"exchange", InPlaceKernel::Chosen, true, true, true, 7},
      {"x faces", InPlaceKernel::Chosen, true, true, true, 1},
      {"y, z faces", InPlaceKernel::Chosen, true, true, true, 6},
      {"pack", InPlaceKernel::Chosen, true, false, false, 7},
      {"unpack", InPlaceKernel::Chosen, false, false, true, 7},
      {"pack+unpack", InPlaceKernel::Chosen, true, false, true, 7},
  };
  const Boxes all(3, interior_box(g));
  std::vector<std::vector<double>> t(vs.size());
  for (int r = 0; r < rounds; ++r)
    for (std::size_t j = 0; j < vs.size(); ++j) {
      const Variant& v = vs[(j + std::size_t(r)) % vs.size()];
      double sum = 0;
      for (int k = 0; k < steps + 2; ++k) {
        for (int d = 0; d < 3; ++d) {
          if (!(v.dirs >> d & 1)) continue;
          for (int s = 0; s < 2; ++s) {
            if (v.pack) b->pack(g, f, sp[d][s], sb[d][s], kComputeQueue);
            if (v.copy) std::memcpy(rb[d][s], sb[d][s], 3 * sp[d][s].count() * sizeof(float));
            if (v.unpack) b->unpack(g, rb[d][s], rp[d][s], f, kComputeQueue);
          }
          b->wait(kComputeQueue);
        }
        b->use_in_place_kernel(v.kernel);
        const double t0 = MPI_Wtime();
        b->shift_in_place(g, f, all, m, kComputeQueue);
        b->wait(kComputeQueue);
        if (k >= 2) sum += MPI_Wtime() - t0;
      }
      t[std::size_t(&v - vs.data())].push_back(sum / steps);
    }
  std::printf("%-12s %9s  %s\n", "before it", "ms/step", "over none in the same round: median (interval)");
  for (std::size_t i = 0; i < vs.size(); ++i) {
    std::vector<double> ratio;
    for (int r = 0; r < rounds; ++r) ratio.push_back(t[i][std::size_t(r)] / t[0][std::size_t(r)]);
    std::sort(ratio.begin(), ratio.end());
    // Order statistics k and n+1-k: k = 3 of 11, 6 of 21 (about 95%).
    const std::size_t k = ratio.size() >= 21 ? 5 : ratio.size() >= 11 ? 2 : 0;
    std::printf("%-12s %9.3f  %.3f (%.3f-%.3f)\n", vs[i].name, 1e3 * median(t[i]), ratio[ratio.size() / 2], ratio[k],
                ratio[ratio.size() - 1 - k]);
  }
  for (float* p : f) b->release(p);
  for (int d = 0; d < 3; ++d)
    for (int s = 0; s < 2; ++s) b->release(sb[d][s]), b->release(rb[d][s]);
  MPI_Finalize();
  return 0;
}
