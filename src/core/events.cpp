#include "core/events.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "core/errors.hpp"
#include "core/json.hpp"

namespace checkmpi::events {

namespace {
std::FILE* file = nullptr;
}

void open(const std::string& path, int rank) {
  if (rank != 0 || path.empty()) return;
  if (file) std::fclose(file);
  file = std::fopen(path.c_str(), "w");
  if (!file) throw UsageError("--events: cannot write '" + path + "': " + std::strerror(errno));
}

void start(long long index, long long count, const std::string& what) {
  if (!file) return;
  Json j = Json::object();
  j["event"] = "start";
  j["index"] = index;
  j["count"] = count;
  j["what"] = what;
  const std::string line = j.dump(0) + "\n";
  std::fwrite(line.data(), 1, line.size(), file);
  std::fflush(file);
}

}  // namespace checkmpi::events
