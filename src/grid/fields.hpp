// The fields of one rank, their initial condition, and the exact check of
// the result of their rigid motion (CheckMPI's: three fields, one cell per
// step along x, y and z).
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "grid/decomposition.hpp"
#include "grid/stencil.hpp"

namespace checkmpi {

template <class Real>
struct Fields {
  Grid grid;
  Motion motion;                    // how each field moves per step
  std::vector<std::vector<Real>> f;  // CheckMPI's field1 (moves in x), field2 (y), field3 (z) by default

  Fields(const Grid& g, const Motion& m) : grid(g), motion(m), f(std::size_t(m.fields())) {
    for (auto& v : f) v.assign(g.cells(), Real(0));
  }
  // CheckMPI's three fields, each moving one cell forward.
  explicit Fields(const Grid& g) : Fields(g, Motion(Stencil{g.h, 3, 6}, false)) {}
  int count() const { return int(f.size()); }
  Real* data(int field) { return f[std::size_t(field)].data(); }
  const Real* data(int field) const { return f[std::size_t(field)].data(); }
  Real at(int field, int i, int j, int k) const { return f[std::size_t(field)][grid.index(i, j, k)]; }
  std::vector<Real*> pointers() {
    std::vector<Real*> p;
    for (auto& v : f) p.push_back(v.data());
    return p;
  }
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
  std::array<std::vector<Real>, 3> along;  // per direction, by interior index 1..n (0 and n+1 too)
  explicit InitialProfiles(const Grid& g)
      : along{initial_profile<Real>(g.l), initial_profile<Real>(g.m), initial_profile<Real>(g.n)} {}
};

// Interior index (1..n) that the value at interior index `i` came from
// after t steps of `v` cells each (periodic within the block).
inline int upstream(int i, long long t, int n, int v) {
  const long long shifted = ((i - 1) - (t % n) * (v % n)) % n;
  return int((shifted + n) % n) + 1;
}

// The periodic image of any index of the block (halos included) in 1..n.
inline int image(int i, int n) { return ((i - 1) % n + n) % n + 1; }

// The value a field moving by `v` holds at a cell after t steps: its initial
// value at the cell t steps upstream. A field starts as the sum of the
// profiles of the directions it moves along (CheckMPI's fields: the profile
// of its own direction), one at rest as x's. Every rank starts from the same
// periodic block, so "upstream" wraps within it, and a halo cell holds what
// its periodic image holds. Tabulated per direction (each index's term, halos
// included), so a block costs a lookup per moving direction and cell, the
// terms summed x, y, z in that order.
template <class Real>
class ExactValues {
 public:
  ExactValues(const InitialProfiles<Real>& p, const Offset& v, const Grid& g, long long t) : lo_(1 - g.h) {
    const std::array<int, 3> n = g.interior();
    const bool rest = v[0] == 0 && v[1] == 0 && v[2] == 0;
    for (std::size_t a = 0; a < 3; ++a) {
      if (v[a] == 0 && !(rest && a == 0)) continue;  // no term: an empty table
      for (int i = 1 - g.h; i <= n[a] + g.h; ++i) {
        const int at = image(i, n[a]);
        const int from = v[a] != 0 ? upstream(at, t, n[a], v[a]) : at;
        term_[a].push_back(p.along[a][std::size_t(from)]);  // at rest: a = 0, x's profile
      }
    }
  }
  Real operator()(int i, int j, int k) const {
    const int at[3] = {i - lo_, j - lo_, k - lo_};
    Real sum = Real(0);
    bool any = false;
    for (std::size_t a = 0; a < 3; ++a) {
      if (term_[a].empty()) continue;
      const Real term = term_[a][std::size_t(at[a])];
      sum = any ? sum + term : term;
      any = true;
    }
    return sum;
  }

 private:
  int lo_;
  std::array<std::vector<Real>, 3> term_;  // by index - lo_; empty for a direction the field does not move in
};

// The exact state after `t` steps (t = 0: the start), halos included (the
// next exchange overwrites them before any read).
template <class Real>
void initialise(Fields<Real>& fs, const InitialProfiles<Real>& p, long long t = 0) {
  const Grid& g = fs.grid;
  for (int f = 0; f < fs.count(); ++f) {
    const ExactValues<Real> exact(p, fs.motion.v[std::size_t(f)], g, t);
    Real* data = fs.data(f);
    for (int k = 1 - g.h; k <= g.n + g.h; ++k)
      for (int j = 1 - g.h; j <= g.m + g.h; ++j) {
        Real* row = data + g.index(0, j, k);
        for (int i = 1 - g.h; i <= g.l + g.h; ++i) row[i] = exact(i, j, k);
      }
  }
}

// The working set of a step's compute: the fields' arrays of a rank,
// halos included.
inline std::size_t field_bytes(const Grid& g, int fields, std::size_t real) {
  return std::size_t(fields) * g.cells() * real;
}

// Bytes a step's shift must move, what its compute is credited with: each
// interior cell of every field read once and written once.
inline std::size_t shift_bytes(const Grid& g, int fields, std::size_t real) {
  return 2 * std::size_t(fields) * std::size_t(g.l) * std::size_t(g.m) * std::size_t(g.n) * real;
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
// value t steps upstream along its field's velocity.
template <class Real>
Mismatch validate(const Fields<Real>& fs, const InitialProfiles<Real>& p, long long t) {
  const Grid& g = fs.grid;
  Mismatch m;
  for (int f = 0; f < fs.count(); ++f) {
    const ExactValues<Real> exact(p, fs.motion.v[std::size_t(f)], g, t);
    const Real* data = fs.data(f);
    for (int k = 1; k <= g.n; ++k)
      for (int j = 1; j <= g.m; ++j) {
        const std::size_t c = g.index(0, j, k);
        for (int i = 1; i <= g.l; ++i) {
          const Real expected = exact(i, j, k);
          const Real actual = data[c + std::size_t(i)];
          if (same_bits(actual, expected)) continue;
          if (m.count++ == 0) m = Mismatch{1, f + 1, i, j, k, double(expected), double(actual)};
        }
      }
  }
  return m;
}

}  // namespace checkmpi
