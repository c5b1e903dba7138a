// Output files written whole or not at all: the text goes to a temporary
// file beside the target (PATH.tmp.PID.N), which is renamed onto PATH only
// when complete. Until then, and after any failure, PATH keeps what it had.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace checkmpi {

class AtomicFile {
 public:
  // Creates the temporary; a failure shows in error() and later calls do nothing.
  // `sync`: fsync before the rename (worth it for one results file, not for
  // thousands of per-rank files).
  explicit AtomicFile(std::string path, bool sync = false);
  ~AtomicFile();  // removes the temporary unless committed
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  const std::string& path() const { return path_; }
  // "cannot write 'PATH': reason" for the first failure, "" while all is well.
  const std::string& error() const { return error_; }

  void append(const std::string& text);
  // Writes what is buffered, syncs if asked and closes the temporary;
  // returns error().
  const std::string& finish();
  // finish(), then renames the temporary onto PATH; returns error().
  const std::string& commit();

 private:
  void fail(const std::string& reason);
  void flush();

  std::string path_, temp_;
  bool sync_;
  int fd_ = -1;
  std::string buffer_;
  std::string error_;
  bool committed_ = false;
  int slot_ = -1;  // where remove_pending_temporaries() finds the temporary
};

// Removes the temporaries of every AtomicFile not yet committed; safe in a
// signal handler. A run stopped by a signal then leaves no trace beside the
// previous files (SIGKILL still leaves its temporaries: *.tmp.PID.N).
void remove_pending_temporaries();

// SIGTERM, SIGINT and SIGHUP remove the pending temporaries, then end the
// process as they would have.
void remove_temporaries_on_signals();

// Files completed one by one during a run and renamed into place together at
// its end, so that a run that fails or is stopped half-way leaves the
// previous run's files as they were. The temporaries of files never
// committed are removed on destruction.
class PendingFiles {
 public:
  // A path opened again replaces its pending file.
  AtomicFile& open(const std::string& path, bool sync = false);
  // finish() of every file; the first error, "" if none.
  std::string finish_all();
  // commit() of every file; the first error, "" if none.
  std::string commit_all();

 private:
  std::vector<std::unique_ptr<AtomicFile>> files_;
};

// Replaces PATH's contents with TEXT atomically, synced; returns "" or the
// error ("cannot write 'PATH': reason").
std::string write_file(const std::string& path, const std::string& text);

// Whether a file can be created in PATH's folder and renamed onto PATH
// (which must not be a directory), without touching PATH. "" or
// "cannot write WHAT 'PATH': reason".
std::string check_writable_file(const std::string& path, const std::string& what);

// Removes from folder DIR the temporaries (NAME.tmp.PID.N) of writers that
// no longer run on this node: what a process killed by SIGKILL left. Only
// for a run on one node, whose writers' PIDs are this node's. NAMES: the
// files this run writes there (a user's folder holds other files of that
// pattern); empty: any name (a folder of the tool's own). Returns how many
// it removed.
int remove_stale_temporaries(const std::string& dir, const std::vector<std::string>& names = {});

// Whether two paths name the same file: the same existing one (device and
// inode), or where one is still to be made the same path made absolute
// and normalised (r.json and ./r.json).
bool same_file(const std::string& a, const std::string& b);

}  // namespace checkmpi
