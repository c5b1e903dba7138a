#include "core/atomic_file.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <regex>

namespace checkmpi {

namespace {

constexpr std::size_t kBufferBytes = 1 << 16;

// The temporaries not yet renamed, where a signal handler can read them
// (no allocation, no locks): a slot is free (0), being filled (1) or live (2).
struct Slot {
  std::atomic<int> state{0};
  char path[4096];
};
Slot slots[256];

int remember(const std::string& temp) {
  if (temp.size() >= sizeof slots[0].path) return -1;
  for (int i = 0; i < int(sizeof slots / sizeof slots[0]); ++i) {
    int free = 0;
    if (!slots[i].state.compare_exchange_strong(free, 1)) continue;
    std::memcpy(slots[i].path, temp.c_str(), temp.size() + 1);
    slots[i].state.store(2);
    return i;
  }
  return -1;  // too many at once: this one is not removed on a signal
}

void forget(int slot) {
  if (slot >= 0) slots[slot].state.store(0);
}

void on_signal(int sig) {
  remove_pending_temporaries();
  std::signal(sig, SIG_DFL);
  std::raise(sig);  // delivered once the handler returns: the default action
}

// Opens a new temporary beside `path`; sets `temp` and returns the
// descriptor, or -1 with errno set.
int open_temporary(const std::string& path, std::string& temp) {
  static std::atomic<unsigned> counter{0};
  for (int attempt = 0; attempt < 100; ++attempt) {
    temp = path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
    const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  return -1;
}

// Why `path` cannot be replaced by a renamed file, or "": a new path or a
// regular file can; a rename would replace a symbolic link itself (not
// its target) and a device or a pipe by a file.
std::string not_replaceable(const std::string& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) return "";
  if (S_ISLNK(st.st_mode)) return "it is a symbolic link (give its target or a new path)";
  if (S_ISDIR(st.st_mode)) return "it is a directory";
  if (!S_ISREG(st.st_mode)) return "it is not a regular file (checkmpi replaces its outputs whole)";
  return "";
}

}  // namespace

AtomicFile::AtomicFile(std::string path, bool sync) : path_(std::move(path)), sync_(sync) {
  if (const std::string why = not_replaceable(path_); !why.empty()) {
    fail(why);
    return;
  }
  fd_ = open_temporary(path_, temp_);
  if (fd_ < 0) {
    fail(std::strerror(errno));
    temp_.clear();
  } else {
    slot_ = remember(temp_);
  }
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_ && !temp_.empty()) ::unlink(temp_.c_str());
  forget(slot_);
}

void AtomicFile::fail(const std::string& reason) {
  if (error_.empty()) error_ = "cannot write '" + path_ + "': " + reason;
}

void AtomicFile::append(const std::string& text) {
  if (fd_ < 0) return;
  buffer_ += text;
  if (buffer_.size() >= kBufferBytes) flush();
}

void AtomicFile::flush() {
  const char* p = buffer_.data();
  std::size_t left = buffer_.size();
  while (left > 0 && fd_ >= 0) {
    const ssize_t n = ::write(fd_, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      fail(n < 0 ? std::strerror(errno) : "nothing written");
      ::close(fd_);
      fd_ = -1;
      break;
    }
    p += n;
    left -= std::size_t(n);
  }
  buffer_.clear();
}

const std::string& AtomicFile::finish() {
  if (fd_ < 0) return error_;
  flush();
  if (fd_ < 0) return error_;
  if (sync_ && ::fsync(fd_) != 0) fail(std::strerror(errno));
  if (::close(fd_) != 0) fail(std::strerror(errno));
  fd_ = -1;
  return error_;
}

const std::string& AtomicFile::commit() {
  finish();
  if (!error_.empty() || committed_ || temp_.empty()) return error_;
  if (::rename(temp_.c_str(), path_.c_str()) != 0) fail(std::strerror(errno));
  else committed_ = true;
  if (committed_) {
    forget(slot_);
    slot_ = -1;
  }
  return error_;
}

void remove_pending_temporaries() {
  for (Slot& s : slots)
    if (s.state.load() == 2) ::unlink(s.path);
}

void remove_temporaries_on_signals() {
  for (int sig : {SIGTERM, SIGINT, SIGHUP}) std::signal(sig, on_signal);
}

AtomicFile& PendingFiles::open(const std::string& path, bool sync) {
  for (auto& f : files_)  // a file written again (--repeat) replaces the pending one
    if (f->path() == path) {
      f = std::make_unique<AtomicFile>(path, sync);
      return *f;
    }
  files_.push_back(std::make_unique<AtomicFile>(path, sync));
  return *files_.back();
}

std::string PendingFiles::finish_all() {
  std::string first;
  for (auto& f : files_)
    if (const std::string& e = f->finish(); first.empty()) first = e;
  return first;
}

std::string PendingFiles::commit_all() {
  std::string first = finish_all();
  if (!first.empty()) return first;
  for (auto& f : files_)
    if (const std::string& e = f->commit(); first.empty()) first = e;
  return first;
}

std::string write_file(const std::string& path, const std::string& text) {
  AtomicFile f(path, /*sync=*/true);
  f.append(text);
  return f.commit();
}

std::string check_writable_file(const std::string& path, const std::string& what) {
  if (const std::string why = not_replaceable(path); !why.empty())
    return "cannot write " + what + " '" + path + "': " + why;
  std::string temp;
  const int fd = open_temporary(path, temp);
  if (fd < 0) return "cannot write " + what + " '" + path + "': " + std::strerror(errno);
  ::close(fd);
  ::unlink(temp.c_str());
  return "";
}

int remove_stale_temporaries(const std::string& dir, const std::vector<std::string>& names) {
  static const std::regex temporary(R"((.+)\.tmp\.([0-9]{1,9})\.[0-9]+)");
  DIR* d = ::opendir(dir.empty() ? "." : dir.c_str());
  if (!d) return 0;
  int removed = 0;
  while (const dirent* e = ::readdir(d)) {
    std::cmatch m;
    if (!std::regex_match(e->d_name, m, temporary)) continue;
    if (!names.empty() && std::find(names.begin(), names.end(), m[1].str()) == names.end()) continue;
    const pid_t pid = pid_t(std::stol(m[2].str()));
    if (pid == ::getpid() || ::kill(pid, 0) == 0 || errno != ESRCH) continue;  // running, or not ours to know
    const std::string path = (dir.empty() ? "" : dir + "/") + e->d_name;
    struct stat st;
    if (::lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::unlink(path.c_str()) == 0) ++removed;
  }
  ::closedir(d);
  return removed;
}

bool same_file(const std::string& a, const std::string& b) {
  struct stat sa, sb;
  const bool has_a = ::stat(a.c_str(), &sa) == 0, has_b = ::stat(b.c_str(), &sb) == 0;
  if (has_a && has_b) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  std::error_code ea, eb;  // one is still to be made: the same path once made absolute and normalised
  const auto ca = std::filesystem::weakly_canonical(std::filesystem::absolute(a, ea), ea);
  const auto cb = std::filesystem::weakly_canonical(std::filesystem::absolute(b, eb), eb);
  return !ea && !eb && ca == cb;
}

}  // namespace checkmpi
