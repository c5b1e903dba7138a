#include "core/text.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace checkmpi {

std::string make_directories(const std::string& dir) {
  std::string path;
  size_t pos = 0;
  while (pos != std::string::npos) {
    pos = dir.find('/', pos + 1);
    path = dir.substr(0, pos);
    if (path.empty()) continue;
    if (::mkdir(path.c_str(), 0755) != 0 && errno != EEXIST)
      return "cannot create output directory '" + path + "': " + std::strerror(errno);
  }
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    return "output directory '" + dir + "' is not a directory";
  return "";
}

std::string fixed(double v, int precision) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", precision, v);
  return buf;
}

std::string human_bytes(double b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int u = 0;
  while (b >= 1024 && u < 6) b /= 1024, ++u;
  return fixed(b, 1) + " " + units[u];
}

}  // namespace checkmpi
