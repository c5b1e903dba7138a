// bench/p2p_osu.sh's preload for osu_ialltoall: the heap held as checkmpi-p2p
// nbc holds it (src/p2p/heap.hpp) from the first MPI_Ialltoall of a message
// size to the first of the next, so that Open MPI's libnbc carves its
// schedules from the heap's top in both programs. OSU's loop is untouched;
// the hold is taken in the first warm-up call of each size, outside OSU's
// timed iterations. Built by the script with the build's mpicxx:
//   mpicxx -O2 -shared -fPIC -Isrc bench/osu_heap_hold.cpp src/p2p/heap.cpp
#include <mpi.h>

#include <memory>

#include "p2p/heap.hpp"

namespace {
std::unique_ptr<checkmpi::p2p::SmallChunkHold> hold;
int held_count = -1;  // the send count the hold was taken for
}  // namespace

extern "C" int MPI_Ialltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                             MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  if (sendcount != held_count) {
    hold.reset();  // release first: the new hold then starts from the same heap as checkmpi-p2p's next point
    hold = std::make_unique<checkmpi::p2p::SmallChunkHold>();
    held_count = sendcount;
  }
  return PMPI_Ialltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request);
}

extern "C" int MPI_Finalize() {
  hold.reset();
  return PMPI_Finalize();
}
