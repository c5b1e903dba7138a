// SmallChunkHold (p2p/heap.hpp): with free chunks between chunks in use, a
// schedule built as Open MPI's libnbc builds one (calloc(1, 4) grown by
// realloc) is carved from them and moves or merges at every growth; while a
// hold lives it is carved from the heap's top and grows there.
#include <gtest/gtest.h>

#include <cstdlib>
#include <vector>

#include "p2p/heap.hpp"

using checkmpi::p2p::SmallChunkHold;

namespace {

// Gaps: chunks of `bytes`, every other one freed (those carved one after
// another from the top lie between two kept ones, whatever the heap held
// before). 24-byte ones are the holes a C++ start-up leaves; 4000-byte ones,
// too large for the per-thread cache, are free blocks calloc splits before
// it touches the top.
struct Gaps {
  std::vector<void*> kept;
  Gaps(int pairs, std::size_t bytes) {
    std::vector<void*> all(std::size_t(2 * pairs));
    for (void*& p : all) p = std::malloc(bytes);
    for (std::size_t i = 0; i < all.size(); ++i)
      if (i % 2) std::free(all[i]);
      else kept.push_back(all[i]);
  }
  ~Gaps() {
    for (void* p : kept) std::free(p);
  }
};

// Grows a schedule as libnbc does for a 2-rank MPI_Ialltoall; how many growths moved it.
int schedule_moves() {
  void* p = std::calloc(1, 4);
  int moved = 0;
  for (std::size_t n : {68, 116, 156, 157}) {
    void* q = std::realloc(p, n);
    moved += q != p;
    p = q;
  }
  std::free(p);
  return moved;
}

TEST(SmallChunkHold, SchedulesGrowInPlaceWhileHeld) {
  if (!SmallChunkHold::kActive) GTEST_SKIP() << "the hold acts on glibc's allocator only (not a sanitizer's)";
  const Gaps holes(256, 24);
  ASSERT_GT(schedule_moves(), 0) << "the holes should move a schedule (the test's premise)";
  {
    const SmallChunkHold hold;
    EXPECT_GE(hold.held(), 200u);  // the holes
    EXPECT_LT(hold.held(), SmallChunkHold::kMost);
    for (int call = 0; call < 100; ++call) ASSERT_EQ(schedule_moves(), 0) << "call " << call;
  }
  EXPECT_GT(schedule_moves(), 0) << "released: the holes are free again";
}

// Grows a schedule as above; whether it was carved from the top and stayed there, growing in place.
bool schedule_at_top() {
  void* p = std::calloc(1, 4);
  bool top = SmallChunkHold::carved_from_top(p);
  for (std::size_t n : {68, 116, 156, 157}) {
    void* q = std::realloc(p, n);
    top = top && q == p && SmallChunkHold::carved_from_top(q);
    p = q;
  }
  std::free(p);
  return top;
}

TEST(SmallChunkHold, SchedulesAreCarvedFromTheTopWhileHeld) {
  if (!SmallChunkHold::kActive) GTEST_SKIP() << "the hold acts on glibc's allocator only (not a sanitizer's)";
  const Gaps blocks(8, 4000);
  ASSERT_FALSE(schedule_at_top()) << "a free block should take the schedule (the test's premise)";
  {
    const SmallChunkHold hold;
    EXPECT_TRUE(hold.at_top());
    EXPECT_LT(hold.held(), SmallChunkHold::kMost);
    for (int call = 0; call < 100; ++call) ASSERT_TRUE(schedule_at_top()) << "call " << call;
  }
  EXPECT_FALSE(schedule_at_top()) << "released: the blocks are free again";
}

}  // namespace
