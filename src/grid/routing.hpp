// The routing check: fields whose every interior cell holds a code for its
// global position, moved a few steps by a strategy, then compared cell by
// cell with the code of the global cell upstream. CheckMPI's initial
// condition repeats on every rank, so a message from the wrong neighbour, in
// the wrong direction or with the wrong sign, or a halo not refreshed, leaves
// it unchanged; these codes do not.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>

#include "grid/decomposition.hpp"
#include "grid/fields.hpp"

namespace checkmpi {

// Steps of the check: the second catches a halo received once and then left stale.
constexpr int kRoutingSteps = 2;

// A global cell index as the bit pattern of a normal (finite, non-zero,
// non-denormal) floating-point number, so that copies and MPI move it
// untouched: the mantissa holds the low bits, the exponent and sign the rest.
// Single precision tells 2 * 254 * 2^23 (4.26e9) cells apart, double far more;
// larger grids wrap around. Zero is no code: the halos start as +0.0.
template <class Real>
struct CellCode {
  using Bits = std::conditional_t<sizeof(Real) == 4, std::uint32_t, std::uint64_t>;
  static constexpr int kMantissa = std::numeric_limits<Real>::digits - 1;
  static constexpr Bits kExponents = (Bits(1) << (8 * sizeof(Real) - 1 - kMantissa)) - 2;  // normal ones
  static constexpr Bits kLow = (Bits(1) << kMantissa) - 1;

  static Real encode(std::uint64_t index) {
    const std::uint64_t high = (index >> kMantissa) % (2 * std::uint64_t(kExponents));
    const Bits bits = Bits(high / kExponents) << (8 * sizeof(Real) - 1) |
                      Bits(1 + high % kExponents) << kMantissa | Bits(index & kLow);
    Real r;
    std::memcpy(&r, &bits, sizeof r);
    return r;
  }
  // The index (modulo what the type tells apart), or false for a value that
  // is no code (a halo never written, or anything else).
  static bool decode(Real r, std::uint64_t& index) {
    Bits bits;
    std::memcpy(&bits, &r, sizeof bits);
    const Bits exponent = (bits >> kMantissa) & (kExponents + 1);
    if (exponent == 0 || exponent == kExponents + 1) return false;
    const std::uint64_t sign = bits >> (8 * sizeof(Real) - 1);
    index = ((sign * kExponents + (exponent - 1)) << kMantissa) | (bits & kLow);
    return true;
  }
};

// Global cells of the box, 0-based, and their linear index (x fastest).
struct GlobalBox {
  std::array<long long, 3> size{};    // lx, ly, lz
  std::array<long long, 3> origin{};  // this rank's first interior cell
  explicit GlobalBox(const Decomposition& d);
  std::uint64_t index(const std::array<long long, 3>& at) const {
    return std::uint64_t(at[0]) + std::uint64_t(size[0]) * (std::uint64_t(at[1]) + std::uint64_t(size[1]) *
                                                                                      std::uint64_t(at[2]));
  }
};

// The first wrong cell on this rank.
struct RouteMismatch {
  long long count = 0;                  // wrong cells on this rank
  int field = 0, i = 0, j = 0, k = 0;   // local, 1-based as CheckMPI
  std::array<long long, 3> expected{};  // global cell whose value belongs here
  bool decodable = false;               // whether the value found is some cell's code
  std::uint64_t found = 0;              // and if so, that cell's index
  // "field2(3,1,2) holds the value of global cell (3,9,2) (rank 5), expected
  // global cell (3,4,2) from rank 1; 12 wrong cell(s) on this rank"; global
  // cells 1-based. Looks up ranks in d's communicator (no communication).
  std::string describe(const Decomposition& d) const;
};

// Interior cells: the code of their global cell; halos: +0.0.
template <class Real>
void initialise_routing(Fields<Real>& fs, const Decomposition& d) {
  const GlobalBox box(d);
  const Grid& g = fs.grid;
  for (auto& v : fs.f) std::fill(v.begin(), v.end(), Real(0));
  for (int k = 1; k <= g.n; ++k)
    for (int j = 1; j <= g.m; ++j)
      for (int i = 1; i <= g.l; ++i) {
        const Real code = CellCode<Real>::encode(box.index({box.origin[0] + i - 1, box.origin[1] + j - 1,
                                                            box.origin[2] + k - 1}));
        for (auto& v : fs.f) v[g.index(i, j, k)] = code;
      }
}

// After t steps, field f's interior cell must hold the code of the global cell
// t steps upstream along its velocity (periodic over the whole box).
template <class Real>
RouteMismatch check_routing(const Fields<Real>& fs, const Decomposition& d, long long t) {
  const GlobalBox box(d);
  const Grid& g = fs.grid;
  RouteMismatch m;
  for (int f = 0; f < fs.count(); ++f) {
    const Offset& v = fs.motion.v[std::size_t(f)];
    for (int k = 1; k <= g.n; ++k)
      for (int j = 1; j <= g.m; ++j)
        for (int i = 1; i <= g.l; ++i) {
          std::array<long long, 3> at{box.origin[0] + i - 1, box.origin[1] + j - 1, box.origin[2] + k - 1};
          for (std::size_t a = 0; a < 3; ++a) {
            const long long n = box.size[a];
            at[a] = ((at[a] - (t % n) * (v[a] % n)) % n + n) % n;
          }
          const Real actual = fs.at(f, i, j, k);
          if (same_bits(actual, CellCode<Real>::encode(box.index(at)))) continue;
          if (m.count++ > 0) continue;
          m.field = f + 1, m.i = i, m.j = j, m.k = k, m.expected = at;
          m.decodable = CellCode<Real>::decode(actual, m.found);
        }
  }
  return m;
}

}  // namespace checkmpi
