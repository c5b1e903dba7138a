// Where each rank runs: host, CPU and, when built with hwloc, the package
// (socket) and NUMA node of that CPU. Point-to-point figures depend on it.
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

#include "core/context.hpp"
#include "core/json.hpp"

namespace checkmpi {

struct Placement {
  int rank = 0;
  std::string hostname;
  int cpu = -1;      // sched_getcpu() when gathered; -1 if unknown
  int node = 0;      // index into the run's hosts, as RunContext::node_of_rank
  int package = -1;  // hwloc logical indices; -1 without hwloc or if unknown
  int numa = -1;
};

// True when this build reads the topology with hwloc.
bool placement_has_topology();

// Collective over `comm`; every rank gets everyone's placement.
std::vector<Placement> gather_placement(MPI_Comm comm, const RunContext& ctx);

// [{"rank", "hostname", "cpu", "node"} (+ "package", "numa" with hwloc), ...]
Json placement_json(const std::vector<Placement>& ranks);

// "same node", "different nodes", or with hwloc e.g. "same node, same
// package, different NUMA nodes".
std::string describe_pair(const Placement& a, const Placement& b);

}  // namespace checkmpi
