#include "grid/fields.hpp"

#include <cstdio>

namespace checkmpi {

std::string Mismatch::describe() const {
  char buf[256];
  std::snprintf(buf, sizeof buf, "field%d(%d,%d,%d) expected %.9g got %.9g; %lld wrong cell(s) on this rank",
                field, i, j, k, expected, actual, count);
  return buf;
}

}  // namespace checkmpi
