#include "core/context.hpp"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <map>
#include <sstream>

// Open MPI declares its CUDA query in mpi-ext.h; MPICH (4.0 on) declares its
// GPU query in mpi.h. Neither needs CUDA to compile or to answer.
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif

#include "checkmpi_revision.h"  // CHECKMPI_GIT_REVISION, written at every build (cmake/revision.cmake)
#ifndef CHECKMPI_VERSION
#define CHECKMPI_VERSION "0.0.0"
#endif

namespace checkmpi {

std::string version_text() {
  return std::string(CHECKMPI_VERSION) + " (revision " + CHECKMPI_GIT_REVISION + ")";
}

std::optional<bool> mpi_cuda_aware(std::string* how) {
#if defined(MPIX_CUDA_AWARE_SUPPORT)
  // The macro is the build's answer; the function is the run-time library's.
  if (how) *how = "MPIX_Query_cuda_support";
  return MPIX_Query_cuda_support() != 0;
#elif defined(MPIX_GPU_SUPPORT_CUDA)
  if (how) *how = "MPIX_GPU_query_support";
  int supported = 0;
  if (MPIX_GPU_query_support(MPIX_GPU_SUPPORT_CUDA, &supported) != MPI_SUCCESS) return std::nullopt;
  return supported != 0;
#else
  if (how) *how = "this MPI has no query for it";
  return std::nullopt;
#endif
}

void node_local(MPI_Comm comm, int& local_rank, int& local_size) {
  MPI_Comm node;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  MPI_Comm_rank(node, &local_rank);
  MPI_Comm_size(node, &local_size);
  MPI_Comm_free(&node);
}

std::vector<std::string> allgather_strings(MPI_Comm comm, const std::string& mine) {
  // Fixed width keeps it one collective.
  constexpr int kWidth = 256;
  int size = 1;
  MPI_Comm_size(comm, &size);
  std::vector<char> own(kWidth, '\0'), all(static_cast<size_t>(kWidth) * static_cast<size_t>(size));
  std::copy_n(mine.begin(), std::min<size_t>(mine.size(), kWidth - 1), own.begin());
  MPI_Allgather(own.data(), kWidth, MPI_CHAR, all.data(), kWidth, MPI_CHAR, comm);
  std::vector<std::string> out;
  for (int r = 0; r < size; ++r) out.emplace_back(&all[static_cast<size_t>(r) * kWidth]);
  return out;
}

namespace {

// "0-3,8" for the CPUs set in `mask`.
std::string cpu_list(const cpu_set_t& mask) {
  std::string text;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (!CPU_ISSET(c, &mask)) continue;
    int last = c;
    while (last + 1 < CPU_SETSIZE && CPU_ISSET(last + 1, &mask)) ++last;
    text += (text.empty() ? "" : ",") + std::to_string(c) + (last > c ? "-" + std::to_string(last) : "");
    c = last;
  }
  return text;
}

// Every rank's affinity mask and online CPUs, gathered; per node, the union.
void add_cpus(RunContext& c, MPI_Comm comm) {
  cpu_set_t mine;
  CPU_ZERO(&mine);
  if (sched_getaffinity(0, sizeof mine, &mine) != 0) CPU_ZERO(&mine);
  const int online = int(sysconf(_SC_NPROCESSORS_ONLN));
  std::vector<cpu_set_t> all(size_t(c.nprocs));
  std::vector<int> onlines(size_t(c.nprocs));
  MPI_Allgather(&mine, int(sizeof mine), MPI_BYTE, all.data(), int(sizeof mine), MPI_BYTE, comm);
  MPI_Allgather(&online, 1, MPI_INT, onlines.data(), 1, MPI_INT, comm);
  std::vector<cpu_set_t> node(size_t(c.nodes));
  for (auto& m : node) CPU_ZERO(&m);
  c.ranks_on_node.assign(size_t(c.nodes), 0);
  c.online_cpus_per_node.assign(size_t(c.nodes), 0);
  for (int r = 0; r < c.nprocs; ++r) {
    const size_t n = size_t(c.node_of_rank[size_t(r)]);
    c.cpus_of_rank.push_back(cpu_list(all[size_t(r)]));
    CPU_OR(&node[n], &node[n], &all[size_t(r)]);
    ++c.ranks_on_node[n];
    c.online_cpus_per_node[n] = onlines[size_t(r)];
  }
  for (const auto& m : node) c.cpus_per_node.push_back(CPU_COUNT(&m));
  // The machine each rank's kernel runs: its boot id (the same in every namespace of one kernel), else its host.
  std::string boot;
  std::ifstream("/proc/sys/kernel/random/boot_id") >> boot;
  const std::vector<std::string> boots = allgather_strings(comm, boot);
  std::map<std::string, int> machine_of;
  std::map<std::pair<int, int>, double> load;  // (machine, CPU) -> ranks' shares
  for (int r = 0; r < c.nprocs; ++r) {
    const std::string& key = boots[size_t(r)].empty() ? "host:" + c.hostnames[size_t(r)] : boots[size_t(r)];
    const int m = machine_of.emplace(key, int(machine_of.size())).first->second;
    const int count = CPU_COUNT(&all[size_t(r)]);
    for (int cpu = 0; count > 0 && cpu < CPU_SETSIZE; ++cpu)
      if (CPU_ISSET(cpu, &all[size_t(r)])) load[{m, cpu}] += 1.0 / count;
  }
  c.machines = std::max(1, int(machine_of.size()));
  for (const auto& [where, share] : load) c.ranks_per_cpu = std::max(c.ranks_per_cpu, share);
}

int cpu_count(const std::string& cpus) {  // CPUs in "0-3,8"
  int count = 0;
  std::stringstream in(cpus);
  std::string range;
  while (std::getline(in, range, ',')) {
    const auto dash = range.find('-');
    const int a = std::stoi(range.substr(0, dash)), b = dash == std::string::npos ? a : std::stoi(range.substr(dash + 1));
    count += b - a + 1;
  }
  return count;
}

}  // namespace

