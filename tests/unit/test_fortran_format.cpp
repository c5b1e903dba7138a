#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "grid/fortran_format.hpp"

using checkmpi::fortran_e;
using checkmpi::fortran_i;

TEST(FortranE, ExamplesFromCheckMpiFiles) {
  EXPECT_EQ(fortran_e(0.98078528), "  0.980785E+00");
  EXPECT_EQ(fortran_e(-0.95694034), " -0.956940E+00");
  EXPECT_EQ(fortran_e(0.0), "  0.000000E+00");
}

TEST(FortranE, NegativeZeroKeepsItsSign) { EXPECT_EQ(fortran_e(-0.0), " -0.000000E+00"); }

TEST(FortranE, ExponentsBothSigns) {
  EXPECT_EQ(fortran_e(1.0), "  0.100000E+01");
  EXPECT_EQ(fortran_e(-1.0), " -0.100000E+01");
  EXPECT_EQ(fortran_e(123456.0), "  0.123456E+06");
  EXPECT_EQ(fortran_e(-8.742278e-08), " -0.874228E-07");
  EXPECT_EQ(fortran_e(3.4028235e38), "  0.340282E+39");
  EXPECT_EQ(fortran_e(1e-5), "  0.100000E-04");
}

TEST(FortranE, RoundsToSixSignificantDigits) {
  EXPECT_EQ(fortran_e(0.1234565001), "  0.123457E+00");
  EXPECT_EQ(fortran_e(0.1234564999), "  0.123456E+00");
  // Rounding that carries into the exponent.
  EXPECT_EQ(fortran_e(0.99999996), "  0.100000E+01");
  EXPECT_EQ(fortran_e(9.9999996), "  0.100000E+02");
}

TEST(FortranE, ThreeDigitExponentsDropTheE) {
  EXPECT_EQ(fortran_e(1e100), "  0.100000+101");
  EXPECT_EQ(fortran_e(-2.5e-200), " -0.250000-199");
}

TEST(FortranE, NonFinite) {
  EXPECT_EQ(fortran_e(std::numeric_limits<double>::quiet_NaN()), "           NaN");
  EXPECT_EQ(fortran_e(-std::numeric_limits<double>::infinity()), "     -Infinity");
}

TEST(FortranE, SinglePrecisionValuesPrintTheirOwnDigits) {
  const float v = std::sin(2.0f * 3.14159265f * 0.125f);
  EXPECT_EQ(fortran_e(double(v)), "  0.707107E+00");
}

TEST(FortranI, RightAlignedAndOverflowStars) {
  EXPECT_EQ(fortran_i(7, 5), "    7");
  EXPECT_EQ(fortran_i(-12, 5), "  -12");
  EXPECT_EQ(fortran_i(1510, 7), "   1510");
  EXPECT_EQ(fortran_i(123456, 5), "*****");
}
