#include "core/placement.hpp"

#include <sched.h>

#ifdef CHECKMPI_HAVE_HWLOC
#include <hwloc.h>
#endif

namespace checkmpi {

namespace {

// Package and NUMA node holding `cpu`, as hwloc logical indices.
void topology_of(int cpu, int& package, int& numa) {
  package = numa = -1;
#ifdef CHECKMPI_HAVE_HWLOC
  if (cpu < 0) return;
  hwloc_topology_t topo;
  if (hwloc_topology_init(&topo) != 0) return;
  if (hwloc_topology_load(topo) == 0) {
    hwloc_obj_t pu = hwloc_get_pu_obj_by_os_index(topo, static_cast<unsigned>(cpu));
    if (pu) {
      hwloc_obj_t p = hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_PACKAGE, pu);
      if (p) package = static_cast<int>(p->logical_index);
      // hwloc 2 keeps NUMA nodes off the CPU tree: find the one whose
      // cpuset covers this PU.
      hwloc_obj_t n = hwloc_get_next_obj_covering_cpuset_by_type(topo, pu->cpuset, HWLOC_OBJ_NUMANODE, nullptr);
      if (n) numa = static_cast<int>(n->logical_index);
    }
  }
  hwloc_topology_destroy(topo);
#else
  (void)cpu;
#endif
}

}  // namespace

bool placement_has_topology() {
#ifdef CHECKMPI_HAVE_HWLOC
  return true;
#else
  return false;
#endif
}

std::vector<Placement> gather_placement(MPI_Comm comm, const RunContext& ctx) {
  int mine[3] = {sched_getcpu(), -1, -1};
  topology_of(mine[0], mine[1], mine[2]);
  std::vector<int> all(3 * static_cast<size_t>(ctx.nprocs));
  MPI_Allgather(mine, 3, MPI_INT, all.data(), 3, MPI_INT, comm);
  std::vector<Placement> ranks(static_cast<size_t>(ctx.nprocs));
  for (int r = 0; r < ctx.nprocs; ++r) {
    Placement& p = ranks[static_cast<size_t>(r)];
    p.rank = r;
    p.hostname = ctx.hostnames[static_cast<size_t>(r)];
    p.node = ctx.node_of_rank[static_cast<size_t>(r)];
    p.cpu = all[3 * static_cast<size_t>(r)];
    p.package = all[3 * static_cast<size_t>(r) + 1];
    p.numa = all[3 * static_cast<size_t>(r) + 2];
  }
  return ranks;
}

Json placement_json(const std::vector<Placement>& ranks) {
  Json list = Json::array();
  for (const auto& p : ranks) {
    Json j = Json::object();
    j["rank"] = p.rank;
    j["hostname"] = p.hostname;
    j["cpu"] = p.cpu;
    j["node"] = p.node;
    if (placement_has_topology()) {
      j["package"] = p.package;
      j["numa"] = p.numa;
    }
    list.push(j);
  }
  return list;
}

std::string describe_pair(const Placement& a, const Placement& b) {
  if (a.node != b.node) return "different nodes";
  std::string text = "same node";
  auto level = [&](int x, int y, const char* one, const char* many) {
    if (x >= 0 && y >= 0) text += x == y ? std::string(", same ") + one : std::string(", different ") + many;
  };
  level(a.package, b.package, "package", "packages");
  level(a.numa, b.numa, "NUMA node", "NUMA nodes");
  if (a.cpu >= 0 && a.cpu == b.cpu) text += ", same CPU";
  return text;
}

}  // namespace checkmpi