bool oversubscribed(const RunContext& c, int threads_per_rank) {
  // Emulated nodes of one machine share its CPUs: the busiest CPU's share of ranks says it across them.
  if (c.ranks_per_cpu * threads_per_rank > 1.0 + 1e-9) return true;
  for (size_t n = 0; n < c.cpus_per_node.size(); ++n)
    if (c.cpus_per_node[n] > 0 && c.ranks_on_node[n] * threads_per_rank > c.cpus_per_node[n]) return true;
  return false;
}

std::string cpus_text(const RunContext& c, int threads_per_rank) {
  if (c.cpus_per_node.empty()) return "unknown";
  size_t worst = 0;  // the node with the most threads per CPU
  for (size_t n = 0; n < c.cpus_per_node.size(); ++n)
    if (double(c.ranks_on_node[n]) / std::max(c.cpus_per_node[n], 1) >
        double(c.ranks_on_node[worst]) / std::max(c.cpus_per_node[worst], 1))
      worst = n;
  auto plural = [](int n, const char* what) { return std::to_string(n) + " " + what + (n == 1 ? "" : "s"); };
  std::string text = plural(c.ranks_on_node[worst], "rank") + " x " + plural(threads_per_rank, "thread") + " on " +
                     plural(c.cpus_per_node[worst], "CPU") +
                     (c.nodes > 1 ? " (the busiest node, " + std::to_string(worst) + ")" : "");
  if (c.machines < c.nodes) {  // emulated nodes: their CPUs are some machine's, shared between them
    char share[32];
    std::snprintf(share, sizeof share, "%.3g", c.ranks_per_cpu);
    text += "; the " + std::to_string(c.nodes) + " nodes run on " + plural(c.machines, "machine") + ": " + share +
            " ranks per CPU";
  }
  if (oversubscribed(c, threads_per_rank)) text += ": OVERSUBSCRIBED, timings include the scheduler's time slices";
  return text;
}

