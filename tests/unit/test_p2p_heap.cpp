// SmallChunkHold (p2p/heap.hpp): with small free chunks between chunks in
// use, a schedule built as Open MPI's libnbc builds one (calloc(1, 4) grown
// by realloc) moves at every growth; while a hold lives it grows in place.
#include <gtest/gtest.h>

#include <cstdlib>
#include <vector>

#include "p2p/heap.hpp"

using checkmpi::p2p::SmallChunkHold;

namespace {

// Holes: 24-byte chunks, every other one freed, as a C++ start-up leaves them.
struct Holes {
  std::vector<void*> kept;
  explicit Holes(int pairs) {
    std::vector<void*> all(std::size_t(2 * pairs));
    for (void*& p : all) p = std::malloc(24);
    for (std::size_t i = 0; i < all.size(); ++i)
      if (i % 2) std::free(all[i]);
      else kept.push_back(all[i]);
  }
  ~Holes() {
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
  Holes holes(256);
  ASSERT_GT(schedule_moves(), 0) << "the holes should move a schedule (the test's premise)";
  {
    const SmallChunkHold hold;
    EXPECT_GE(hold.held(), 200u);  // the holes
    EXPECT_LT(hold.held(), SmallChunkHold::kMost);
    for (int call = 0; call < 100; ++call) ASSERT_EQ(schedule_moves(), 0) << "call " << call;
  }
  EXPECT_GT(schedule_moves(), 0) << "released: the holes are free again";
}

}  // namespace
