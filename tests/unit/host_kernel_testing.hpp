// What the host kernels' tests share: numbered fields, the check of a whole
// step against CheckMPI's loop (reference_shift.hpp), the halos an exchange
// delivers, and a fixture that runs each test on a team of N OpenMP threads.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <numeric>
#include <string>

#include "backends/backend.hpp"
#include "grid/fields.hpp"
#include "reference_shift.hpp"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace checkmpi {

// Every cell a distinct value, so a misplaced element is always seen.
inline Fields<float> numbered(const Grid& g, float base) {
  Fields<float> fs(g);
  for (int f = 0; f < 3; ++f) std::iota(fs.f[f].begin(), fs.f[f].end(), base + float(f) * 1e6f);
  return fs;
}

// The interior of got against CheckMPI's loop over `before`.
inline void expect_whole_shift(const Grid& g, const Fields<float>& got, const Fields<float>& before, bool reverse,
                               const std::string& what = "") {
  Fields<float> want = before;
  reference_shift(g, want.pointers(), reverse);
  for (int f = 0; f < 3; ++f)
    for (int k = 1; k <= g.n; ++k)
      for (int j = 1; j <= g.m; ++j)
        for (int i = 1; i <= g.l; ++i)
          ASSERT_EQ(got.at(f, i, j, k), want.at(f, i, j, k))
              << what << ": field " << f + 1 << " at " << i << "," << j << "," << k << (reverse ? " reverse" : "");
}

// What the exchange does between the in-flight part and after(): every halo
// cell takes its value anew (here the one it had in `from`).
inline void unpack_halos(const Grid& g, Fields<float>& f, const Fields<float>& from) {
  for (int k = 0; k <= g.n + 1; ++k)
    for (int j = 0; j <= g.m + 1; ++j)
      for (int i = 0; i <= g.l + 1; ++i)
        if (i == 0 || j == 0 || k == 0 || i == g.l + 1 || j == g.m + 1 || k == g.n + 1)
          for (int field = 0; field < 3; ++field) f.f[field][g.index(i, j, k)] = from.f[field][g.index(i, j, k)];
}

// The host backend, on GetParam() OpenMP threads for the test.
class HostThreadsTest : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
#ifdef _OPENMP
    omp_set_num_threads(GetParam());
#endif
  }
  void TearDown() override {
#ifdef _OPENMP
    omp_set_num_threads(1);
#endif
  }
  std::unique_ptr<Backend<float>> backend = make_host_backend<float>();
};

}  // namespace checkmpi
