// Files a run leaves behind, in CheckMPI's formats: per-rank profiles
// (prof_i/j/k.NNNNNN.dat) and timing logs (task.NNNNNN.log).
#pragma once

#include <string>

#include "core/atomic_file.hpp"
#include "grid/fields.hpp"
#include "grid/fortran_format.hpp"
#include "grid/planes.hpp"

namespace checkmpi {

// DIR/STEM.NNNNNN.EXT with the rank zero-padded to six digits.
std::string rank_file(const std::string& dir, const std::string& stem, int rank, const std::string& ext);

// Profiles through the middle of the block: prof_i along x at j=m/2, k=n/2
// (1-based, as CheckMPI; at least 1 so a one-cell block still shows interior
// data), prof_j along y, prof_k along z. Each write appends one block:
// "# t=" and the step in 7 columns, one line per interior index (I5, then
// every field as E14.6, separated by one blank: CheckMPI's three), then two
// empty lines. The
// files are pending in `files`: they replace earlier ones when the run commits.
class ProfileFiles {
 public:
  ProfileFiles(PendingFiles& files, const std::string& dir, int rank);

  // Empty while every write succeeded, else the first failure.
  std::string error() const;
  // Completes the three files; returns the first error, empty on success.
  std::string close();

  template <class Real>
  void write(const Fields<Real>& fs, long long t) {
    const Grid& g = fs.grid;
    const int mid[3] = {std::max(1, g.l / 2), std::max(1, g.m / 2), std::max(1, g.n / 2)};
    for (int dir = 0; dir < 3; ++dir) {
      std::string text = "# t=" + fortran_i(t, 7) + "\n";
      for (int x = 1; x <= g.interior()[dir]; ++x) {
        int at[3] = {mid[0], mid[1], mid[2]};
        at[dir] = x;
        text += fortran_i(x, 5);
        for (int f = 0; f < fs.count(); ++f) {
          if (f) text += ' ';
          text += fortran_e(double(fs.at(f, at[0], at[1], at[2])));
        }
        text += '\n';
      }
      text += "\n\n";
      files_[dir]->append(text);
    }
  }

 private:
  AtomicFile* files_[3] = {nullptr, nullptr, nullptr};
};

}  // namespace checkmpi
