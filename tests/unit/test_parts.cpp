// Strategies as parts: the catalog's rows, compositions on the command line,
// the validity rules and their messages.
#include <gtest/gtest.h>

#include <set>

#include "core/errors.hpp"
#include "strategies/strategy.hpp"

using namespace checkmpi;

namespace {

std::string error_of(const std::vector<std::string>& names) {
  try {
    select_strategies(names);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(Catalog, CheckMpiStepsKeepTheirIdsAliasesAndNumbers) {
  const char* ids[] = {"step0", "step1", "step2", "step3", "step4", "step5",
                       "step6", "step7", "step8", "step9", "step10"};
  const char* aliases[] = {"sendrecv-dtype", "sendrecv-packx", "sendrecv-pack", "kernel-pack",
                           "kernel-pack-aware", "isend-recv-x", "isend-recv", "isend-irecv",
                           "overlap", "overlap-async", "overlap-masked"};
  for (int n = 0; n <= 10; ++n) {
    const auto s = select_strategies({std::to_string(n)});
    ASSERT_EQ(s.size(), 1u);
    EXPECT_EQ(s[0]->id, ids[n]);
    EXPECT_EQ(s[0]->alias, aliases[n]);
    EXPECT_EQ(s[0]->number, n);
  }
}

TEST(Catalog, EveryRowIsAValidDistinctCombination) {
  std::set<std::string> ids, compositions;
  for (const StrategyInfo& s : strategy_catalog()) {
    EXPECT_EQ(invalid_reason(s.parts), "") << s.id;
    EXPECT_TRUE(ids.insert(s.id).second) << s.id;
    EXPECT_TRUE(compositions.insert(composition(s.parts)).second) << s.id;
    EXPECT_EQ(parse_parts(composition(s.parts)), s.parts) << s.id;  // composition() reads back
  }
  for (const char* id : {"persistent", "neighbor-alltoallv", "neighbor-alltoallw", "ineighbor-overlap", "rma-fence",
                         "rma-pscw", "shm-window", "partitioned", "mpi-pack", "mock"})
    EXPECT_EQ(ids.count(id), 1u) << id;
}

TEST(Catalog, HostOnlyRowsSayWhy) {
  for (const char* id : {"step0", "step1", "step2", "neighbor-alltoallw", "shm-window", "mpi-pack"})
    EXPECT_TRUE(select_strategies({id})[0]->host_only()) << id;
  for (const char* id : {"step3", "step7", "step10", "persistent", "rma-pscw", "mock"})
    EXPECT_FALSE(select_strategies({id})[0]->host_only()) << id;
  EXPECT_NE(host_only_reason(select_strategies({"step2"})[0]->parts).find("pack=hand"), std::string::npos);
}

TEST(Compositions, NamedOnTheCommandLine) {
  // A composition equal to a row is that row (schedule and defaults filled in).
  auto s = select_strategies({"pack=kernel", "transport=isend-irecv"});
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0]->id, "step7");
  // A new one gets an id of its own and keeps the user's words as its alias.
  s = select_strategies({"step2", "pack=kernel", "transport=persistent", "overlap=interior", "step9"});
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0]->id, "step2");
  EXPECT_EQ(s[1]->id.rfind("custom", 0), 0u) << s[1]->id;
  EXPECT_EQ(s[1]->alias, "pack=kernel,transport=persistent,overlap=interior");
  EXPECT_EQ(s[1]->parts.overlap, Overlap::Interior);
  EXPECT_EQ(s[2]->id, "step9");
  // A repeated key starts the next composition.
  s = select_strategies({"pack=hand", "transport=sendrecv", "pack=kernel", "transport=rma-fence"});
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0]->parts.packing, Packing::Hand);
  EXPECT_EQ(s[1]->id, "rma-fence");
}

TEST(Compositions, InvalidOnesSayWhy) {
  EXPECT_NE(error_of({"transport=sendrecv", "overlap=interior"}).find("overlap=interior needs a transport"),
            std::string::npos);
  EXPECT_NE(error_of({"pack=dtype", "transport=rma-fence"}).find("sends packed messages"), std::string::npos);
  EXPECT_NE(error_of({"transport=neighbor-alltoallv", "completion=waitany"}).find("waitany needs a request"),
            std::string::npos);
  EXPECT_NE(error_of({"overlap=masked", "compute=two-pass"}).find("double-buffered"), std::string::npos);
  EXPECT_NE(error_of({"transport=isend-irecv", "schedule=by-direction"}).find("schedule=all-at-once"),
            std::string::npos);
  EXPECT_NE(error_of({"pack=hand", "buffers=host"}).find("needs pack=kernel"), std::string::npos);
  EXPECT_NE(error_of({"pack=kernel", "transport=carrier-pigeon"}).find("transport=carrier-pigeon is unknown"),
            std::string::npos);
  EXPECT_NE(error_of({"colour=blue"}).find("strategy part 'colour' is unknown"), std::string::npos);
  EXPECT_NE(error_of({"step99"}).find("unknown strategy 'step99'"), std::string::npos);
}

