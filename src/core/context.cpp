#include "core/context.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <map>
#include <sstream>

#ifndef CHECKMPI_GIT_REVISION
#define CHECKMPI_GIT_REVISION "unknown"
#endif
#ifndef CHECKMPI_VERSION
#define CHECKMPI_VERSION "0.0.0"
#endif

namespace checkmpi {

std::string version_text() {
  return std::string(CHECKMPI_VERSION) + " (revision " + CHECKMPI_GIT_REVISION + ")";
}

void node_local(MPI_Comm comm, int& local_rank, int& local_size) {
  MPI_Comm node;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  MPI_Comm_rank(node, &local_rank);
  MPI_Comm_size(node, &local_size);
  MPI_Comm_free(&node);
}

RunContext gather_context(MPI_Comm comm, const std::string& tool) {
  RunContext c;
  c.tool = tool;
  c.version = CHECKMPI_VERSION;
  c.git_revision = CHECKMPI_GIT_REVISION;
  MPI_Comm_size(comm, &c.nprocs);

  char lib[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  MPI_Get_library_version(lib, &len);
  std::string library(lib, static_cast<size_t>(len));
  library = library.substr(0, library.find('\n'));
  while (!library.empty() && (library.back() == ' ' || library.back() == '\r' || library.back() == '\0'))
    library.pop_back();
  c.mpi_library = library;
  MPI_Get_version(&c.mpi_version, &c.mpi_subversion);

  // Hostnames: fixed-width gather keeps it one collective.
  constexpr int kHost = 256;
  char host[kHost] = {0};
  gethostname(host, kHost - 1);
  std::vector<char> all(static_cast<size_t>(kHost) * c.nprocs);
  MPI_Allgather(host, kHost, MPI_CHAR, all.data(), kHost, MPI_CHAR, comm);
  std::map<std::string, int> node_index, node_count;
  for (int r = 0; r < c.nprocs; ++r) {
    std::string h(&all[static_cast<size_t>(r) * kHost]);
    c.hostnames.push_back(h);
    if (!node_index.count(h)) node_index[h] = static_cast<int>(node_index.size());
    c.node_of_rank.push_back(node_index[h]);
    c.ranks_per_node = std::max(c.ranks_per_node, ++node_count[h]);
  }
  c.nodes = static_cast<int>(node_index.size());
  c.timer_resolution = MPI_Wtick();

  // Rank 0's clock dates the run.
  char date[32] = {0};
  std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  MPI_Bcast(date, sizeof date, MPI_CHAR, 0, comm);
  c.date = date;
  return c;
}

Json context_json(const RunContext& c) {
  Json j = Json::object();
  j["tool"] = c.tool;
  j["version"] = c.version;
  j["git_revision"] = c.git_revision;
  j["date"] = c.date;
  j["mpi_library"] = c.mpi_library;
  j["mpi_standard"] = std::to_string(c.mpi_version) + "." + std::to_string(c.mpi_subversion);
  j["nprocs"] = c.nprocs;
  j["nodes"] = c.nodes;
  j["ranks_per_node"] = c.ranks_per_node;
  j["hostnames"] = Json::array_of(c.hostnames);
  j["timer_resolution"] = c.timer_resolution;
  return j;
}

unsigned long long available_memory_bytes() {
  std::ifstream in("/proc/meminfo");
  std::string line;
  unsigned long long kb = 0;
  while (std::getline(in, line))
    if (std::sscanf(line.c_str(), "MemAvailable: %llu kB", &kb) == 1) return kb * 1024ULL;
  return 0;
}

}  // namespace checkmpi
