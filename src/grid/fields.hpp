// The three fields of one rank, their initial condition, and the exact check
// of the result of the rigid one-cell shift.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "grid/decomposition.hpp"

namespace checkmpi {

template <class Real>
struct Fields {
  Grid grid;
  std::array<std::vector<Real>, 3> f;  // field1 (moves in x), field2 (y), field3 (z)

  explicit Fields(const Grid& g) : grid(g) {
    for (auto& v : f) v.assign(g.cells(), Real(0));
  }
  Real* data(int field) { return f[field].data(); }
  const Real* data(int field) const { return f[field].data(); }
  Real at(int field, int i, int j, int k) const { return f[field][grid.index(i, j, k)]; }
  std::array<Real*, 3> pointers() { return {data(0), data(1), data(2)}; }
};

// CheckMPI's initial profile along a direction of interior size n, for indices
// 0..n+1: sin(2*pi*((i-1)/n)). As in CheckMPI, the ratio is formed in default
// (single) precision and the rest in the working precision, so single and
// double runs start from the same angles.
template <class Real>
std::vector<Real> initial_profile(int n) {
  const Real pi = Real(3.141592653589793238462643383279);
  std::vector<Real> v(static_cast<size_t>(n) + 2);
  for (int i = 0; i <= n + 1; ++i) {
    const float ratio = float(i - 1) / float(n);
    v[static_cast<size_t>(i)] = std::sin(Real(2.0) * pi * Real(ratio));
  }
  return v;
}

template <class Real>
struct InitialProfiles {
  std::array<std::vector<Real>, 3> along;  // field d varies along direction d
  explicit InitialProfiles(const Grid& g)
      : along{initial_profile<Real>(g.l), initial_profile<Real>(g.m), initial_profile<Real>(g.n)} {}
};

// Every cell, halos included: field d takes the profile of its own direction.
template <class Real>
void initialise(Fields<Real>& fs, const InitialProfiles<Real>& p) {
  const Grid& g = fs.grid;
  for (int k = 0; k <= g.n + 1; ++k)
    for (int j = 0; j <= g.m + 1; ++j)
      for (int i = 0; i <= g.l + 1; ++i) {
        const size_t c = g.index(i, j, k);
        fs.f[0][c] = p.along[0][size_t(i)];
        fs.f[1][c] = p.along[1][size_t(j)];
        fs.f[2][c] = p.along[2][size_t(k)];
      }
}

// Interior index (1..n) that the value at `i` came from after t steps.
inline int upstream(int i, long long t, int n, bool reverse) {
  const long long shifted = (i - 1) + (reverse ? t : -t);
  return int(((shifted % n) + n) % n) + 1;
}

// The exact state after `t` steps (t = 0: initialise's): every interior
// cell holds the initial value t cells upstream; a halo cell what its
// periodic image holds (the next exchange overwrites it before any read).
template <class Real>
void initialise(Fields<Real>& fs, const InitialProfiles<Real>& p, long long t, bool reverse) {
  if (t == 0) return initialise(fs, p);
  const Grid& g = fs.grid;
  const int n[3] = {g.l, g.m, g.n};
  std::array<std::vector<Real>, 3> at;  // per direction, by index 0..n+1
  for (int d = 0; d < 3; ++d) {
    at[d].resize(size_t(n[d]) + 2);
    for (int i = 0; i <= n[d] + 1; ++i) {
      const int image = i == 0 ? n[d] : i == n[d] + 1 ? 1 : i;
      at[d][size_t(i)] = p.along[d][size_t(upstream(image, t, n[d], reverse))];
    }
  }
  for (int k = 0; k <= g.n + 1; ++k)
    for (int j = 0; j <= g.m + 1; ++j)
      for (int i = 0; i <= g.l + 1; ++i) {
        const size_t c = g.index(i, j, k);
        fs.f[0][c] = at[0][size_t(i)];
        fs.f[1][c] = at[1][size_t(j)];
        fs.f[2][c] = at[2][size_t(k)];
      }
}

// The working set of a step's compute: the three fields' arrays of a rank,
// halos included.
inline std::size_t field_bytes(const Grid& g, std::size_t real) { return 3 * g.cells() * real; }

// Bytes a step's shift must move, what its compute is credited with: each
// interior cell of the three fields read once and written once.
inline std::size_t shift_bytes(const Grid& g, std::size_t real) {
  return 2 * 3 * std::size_t(g.l) * std::size_t(g.m) * std::size_t(g.n) * real;
}

struct Mismatch {
  long long count = 0;          // cells that differ on this rank
  int field = 0, i = 0, j = 0, k = 0;
  double expected = 0, actual = 0;
  std::string describe() const;  // "field1(i,j,k) expected X got Y; N wrong cell(s) on this rank"
};

template <class Real>
bool same_bits(Real a, Real b) {
  return std::memcmp(&a, &b, sizeof(Real)) == 0;
}

// After t steps every interior value must equal, bit for bit, the initial
// value t cells upstream along its field's direction (every rank starts from
// the same periodic profile, so "upstream" wraps within the local size).
template <class Real>
Mismatch validate(const Fields<Real>& fs, const InitialProfiles<Real>& p, long long t, bool reverse) {
  const Grid& g = fs.grid;
  Mismatch m;
  std::vector<Real> row1(size_t(g.l) + 1);
  for (int i = 1; i <= g.l; ++i) row1[size_t(i)] = p.along[0][size_t(upstream(i, t, g.l, reverse))];
  for (int k = 1; k <= g.n; ++k) {
    const Real e3 = p.along[2][size_t(upstream(k, t, g.n, reverse))];
    for (int j = 1; j <= g.m; ++j) {
      const Real e2 = p.along[1][size_t(upstream(j, t, g.m, reverse))];
      const size_t c = g.index(0, j, k);
      for (int i = 1; i <= g.l; ++i) {
        const Real expected[3] = {row1[size_t(i)], e2, e3};
        for (int f = 0; f < 3; ++f) {
          const Real actual = fs.f[f][c + size_t(i)];
          if (same_bits(actual, expected[f])) continue;
          if (m.count++ == 0) m = Mismatch{1, f + 1, i, j, k, double(expected[f]), double(actual)};
        }
      }
    }
  }
  return m;
}

}  // namespace checkmpi
