// The MPI library's asynchronous progress thread: the environment setting
// that starts it (set before MPI_Init), and what is in effect (read back
// through the MPI tool interface).
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
// setting into the environment (overriding a value already there). Open
// MPI: returns the setting's value as the library reads it (its MPI_T
// control variable, at thread level `level`, the one MPI_Init_thread will
// ask for), -1 where it has none; read here because an MPI_T session after
// MPI_Init rearranges the heap under the library's per-call objects, which
// left OSU's own MPI_Ialltoall loop 40-50 ns (12 %) slower for the rest of
// the run with Open MPI 4.1.4 (docs/p2p_osu.md item 14). MPICH: a value
// that has progress_thread_state read it after MPI_Init.
int request_progress_thread(int argc, char** argv, int level);

// After MPI_Init; `setting` is request_progress_thread's value.
ProgressThread progress_thread_state(bool requested, int setting);

// {"requested", "setting", "covers", "active", "thread_level", "note"};
// setting and covers null when the library has none.
Json progress_thread_json(const ProgressThread& p);

}  // namespace checkmpi::p2p
