// Files written whole or not at all.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

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

TEST(AtomicFile, StaleTemporariesOfStoppedWritersAreRemoved) {
  Folder dir;
  const pid_t child = ::fork();  // a PID that no longer runs once reaped
  if (child == 0) ::_exit(0);
  ASSERT_GT(child, 0);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  const std::string dead = std::to_string(child), mine = std::to_string(::getpid());
  const std::vector<std::string> names{"r.json.tmp." + dead + ".0", "prof_i.000001.dat.tmp." + dead + ".7",
                                       "r.json.tmp." + mine + ".1", "r.json.tmp.1.0", "r.json", "r.json.tmp.x.0"};
  for (const std::string& name : names) std::ofstream(dir.file(name)) << "x";
  fs::create_directory(dir.file("d.tmp." + dead + ".2"));  // not a file: left alone
  EXPECT_EQ(remove_stale_temporaries(dir.path.string()), 2);
  EXPECT_FALSE(fs::exists(dir.file("r.json.tmp." + dead + ".0")));
  EXPECT_FALSE(fs::exists(dir.file("prof_i.000001.dat.tmp." + dead + ".7")));
  EXPECT_TRUE(fs::exists(dir.file("r.json.tmp." + mine + ".1")));  // this process: its own, still written
  EXPECT_TRUE(fs::exists(dir.file("r.json.tmp.1.0")));             // PID 1 runs
  EXPECT_EQ(dir.entries(), 5u);
  EXPECT_EQ(remove_stale_temporaries(dir.file("missing")), 0);
}

TEST(AtomicFile, StaleTemporariesOfOtherNamesStay) {
  Folder dir;
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ASSERT_GT(child, 0);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  const std::string dead = std::to_string(child);
  // A user's files that only look like temporaries (a thesis draft, a data file), beside the run's own.
  for (const std::string& name :
       {"thesis.tmp." + dead + ".12", "data.csv.tmp." + dead + ".0", "r.json.tmp." + dead + ".3"})
    std::ofstream(dir.file(name)) << "x";
  EXPECT_EQ(remove_stale_temporaries(dir.path.string(), {"r.json", "s.json"}), 1);
  EXPECT_FALSE(fs::exists(dir.file("r.json.tmp." + dead + ".3")));
  EXPECT_TRUE(fs::exists(dir.file("thesis.tmp." + dead + ".12")));
  EXPECT_TRUE(fs::exists(dir.file("data.csv.tmp." + dead + ".0")));
}

TEST(AtomicFile, SameFileInTwoSpellings) {
  Folder dir;
  const std::string a = dir.file("r.json"), b = dir.path.string() + "/./sub/../r.json";
  EXPECT_TRUE(same_file(a, b));  // neither exists yet
  EXPECT_FALSE(same_file(a, dir.file("s.json")));
  std::ofstream(a) << "x";
  EXPECT_TRUE(same_file(a, b));
  fs::create_symlink(a, dir.file("link.json"));
  EXPECT_TRUE(same_file(dir.file("link.json"), a));
  EXPECT_FALSE(same_file(a, dir.file("s.json")));
}
