#!/usr/bin/env bash
# p2p_osu_hold.sh MPICXX: bench/osu_heap_hold.cpp, the preload bench/p2p_osu.sh
# puts into osu_ialltoall, builds with the build's MPI and holds the heap from
# the first MPI_Ialltoall of each count: with free blocks between chunks in
# use, a schedule-like calloc(1, 4) is carved from a block before it and
# from the heap's top just after it (src/p2p/heap.hpp; after MPI_Wait the
# library's own frees may leave free chunks again, with MPICH they do), and
# the all-to-all delivers its data.
source "$(dirname "$0")/lib.sh"
mpicxx=${1:?usage: p2p_osu_hold.sh MPICXX}
repo=$(cd "$(dirname "$0")/../.." && pwd)
dir=$(scratch)
cd "$dir"
"$mpicxx" -O2 -shared -fPIC -I"$repo/src" -o hold.so "$repo/bench/osu_heap_hold.cpp" "$repo/src/p2p/heap.cpp" \
  >build.txt 2>&1 || fail "bench/osu_heap_hold.cpp does not build: $(tail -3 build.txt)"
cat >probe.cpp <<'CPP'
#include <mpi.h>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include "p2p/heap.hpp"
using checkmpi::p2p::SmallChunkHold;
static bool calloc_at_top() {
  void* p = std::calloc(1, 4);
  const bool top = SmallChunkHold::carved_from_top(p);
  std::free(p);
  return top;
}
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  std::vector<void*> all(16), kept;  // 4000-byte blocks, every other one freed
  for (void*& p : all) p = std::malloc(4000);
  for (std::size_t i = 0; i < all.size(); ++i)
    if (i % 2) std::free(all[i]);
    else kept.push_back(all[i]);
  const bool before = calloc_at_top();
  std::vector<int> s(n * 4), r(n * 4, -1);
  for (int i = 0; i < n * 4; ++i) s[i] = rank * 1000 + i;
  bool data = true, after = true;
  for (int count : {1, 4}) {  // a new count each time: the preload takes a new hold
    MPI_Request q;
    MPI_Ialltoall(s.data(), count, MPI_INT, r.data(), count, MPI_INT, MPI_COMM_WORLD, &q);
    after = after && calloc_at_top();
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    for (int src = 0; src < n; ++src)
      for (int k = 0; k < count; ++k) data = data && r[src * count + k] == src * 1000 + rank * count + k;
  }
  std::printf("rank %d before %d after %d data %d\n", rank, before, after, data);
  for (void* p : kept) std::free(p);
  MPI_Finalize();
  return SmallChunkHold::kActive && (before || !after) ? 1 : data ? 0 : 2;
}
CPP
"$mpicxx" -O2 -I"$repo/src" -o probe probe.cpp "$repo/src/p2p/heap.cpp" >build.txt 2>&1 ||
  fail "the probe does not build: $(tail -3 build.txt)"
run_mpi 2 env "LD_PRELOAD=$dir/hold.so" ./probe >out.txt 2>&1 || fail "with the preload: $(cat out.txt)"
[ "$(grep -c 'after 1 data 1' out.txt)" -eq 2 ] || fail "with the preload: $(cat out.txt)"
# Without it the blocks keep taking the schedule: the probe says so (exit 1).
rc=0
run_mpi 1 ./probe >out.txt 2>&1 || rc=$?
if [ "$rc" -eq 0 ] || ! grep -q 'after 0 data 1' out.txt; then
  fail "without the preload (exit $rc): $(cat out.txt)"
fi
echo "p2p_osu_hold: ok"
