// Files a run leaves behind, in CheckMPI's formats: per-rank profiles
// (prof_i/j/k.NNNNNN.dat) and timing logs (task.NNNNNN.log).
#pragma once

#include <cstdio>
#include <string>

#include "core/fields.hpp"
#include "core/fortran_format.hpp"
#include "core/halo.hpp"

namespace checkmpi {

// DIR/STEM.NNNNNN.EXT with the rank zero-padded to six digits.
std::string rank_file(const std::string& dir, const std::string& stem, int rank, const std::string& ext);

// Creates DIR and its parents; returns an error text, empty on success.
std::string make_directories(const std::string& dir);

// Whether PATH can be written, without touching an existing file (opened for
// appending, removed again if it did not exist). Returns "cannot write WHAT
// 'PATH': reason", empty on success.
std::string check_writable_file(const std::string& path, const std::string& what);

// Replaces PATH's contents with TEXT; false on any failure.
bool write_file(const std::string& path, const std::string& text);

// printf's %.Nf
std::string fixed(double v, int precision);

// "1.5 GiB"
std::string human_bytes(double bytes);

// Profiles through the middle of the block: prof_i along x at j=m/2, k=n/2
// (1-based, as CheckMPI; at least 1 so a one-cell block still shows interior
// data), prof_j along y, prof_k along z. Each write appends one block:
// "# t=" and the step in 7 columns, one line per interior index (I5, then the
// three fields as E14.6 separated by one blank), then two empty lines.
class ProfileFiles {
 public:
  ProfileFiles(const std::string& dir, int rank);
  ~ProfileFiles();
  ProfileFiles(const ProfileFiles&) = delete;
  ProfileFiles& operator=(const ProfileFiles&) = delete;

  // Empty when all three files are open and every write succeeded.
  std::string error() const;
  // Flushes and closes; returns the first error, empty on success.
  std::string close();

  template <class Real>
  void write(const Fields<Real>& fs, long long t) {
    const Grid& g = fs.grid;
    const int mid[3] = {std::max(1, g.l / 2), std::max(1, g.m / 2), std::max(1, g.n / 2)};
    for (int dir = 0; dir < 3; ++dir) {
      std::FILE* out = files_[dir];
      if (!out) continue;
      std::string text = "# t=" + fortran_i(t, 7) + "\n";
      for (int x = 1; x <= g.interior()[dir]; ++x) {
        int at[3] = {mid[0], mid[1], mid[2]};
        at[dir] = x;
        text += fortran_i(x, 5);
        for (int f = 0; f < 3; ++f) {
          if (f) text += ' ';
          text += fortran_e(double(fs.at(f, at[0], at[1], at[2])));
        }
        text += '\n';
      }
      text += "\n\n";
      if (std::fwrite(text.data(), 1, text.size(), out) != text.size()) failed_ = true;
    }
  }

 private:
  std::FILE* files_[3] = {nullptr, nullptr, nullptr};
  std::string paths_[3];
  bool failed_ = false;
  bool closed_ = false;
  std::string close_error_;
};

}  // namespace checkmpi
