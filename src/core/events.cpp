#include "core/events.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>

#include "core/atomic_file.hpp"
#include "core/errors.hpp"
#include "core/json.hpp"

namespace checkmpi::events {

namespace {
int fd = -1;
std::string name, program;
}  // namespace

void open(const std::string& path, int rank, const std::string& tool,
          const std::vector<std::pair<std::string, std::string>>& others) {
  if (rank != 0 || path.empty()) return;
  if (path == "-") throw UsageError("--events needs a file ('-' is not standard output here)");
  for (const auto& [other, what] : others)
    if (!other.empty() && other != "-" && same_file(path, other))
      throw UsageError("--events '" + path + "' is the " + what + "; the events need a file of their own");
  // Never through a link, never a FIFO (opening one for writing waited for a reader), a device or a folder.
  struct stat st;
  if (::lstat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
    throw UsageError("--events: cannot write '" + path + "': " +
                     (S_ISLNK(st.st_mode)  ? "it is a symbolic link (give its target or a new path)"
                      : S_ISDIR(st.st_mode) ? "it is a directory"
                                            : "it is not a regular file"));
  if (fd >= 0) ::close(fd);
  fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
  if (fd < 0) throw UsageError("--events: cannot write '" + path + "': " + std::strerror(errno));
  name = path;
  program = tool;
}

void start(long long index, long long count, const std::string& what) {
  if (fd < 0) return;
  Json j = Json::object();
  j["event"] = "start";
  j["index"] = index;
  j["count"] = count;
  j["what"] = what;
  const std::string line = j.dump(0) + "\n";
  std::size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = ::write(fd, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {  // a full disk, say: the run goes on without its progress lines
      std::cerr << (program + ": warning: --events '" + name + "': " + std::strerror(errno) +
                    "; no more progress lines there\n");
      ::close(fd);
      fd = -1;
      return;
    }
    done += std::size_t(n);
  }
}

}  // namespace checkmpi::events
