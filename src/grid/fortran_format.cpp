#include "grid/fortran_format.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace checkmpi {

namespace {
std::string right_align(const std::string& s, int width) {
  if (static_cast<int>(s.size()) > width) return std::string(static_cast<size_t>(width), '*');
  return std::string(static_cast<size_t>(width) - s.size(), ' ') + s;
}
}  // namespace

std::string fortran_e(double value, int width, int digits) {
  if (std::isnan(value)) return right_align("NaN", width);
  if (std::isinf(value)) return right_align(value < 0 ? "-Infinity" : "Infinity", width);

  std::string sign = std::signbit(value) ? "-" : "";
  std::string mantissa(static_cast<size_t>(digits), '0');
  int exponent = 0;
  if (value != 0.0) {
    // printf rounds correctly to `digits` significant digits: d.ddddde±XX.
    // Fortran writes the same digits as 0.dddddd with the exponent one higher.
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*e", digits - 1, std::fabs(value));
    std::string s(buf);
    size_t e = s.find('e');
    mantissa = s.substr(0, 1) + (digits > 1 ? s.substr(2, e - 2) : "");
    exponent = std::atoi(s.c_str() + e + 1) + 1;
  }
  char exp_buf[16];
  int mag = std::abs(exponent);
  const char exp_sign = exponent < 0 ? '-' : '+';
  if (mag <= 99)
    std::snprintf(exp_buf, sizeof exp_buf, "E%c%02d", exp_sign, mag);
  else
    std::snprintf(exp_buf, sizeof exp_buf, "%c%03d", exp_sign, mag);
  return right_align(sign + "0." + mantissa + exp_buf, width);
}

std::string fortran_i(long long value, int width) {
  return right_align(std::to_string(value), width);
}

}  // namespace checkmpi
