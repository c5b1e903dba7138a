// Files written whole or not at all.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/atomic_file.hpp"

using namespace checkmpi;
namespace fs = std::filesystem;

namespace {

struct Folder {
  fs::path path;
  Folder() {
    char name[] = "/tmp/checkmpi-atomic.XXXXXX";
    path = ::mkdtemp(name);
  }
  ~Folder() { fs::remove_all(path); }
  std::string file(const std::string& name) const { return (path / name).string(); }
  std::size_t entries() const { return std::size_t(std::distance(fs::directory_iterator(path), {})); }
};

std::string contents(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST(AtomicFile, ReplacesOnlyWhenCommitted) {
  Folder dir;
  const std::string target = dir.file("r.json");
  ASSERT_EQ(write_file(target, "earlier\n"), "");
  {
    AtomicFile f(target);
    f.append("new ");
    f.append(std::string(100000, 'x'));  // beyond one buffer
    EXPECT_EQ(contents(target), "earlier\n");  // nothing visible before the commit
    EXPECT_EQ(dir.entries(), 2u);              // the target and the temporary
  }
  EXPECT_EQ(contents(target), "earlier\n");  // dropped: the temporary is gone, the file as it was
  EXPECT_EQ(dir.entries(), 1u);
  AtomicFile f(target);
  f.append("new\n");
  EXPECT_EQ(f.commit(), "");
  EXPECT_EQ(contents(target), "new\n");
  EXPECT_EQ(dir.entries(), 1u);
}

TEST(AtomicFile, FailuresNameThePathAndTheReason) {
  Folder dir;
  AtomicFile missing(dir.file("no/such/dir/r.json"));
  missing.append("x");
  EXPECT_EQ(missing.commit(), "cannot write '" + dir.file("no/such/dir/r.json") + "': No such file or directory");
  EXPECT_EQ(write_file(dir.file("no/r.json"), "x"), "cannot write '" + dir.file("no/r.json") +
                                                        "': No such file or directory");
  fs::create_directory(dir.path / "adir");
  EXPECT_EQ(check_writable_file(dir.file("adir"), "JSON file"),
            "cannot write JSON file '" + dir.file("adir") + "': it is a directory");
  EXPECT_EQ(check_writable_file(dir.file("new.json"), "JSON file"), "");
  EXPECT_FALSE(fs::exists(dir.path / "new.json"));  // the check leaves nothing behind
}

TEST(AtomicFile, PendingFilesCommitTogetherAndTemporariesCanBeRemoved) {
  Folder dir;
  {
    PendingFiles files;
    files.open(dir.file("a")).append("a");
    files.open(dir.file("b")).append("b");
    EXPECT_EQ(files.finish_all(), "");
    EXPECT_FALSE(fs::exists(dir.path / "a"));
    remove_pending_temporaries();  // what a signal handler does
    EXPECT_EQ(dir.entries(), 0u);
  }
  PendingFiles files;
  files.open(dir.file("a")).append("a");
  files.open(dir.file("b")).append("b");
  EXPECT_EQ(files.commit_all(), "");
  EXPECT_EQ(contents(dir.file("a")) + contents(dir.file("b")), "ab");
  remove_pending_temporaries();  // committed files are no longer pending
  EXPECT_EQ(dir.entries(), 2u);
}
