// The collectives mode nbc measures: each with its buffers, its blocking
// call, its non-blocking call, and (-c) how to fill what this rank sends and
// check what it received.
#pragma once

#include <mpi.h>

#include <memory>
#include <string>

#include "p2p/options.hpp"
#include "p2p/pencil.hpp"

namespace checkmpi::p2p {

class Collective {
 public:
  virtual ~Collective() = default;
  virtual void blocking() = 0;                  // e.g. MPI_Alltoall
  virtual void post(MPI_Request* request) = 0;  // e.g. MPI_Ialltoall; MPI_Wait completes it
  // -c, outside the timed region: fill the send data of `iteration` (rank
  // 0 damaging byte `damage` of it at iteration 0 when damage >= 0, the test
  // hook), and check what arrived: "" or what is wrong.
  virtual void prepare(long long iteration) = 0;
  virtual std::string verify(long long iteration) = 0;
  // What verify's messages call it: nbc's non-blocking name, or coll's blocking one (make_collective sets it).
  const char* name = "";
};

// The OSU-style collectives over `comm` with messages of `size` bytes:
// ialltoall(v) sends `size` bytes to every rank (v: counts and displacements
// given, all equal, as OSU's osu_ialltoallv), iallreduce sums size / 4
// floats, ibcast sends `size` bytes from rank 0.
std::unique_ptr<Collective> make_collective(NbcOp op, long long size, MPI_Comm comm, long long damage);

// Mode coll's: the four above under their blocking names, and allgather
// (`size` bytes from every rank to every rank), reduce-scatter (size / 4
// floats summed, rank r keeping its share, the first size/4 % P ranks one
// float more, as MPI_Reduce_scatter with OSU's counts) and barrier (no data).
std::unique_ptr<Collective> make_collective(CollOp op, long long size, MPI_Comm comm, long long damage);

// A pencil transpose of rank (row, col) over its sub-communicator `sub`
// (the column for X->Y, the row for Y->Z): MPI_(I)alltoallv of doubles
// with the plan's counts and displacements; -c packs the input pencil
// before and unpacks and checks the output pencil after.
std::unique_ptr<Collective> make_transpose(const PencilGrid& g, Transpose t, MPI_Comm sub, int row, int col,
                                           long long damage);

}  // namespace checkmpi::p2p