TEST(Compositions, AllAndNamedChoices) {
  const auto all = select_strategies({"all"});
  EXPECT_EQ(all.size(), strategy_catalog().size());
  const StrategyInfo& step3 = *select_strategies({"step3"})[0];
  EXPECT_TRUE(chosen_by_all(step3, {"all"}));
  EXPECT_FALSE(chosen_by_all(step3, {"all", "3"}));
  EXPECT_FALSE(chosen_by_all(step3, {"step3"}));
}

TEST(Compositions, ComputeAutoFollowsTheRun) {
  const Parts step7 = select_strategies({"step7"})[0]->parts;
  EXPECT_EQ(resolved_compute(step7, Compute::OnePass), Compute::OnePass);
  EXPECT_EQ(resolved_compute(step7, Compute::TwoPass), Compute::TwoPass);
  const Parts step10 = select_strategies({"step10"})[0]->parts;  // double-buffered by definition
  EXPECT_EQ(resolved_compute(step10, Compute::TwoPass), Compute::OnePass);
  // Every row runs one pass by default; two-pass is CheckMPI's own compute: host-packing steps in place.
  for (const char* id : {"step0", "step2", "neighbor-alltoallw", "mpi-pack"}) {
    const Parts p = select_strategies({id})[0]->parts;
    EXPECT_EQ(resolved_compute(p, Compute::OnePass), Compute::OnePass) << id;
    EXPECT_EQ(resolved_compute(p, Compute::TwoPass), Compute::InPlace) << id;
  }
  const Parts interior = select_strategies({"pack=hand,transport=isend-irecv,overlap=interior"})[0]->parts;
  EXPECT_EQ(resolved_compute(interior, Compute::TwoPass), Compute::TwoPass);  // in place cannot be split
}

}  // namespace

// The transports' table is consistent with itself and with the rules built
// on it: a row per transport, in the enum's order.
TEST(TransportTraits, TheTableAgreesWithItsRules) {
  const auto names = part_names();
  ASSERT_EQ(names[2].first, "transport");
  for (const std::string& name : names[2].second) {
    const Transport t = parse_parts("transport=" + name).transport;
    const TransportTraits& tt = transport_traits(t);
    SCOPED_TRACE(name);
    // Exchanging direction by direction needs sets no larger than a direction.
    for (Grain g : tt.grain) EXPECT_TRUE(tt.schedule == Schedule::AllAtOnce || g != Grain::Step);
    // One call for the step is one call for every direction.
    EXPECT_EQ(tt.grain[1] == Grain::Step, tt.grain[0] == Grain::Step);
    EXPECT_EQ(tt.grain[2] == Grain::Step, tt.grain[0] == Grain::Step);
    // Testing for arrival only helps a compute that runs while the messages fly.
    EXPECT_TRUE(!tt.tests || tt.returns_early);
    // Waiting for any message needs one request per message, posted a direction at a time.
    EXPECT_TRUE(!tt.request_per_message || tt.grain[0] == Grain::Direction);
    EXPECT_EQ(schedule_of(t), tt.schedule);
    EXPECT_EQ(part_traits(Parts{Packing::Kernel, Buffers::Backend, t}).mpi, tt.measured);
    EXPECT_EQ(invalid_reason(Parts{Packing::Kernel, Buffers::Backend, t, tt.schedule, Completion::Waitany})
                  .find("completion=waitany") == std::string::npos,
              tt.request_per_message);
  }
  // The rows CheckMPI's steps depend on.
  EXPECT_EQ(transport_traits(Transport::Sendrecv).grain[0], Grain::Message);
  EXPECT_EQ(transport_traits(Transport::IsendRecvX).grain[0], Grain::Direction);
  EXPECT_EQ(transport_traits(Transport::IsendRecvX).grain[1], Grain::Message);
  EXPECT_TRUE(transport_traits(Transport::Partitioned).packs_as_it_sends);
  EXPECT_TRUE(transport_traits(Transport::NeighborAlltoallw).bundles_fields);
  EXPECT_FALSE(transport_traits(Transport::Mock).measured);
}
