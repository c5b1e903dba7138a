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

// Every cell a distinct value, so a misplaced element is always seen; the
// fields move as `m` says (CheckMPI's three fields by default).
inline Fields<float> numbered(const Grid& g, float base, const Motion& m = checkmpi_motion(false)) {
  Fields<float> fs(g, m);
  for (int f = 0; f < fs.count(); ++f)
    std::iota(fs.f[std::size_t(f)].begin(), fs.f[std::size_t(f)].end(), base + float(f) * 1e6f);
  return fs;
}

// The interior of got against CheckMPI's loop (any motion's) over `before`.
inline void expect_whole_shift(const Grid& g, const Fields<float>& got, const Fields<float>& before, const Motion& m,
                               const std::string& what = "") {
  Fields<float> want = before;
  reference_shift(g, want.pointers(), m);
  for (int f = 0; f < got.count(); ++f)
    for (int k = 1; k <= g.n; ++k)
      for (int j = 1; j <= g.m; ++j)
        for (int i = 1; i <= g.l; ++i)
          ASSERT_EQ(got.at(f, i, j, k), want.at(f, i, j, k))
              << what << ": field " << f + 1 << " at " << i << "," << j << "," << k << " moving "
              << m.v[std::size_t(f)][0] << "," << m.v[std::size_t(f)][1] << "," << m.v[std::size_t(f)][2];
}
inline void expect_whole_shift(const Grid& g, const Fields<float>& got, const Fields<float>& before, bool reverse,
                               const std::string& what = "") {
  expect_whole_shift(g, got, before, checkmpi_motion(reverse), what);
}

// What the exchange does between the in-flight part and after(): every halo
// cell takes its value anew (here the one it had in `from`).
inline void unpack_halos(const Grid& g, Fields<float>& f, const Fields<float>& from) {
  for (int k = 1 - g.h; k <= g.n + g.h; ++k)
    for (int j = 1 - g.h; j <= g.m + g.h; ++j)
      for (int i = 1 - g.h; i <= g.l + g.h; ++i)
        if (i < 1 || j < 1 || k < 1 || i > g.l || j > g.m || k > g.n)
          for (int field = 0; field < f.count(); ++field)
            f.f[std::size_t(field)][g.index(i, j, k)] = from.f[std::size_t(field)][g.index(i, j, k)];
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
