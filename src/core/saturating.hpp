// Arithmetic on non-negative sizes and counts taken from input: on overflow
// the result sticks at LLONG_MAX instead of wrapping around, so that a limit
// checked afterwards cannot be slipped past.
#pragma once

#include <climits>

namespace checkmpi {

inline long long sat_mul(long long a, long long b) {
  long long r = 0;
  return __builtin_mul_overflow(a, b, &r) ? LLONG_MAX : r;
}

inline long long sat_add(long long a, long long b) {
  long long r = 0;
  return __builtin_add_overflow(a, b, &r) ? LLONG_MAX : r;
}

}  // namespace checkmpi
