// checkmpi-halo: runs CheckMPI's halo-exchange strategies in one job.
#include <mpi.h>

#include <exception>
#include <iostream>

#include "core/atomic_file.hpp"
#include "halo/main.hpp"

int main(int argc, char** argv) {
  // Only the main thread calls MPI (OpenMP threads and the watchdog do not;
  // the watchdog's one exception is MPI_Abort, see core/watchdog.hpp).
  int provided = MPI_THREAD_SINGLE;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  checkmpi::remove_temporaries_on_signals();
  int code = 1;
  try {
    code = checkmpi::halo_main(argc, argv);
  } catch (const std::exception& e) {
    // Anything else is unexpected and may have hit one rank only: abort the
    // job rather than leave the other ranks waiting.
    std::cerr << (std::string("checkmpi-halo: internal error: ") + e.what() + "\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Finalize();
  return code;
}
