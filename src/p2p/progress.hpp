// The MPI library's asynchronous progress thread: the environment setting
// that starts it (set before MPI_Init), and what is in effect (read back
// through the MPI tool interface after).
//
//   MPICH 4:      MPIR_CVAR_ASYNC_PROGRESS=1 starts a thread that runs the
//                 progress engine (and raises the thread level to
//                 MPI_THREAD_MULTIPLE): all communication advances.
//   Open MPI 4.1: no progress thread for shared memory or for the schedules
//                 of non-blocking collectives (ompi_info: "OMPI progress:
//                 no"); btl_tcp_progress_thread=1 moves TCP traffic only.
#pragma once

#include <string>

#include "core/json.hpp"

namespace checkmpi::p2p {

struct ProgressThread {
  bool requested = false;    // --progress-thread
  std::string setting;       // e.g. "MPIR_CVAR_ASYNC_PROGRESS=1"; "" if this library has none
  std::string covers;        // what the thread advances; "" if none
  bool active = false;       // the setting reads back on through MPI_T
  std::string thread_level;  // MPI_Query_thread, e.g. "MPI_THREAD_SINGLE"
  std::string note;          // one line for the header
};

// Before MPI_Init: if argv has --progress-thread, puts this library's
// setting into the environment (overriding a value already there).
void request_progress_thread(int argc, char** argv);

// After MPI_Init.
ProgressThread progress_thread_state(bool requested);

// {"requested", "setting", "covers", "active", "thread_level", "note"};
// setting and covers null when the library has none.
Json progress_thread_json(const ProgressThread& p);

}  // namespace checkmpi::p2p