std::string binding_text(const RunContext& c) {
  int least = 1 << 30, most = 0;
  bool whole_node = true;  // every rank may run on every CPU its node has online
  for (int r = 0; r < c.nprocs; ++r) {
    const int count = cpu_count(c.cpus_of_rank[size_t(r)]);
    const size_t n = size_t(c.node_of_rank[size_t(r)]);
    least = std::min(least, count);
    most = std::max(most, count);
    whole_node = whole_node && count >= std::max(c.cpus_per_node[n], n < c.online_cpus_per_node.size()
                                                                          ? c.online_cpus_per_node[n] : 0);
  }
  if (most == 0) return "unknown";
  if (whole_node) return "none (every rank may run on all its node's CPUs)";
  return (least == most ? std::to_string(least) : std::to_string(least) + "-" + std::to_string(most)) +
         (most == 1 ? " CPU" : " CPUs") + " per rank";
}

std::string placement_advice(const RunContext& c, int threads_per_rank) {
  if (!oversubscribed(c, threads_per_rank)) return "";
  const std::string per_rank = std::to_string(threads_per_rank) + " core" + (threads_per_rank > 1 ? "s" : "") +
                               " (Open MPI: --map-by slot:PE=" + std::to_string(threads_per_rank) +
                               "; MPICH: mpiexec -bind-to core:" + std::to_string(threads_per_rank) + ")";
  // The ranks confined to fewer CPUs than the node has (not emulated nodes, each some of a machine's CPUs).
  for (size_t n = 0; c.machines == c.nodes && n < c.cpus_per_node.size(); ++n)
    if (n < c.online_cpus_per_node.size() && c.cpus_per_node[n] > 0 &&
        c.cpus_per_node[n] < c.online_cpus_per_node[n] && c.ranks_on_node[n] * threads_per_rank > c.cpus_per_node[n])
      return "the ranks may run on " + std::to_string(c.cpus_per_node[n]) + " of the " +
             std::to_string(c.online_cpus_per_node[n]) + " CPUs online" + (c.nodes > 1 ? " on a node" : "") +
             ": if the job has more, give each rank " + per_rank;
  if (threads_per_rank < 2) return "";
  for (int r = 0; r < c.nprocs; ++r) {  // a rank may run on every CPU its node's ranks use, beside other ranks
    const size_t n = size_t(c.node_of_rank[size_t(r)]);
    if (c.ranks_on_node[n] > 1 && c.cpus_per_node[n] > 1 && cpu_count(c.cpus_of_rank[size_t(r)]) >= c.cpus_per_node[n])
      return "the ranks are not bound, so their threads, spinning at OpenMP barriers and in MPI, take the CPUs "
             "other ranks' threads wait for: bind each rank (MPICH: mpiexec -bind-to core; Open MPI binds by "
             "default) or set OMP_WAIT_POLICY=passive";
  }
  return "";
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

  char host[256] = {0};
  gethostname(host, sizeof host - 1);
  c.hostnames = allgather_strings(comm, host);
  std::map<std::string, int> node_index, node_count;
  for (int r = 0; r < c.nprocs; ++r) {
    const std::string& h = c.hostnames[static_cast<size_t>(r)];
    if (!node_index.count(h)) node_index[h] = static_cast<int>(node_index.size());
    c.node_of_rank.push_back(node_index[h]);
    c.ranks_per_node = std::max(c.ranks_per_node, ++node_count[h]);
  }
  c.nodes = static_cast<int>(node_index.size());
  add_cpus(c, comm);
  c.timer_resolution = MPI_Wtick();
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  if (rank == 0) {  // the one that writes the results
    c.cpu_model = cpu_model();
    c.caches = cpu_caches();
  }

  // Rank 0's clock dates the run. Gathered by all, not broadcast: a start-up
  // that sends as many bytes each way between two ranks leaves Open MPI's
  // shared-memory queues as a start-up without traffic does (OSU's); after
  // one broadcast every later barrier took 5-10 % longer (docs/p2p_osu.md,
  // item 17).
  char date[32] = {0};
  std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  c.date = allgather_strings(comm, date).front();
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
  j["cpus_of_rank"] = Json::array_of(c.cpus_of_rank);
  j["cpus_per_node"] = Json::array_of(c.cpus_per_node);
  j["ranks_on_node"] = Json::array_of(c.ranks_on_node);
  j["online_cpus_per_node"] = Json::array_of(c.online_cpus_per_node);
  j["binding"] = binding_text(c);
  j["machines"] = c.machines;
  j["ranks_per_cpu"] = c.ranks_per_cpu;
  Json cpu = Json::object();
  cpu["model"] = c.cpu_model;
  Json caches = Json::array();
  for (const CacheLevel& l : c.caches) {
    Json e = Json::object();
    e["level"] = l.level;
    e["type"] = l.type;
    e["bytes"] = l.bytes;
    e["shared_by"] = l.shared_by;
    caches.push(e);
  }
  cpu["caches"] = caches;
  j["cpu"] = cpu;
  return j;
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) != 0) continue;
    const auto colon = line.find(':');
    if (colon == std::string::npos) break;
    const auto first = line.find_first_not_of(" \t", colon + 1);
    return first == std::string::npos ? "" : line.substr(first);
  }
  return "";
}

