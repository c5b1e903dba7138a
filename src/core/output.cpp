#include "core/output.hpp"

#include <sys/stat.h>

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

namespace checkmpi {

std::string rank_file(const std::string& dir, const std::string& stem, int rank, const std::string& ext) {
  char num[16];
  std::snprintf(num, sizeof num, "%06d", rank);
  return dir + "/" + stem + "." + num + "." + ext;
}

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

std::string check_writable_file(const std::string& path, const std::string& what) {
  const bool existed = ::access(path.c_str(), F_OK) == 0;
  std::FILE* f = std::fopen(path.c_str(), "a");
  if (!f) return "cannot write " + what + " '" + path + "': " + std::strerror(errno);
  std::fclose(f);
  if (!existed) std::remove(path.c_str());
  return "";
}

bool write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  out.close();
  return static_cast<bool>(out);
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

ProfileFiles::ProfileFiles(const std::string& dir, int rank) {
  const char* stems[3] = {"prof_i", "prof_j", "prof_k"};
  for (int d = 0; d < 3; ++d) {
    paths_[d] = rank_file(dir, stems[d], rank, "dat");
    files_[d] = std::fopen(paths_[d].c_str(), "w");
  }
}

ProfileFiles::~ProfileFiles() { close(); }

std::string ProfileFiles::error() const {
  if (closed_) return close_error_;
  for (int d = 0; d < 3; ++d)
    if (!files_[d] || std::ferror(files_[d])) return "cannot write '" + paths_[d] + "'";
  return failed_ ? "cannot write profile files" : "";
}

std::string ProfileFiles::close() {
  if (closed_) return close_error_;
  close_error_ = error();
  for (int d = 0; d < 3; ++d) {
    if (files_[d] && std::fclose(files_[d]) != 0 && close_error_.empty())
      close_error_ = "cannot write '" + paths_[d] + "'";
    files_[d] = nullptr;
  }
  closed_ = true;
  return close_error_;
}

}  // namespace checkmpi
