// Fortran-compatible number formatting, so profile files match CheckMPI's
// byte for byte.
#pragma once

#include <string>

namespace checkmpi {

// Fortran edit descriptor Ew.d: sign, "0.", d digits, exponent "E+dd"
// (or "+ddd" without the E when |exponent| > 99), right-aligned in w columns.
// Rounds to d significant digits, as gfortran does.
std::string fortran_e(double value, int width = 14, int digits = 6);

// Fortran Iw: integer right-aligned in w columns ('*' filled when too wide).
std::string fortran_i(long long value, int width);

}  // namespace checkmpi
