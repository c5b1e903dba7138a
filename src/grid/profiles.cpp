#include "grid/profiles.hpp"

#include <cstdio>

namespace checkmpi {

std::string rank_file(const std::string& dir, const std::string& stem, int rank, const std::string& ext) {
  char num[16];
  std::snprintf(num, sizeof num, "%06d", rank);
  return dir + "/" + stem + "." + num + "." + ext;
}

ProfileFiles::ProfileFiles(PendingFiles& files, const std::string& dir, int rank) {
  const char* stems[3] = {"prof_i", "prof_j", "prof_k"};
  for (int d = 0; d < 3; ++d) files_[d] = &files.open(rank_file(dir, stems[d], rank, "dat"));
}

std::string ProfileFiles::error() const {
  for (const AtomicFile* f : files_)
    if (!f->error().empty()) return f->error();
  return "";
}

std::string ProfileFiles::close() {
  for (AtomicFile* f : files_) f->finish();
  return error();
}

}  // namespace checkmpi