namespace {

std::string first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// "0-3,8,10-11" -> 7
int cpus_in_list(const std::string& list) {
  int n = 0;
  std::stringstream items(list);
  std::string item;
  while (std::getline(items, item, ',')) {
    int a = 0, b = 0;
    if (std::sscanf(item.c_str(), "%d-%d", &a, &b) == 2) n += b - a + 1;
    else if (std::sscanf(item.c_str(), "%d", &a) == 1) ++n;
  }
  return n;
}

}  // namespace

std::vector<CacheLevel> cpu_caches() {
  std::vector<CacheLevel> out;
  for (int i = 0;; ++i) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/";
    const std::string level = first_line(dir + "level");
    if (level.empty()) break;
    CacheLevel c;
    c.level = std::atoi(level.c_str());
    c.type = first_line(dir + "type");
    std::transform(c.type.begin(), c.type.end(), c.type.begin(), [](unsigned char ch) { return char(std::tolower(ch)); });
    if (c.type == "instruction") continue;
    unsigned long long size = 0;
    char unit = 0;
    const std::string text = first_line(dir + "size");
    if (std::sscanf(text.c_str(), "%llu%c", &size, &unit) >= 1)
      c.bytes = size << (unit == 'K' ? 10 : unit == 'M' ? 20 : unit == 'G' ? 30 : 0);
    c.shared_by = cpus_in_list(first_line(dir + "shared_cpu_list"));
    out.push_back(c);
  }
  if (!out.empty()) return out;
  const int names[3][2] = {{1, _SC_LEVEL1_DCACHE_SIZE}, {2, _SC_LEVEL2_CACHE_SIZE}, {3, _SC_LEVEL3_CACHE_SIZE}};
  for (const auto& n : names) {
    const long bytes = sysconf(n[1]);
    if (bytes > 0) out.push_back({n[0], n[0] == 1 ? "data" : "unified", (unsigned long long)bytes, 0});
  }
  return out;
}

std::string cpu_text(const RunContext& c) {
  std::string text = c.cpu_model.empty() ? "unknown CPU" : c.cpu_model;
  std::string levels;
  for (const CacheLevel& l : c.caches) {
    if (l.level < 2) continue;
    const unsigned long long mib = l.bytes >> 20;
    levels += (levels.empty() ? "" : ", ") + std::string("L") + std::to_string(l.level) + " " +
              (mib > 0 && (l.bytes & ((1ULL << 20) - 1)) == 0 ? std::to_string(mib) + " MiB"
                                                               : std::to_string(l.bytes >> 10) + " KiB");
    if (l.shared_by > 1) levels += " shared by " + std::to_string(l.shared_by) + " CPUs";
  }
  return levels.empty() ? text : text + "; " + levels;
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
