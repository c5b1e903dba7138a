// libFuzzer target: the namelist reader. Any text either parses or is
// refused with UsageError; anything else (a crash, another exception, a
// sanitizer report) is a bug.
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "core/errors.hpp"
#include "grid/config.hpp"
#include "grid/namelist.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::set<std::string> keys(checkmpi::halo_keys().begin(), checkmpi::halo_keys().end());
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> warnings;
  try {
    checkmpi::parse_namelist(text, "parameters", keys, "fuzz.input", &warnings);
  } catch (const checkmpi::UsageError&) {
  }
  return 0;
}
