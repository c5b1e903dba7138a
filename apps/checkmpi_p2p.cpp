// checkmpi-p2p: point-to-point latency, bandwidth, LogGP and datatype costs,
// and the overlap of non-blocking collectives.
#include <mpi.h>

#include <exception>
#include <iostream>

#include "core/atomic_file.hpp"
#include "p2p/main.hpp"
#include "p2p/options.hpp"
#include "p2p/progress.hpp"

int main(int argc, char** argv) {
  // The library reads its progress-thread setting in MPI_Init (and this
  // tool reads it back before: see p2p/progress.hpp). Only the main
  // thread calls MPI (the watchdog's one exception is MPI_Abort, see
  // core/watchdog.hpp), except with pingpong --threads, which asks for
  // MPI_THREAD_MULTIPLE (and is refused without it); the level asked for
  // otherwise is p2p/options.hpp's wanted_thread_level.
  const int level = checkmpi::p2p::wanted_thread_level(argc, argv);
  const int progress_setting = checkmpi::p2p::request_progress_thread(argc, argv, level);
  int provided = MPI_THREAD_SINGLE;
  MPI_Init_thread(&argc, &argv, level, &provided);
  checkmpi::remove_temporaries_on_signals();
  int code = 1;
  try {
    code = checkmpi::p2p::p2p_main(argc, argv, progress_setting);
  } catch (const std::exception& e) {
    // Anything else is unexpected and may have hit one rank only: abort the
    // job rather than leave the other ranks waiting.
    std::cerr << (std::string("checkmpi-p2p: internal error: ") + e.what() + "\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Finalize();
  return code;
}
