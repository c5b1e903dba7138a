// What a result needs to be interpreted later: where and with what it ran.
#pragma once

#include <mpi.h>

#include <optional>
#include <string>
#include <vector>

#include "core/json.hpp"

namespace checkmpi {

// One level of rank 0's CPU caches (Linux sysfs; sysconf where sysfs has none).
struct CacheLevel {
  int level = 0;
  std::string type;           // "data", "instruction" or "unified"
  unsigned long long bytes = 0;
  int shared_by = 0;          // logical CPUs sharing one instance (0: unknown)
};

struct RunContext {
  std::string tool;                   // "checkmpi-halo", "checkmpi-p2p"
  std::string version;                // checkmpi's version
  std::string git_revision;
  std::string mpi_library;            // first line of MPI_Get_library_version
  int mpi_version = 0, mpi_subversion = 0;
  int nprocs = 1;
  int nodes = 1;
  int ranks_per_node = 1;             // the most on any node
  std::vector<std::string> hostnames; // by rank
  std::vector<int> node_of_rank;      // node index (order of first appearance)
  double timer_resolution = 0.0;      // MPI_Wtick
  std::vector<std::string> cpus_of_rank; // by rank: the CPUs it may run on (affinity), e.g. "0-3,8"
  std::vector<int> cpus_per_node;     // by node: CPUs its ranks may use between them (union of the above)
  std::vector<int> ranks_on_node;     // by node
  std::vector<int> online_cpus_per_node;  // by node: logical CPUs online
  // Machines (kernels: distinct boot ids) the nodes run on: fewer than `nodes` where nodes are emulated on one
  // machine (scripts/cluster-local.sh), whose CPU numbers are then one set shared by those nodes.
  int machines = 1;
  // The busiest CPU's share of ranks: per machine and CPU, each rank that may run there counted as 1 / the CPUs it
  // may run on. 2 for 4 ranks on 2 CPUs, whether of one node or of 4 emulated nodes of one CPU each on 2.
  double ranks_per_cpu = 0.0;
  std::string cpu_model;              // rank 0's, from /proc/cpuinfo ("" if unknown)
  std::vector<CacheLevel> caches;     // rank 0's, by level: host results depend on them
  std::string date;                   // UTC, ISO 8601
};

// "0.1.0 (revision abc1234)"
std::string version_text();

// Whether some node runs more threads (ranks times `threads_per_rank`) than
// its ranks have CPUs: timings then include the scheduler's time slices.
bool oversubscribed(const RunContext& c, int threads_per_rank);
// "4 ranks x 1 thread on 2 CPUs (node n0): oversubscribed" or "2 ranks x 1
// thread on 2 CPUs per node"; each rank's binding: "none" (all the CPUs its
// node has online) or "1 CPU per rank" or "2-4 CPUs per rank".
std::string cpus_text(const RunContext& c, int threads_per_rank);
std::string binding_text(const RunContext& c);
// What to change where the run is oversubscribed ("" where nothing would
// help): ranks confined to fewer CPUs than their node has online (Open MPI
// binds 1 or 2 ranks to a core each by default, their threads taking turns
// there), or ranks of several threads each that may run on every CPU their
// node's ranks use (MPICH's hydra binds nothing by default: 2 ranks x 2
// threads of 128^3 on 2 CPUs, 16 ms a step so against 2.3 bound).
std::string placement_advice(const RunContext& c, int threads_per_rank);

// Every rank's `mine`, in rank order, on every rank (one collective; texts
// longer than 255 bytes are cut).
std::vector<std::string> allgather_strings(MPI_Comm comm, const std::string& mine);

// Collective over `comm`; every rank gets the full context.
RunContext gather_context(MPI_Comm comm, const std::string& tool);

Json context_json(const RunContext& c);

// This process's CPU model and cache levels (data and unified caches).
std::string cpu_model();
std::vector<CacheLevel> cpu_caches();
// "AMD EPYC; L2 1 MiB, L3 32 MiB shared by 2 CPUs" for the header.
std::string cpu_text(const RunContext& c);

// Bytes of memory this node can still give (Linux MemAvailable); 0 if unknown.
unsigned long long available_memory_bytes();

// Whether this process's MPI accepts CUDA device memory, asked at run time:
// Open MPI's MPIX_Query_cuda_support or MPICH's MPIX_GPU_query_support where
// the library's headers declare them; nullopt when this MPI cannot be asked.
// `how` gets the query used (or why there is none).
std::optional<bool> mpi_cuda_aware(std::string* how = nullptr);

// Ranks sharing this rank's node (MPI_COMM_TYPE_SHARED), and this rank's index
// among them.
void node_local(MPI_Comm comm, int& local_rank, int& local_size);

}  // namespace checkmpi
