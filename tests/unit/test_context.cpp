// The run context's placement texts: binding, oversubscription and the advice
// on where to place the ranks.
#include <gtest/gtest.h>

#include "core/context.hpp"

using namespace checkmpi;

namespace {

// Ranks on one node, each allowed on `cpus_of_rank[r]`, `cpus` CPUs between them, `online` CPUs online.
RunContext one_node(int cpus, std::vector<std::string> cpus_of_rank, double ranks_per_cpu, int online = 0) {
  RunContext c;
  c.nprocs = c.ranks_per_node = int(cpus_of_rank.size());
  c.node_of_rank.assign(cpus_of_rank.size(), 0);
  c.cpus_of_rank = std::move(cpus_of_rank);
  c.cpus_per_node = {cpus};
  c.online_cpus_per_node = {online > 0 ? online : cpus};
  c.ranks_on_node = {c.nprocs};
  c.ranks_per_cpu = ranks_per_cpu;
  return c;
}

bool says(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST(Context, UnboundRanksOfSeveralThreadsAreAdvisedToBind) {
  const RunContext unbound = one_node(2, {"0-1", "0-1"}, 1.0);  // MPICH's hydra by default
  EXPECT_EQ(binding_text(unbound), "none (every rank may run on all its node's CPUs)");
  EXPECT_TRUE(oversubscribed(unbound, 2));
  EXPECT_TRUE(says(placement_advice(unbound, 2), "not bound") &&
              says(placement_advice(unbound, 2), "bind each rank (MPICH: mpiexec -bind-to core"));
  EXPECT_EQ(placement_advice(unbound, 1), "");  // one thread per rank: 2 on 2 CPUs, not oversubscribed

  const RunContext bound = one_node(2, {"0", "1"}, 1.0);  // Open MPI's default, hydra's -bind-to core
  EXPECT_EQ(binding_text(bound), "1 CPU per rank");
  EXPECT_TRUE(oversubscribed(bound, 2));
  EXPECT_EQ(placement_advice(bound, 2), "");  // a core each: nothing better on 2 CPUs

  const RunContext alone = one_node(2, {"0-1"}, 0.5);  // one rank: its threads only wait for each other
  EXPECT_TRUE(oversubscribed(alone, 4));
  EXPECT_EQ(placement_advice(alone, 4), "");

  const RunContext roomy = one_node(8, {"0-7", "0-7"}, 0.25);  // 2 x 2 threads on 8 CPUs: room for all
  EXPECT_FALSE(oversubscribed(roomy, 2));
  EXPECT_EQ(placement_advice(roomy, 2), "");
}

TEST(Context, RanksOnFewerCpusThanOnlineAreAdvisedToSpread) {
  // Open MPI's default for 1 rank on a machine of 2 CPUs: bound to one core, its 2 threads taking turns there.
  const RunContext one_core = one_node(1, {"0"}, 1.0, 2);
  EXPECT_EQ(binding_text(one_core), "1 CPU per rank");
  EXPECT_TRUE(oversubscribed(one_core, 2));
  EXPECT_EQ(placement_advice(one_core, 2),
            "the ranks may run on 1 of the 2 CPUs online: if the job has more, give each rank 2 cores (Open MPI: "
            "--map-by slot:PE=2; MPICH: mpiexec -bind-to core:2)");
  EXPECT_EQ(placement_advice(one_core, 1), "");  // not oversubscribed

  // Unbound inside a cgroup of 2 CPUs of a 64-CPU node: 2 CPUs per rank, more online than the job may have.
  const RunContext cgroup = one_node(2, {"4-5", "4-5"}, 1.0, 64);
  EXPECT_EQ(binding_text(cgroup), "2 CPUs per rank");
  EXPECT_TRUE(says(placement_advice(cgroup, 2), "may run on 2 of the 64 CPUs online: if the job has more"));
}
