// Error kinds and exit codes shared by every checkmpi tool, and the
// collectives that turn a failure seen on some ranks into the same error on all.
// The exit-code policy (README, "Exit codes") is the same for checkmpi-halo,
// checkmpi-p2p and the checkmpi command.
#pragma once

#include <mpi.h>

#include <stdexcept>
#include <string>
#include <type_traits>

namespace checkmpi {

enum ExitCode : int {
  kExitOk = 0,
  kExitInternal = 1,  // any failure during or after the run: I/O (a JSON or log not written), a bug
  kExitUsage = 2,     // bad input, found before anything runs: options, input file, sizes, resources
  kExitInvalid = 3,   // a run finished but its results failed validation
};

// Bad input: reported as one line, exit code 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A failure once the run has started (a file that cannot be written): one
// line, exit code 1.
struct RunError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Received data differed from what was sent: exit code 3.
struct ValidationError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// An output file could not be written (disk full, permissions, I/O error):
// reported as one line naming the file and the system's reason, exit code 1.
struct OutputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Every rank calls this with its own verdict (empty = fine). Returns, on every
// rank, the message of the lowest failing rank and sets `failing_rank` to it;
// returns "" and sets -1 when no rank failed.
std::string first_error(MPI_Comm comm, const std::string& local_error, int& failing_rank);

// As first_error, but if any rank failed, all ranks throw UsageError carrying
// that message, so no rank is left waiting in a later collective.
void agree(MPI_Comm comm, const std::string& local_error);

// As agree(), but the error is an OutputError.
void agree_output(MPI_Comm comm, const std::string& local_error);
// The same for failures during or after the run: every rank throws RunError.
void agree_run(MPI_Comm comm, const std::string& local_error);

// UsageError on every rank unless all were started with the same arguments
// (an MPMD launch giving ranks different options waited in a collective
// until the watchdog called it a hang).
void same_arguments(MPI_Comm comm, int argc, char** argv);

// Runs `f` on every rank; if it throws UsageError on any rank, every rank
// throws the same error (so nobody is left in a collective).
template <class F>
auto collectively(MPI_Comm comm, F&& f) {
  std::string error;
  using R = decltype(f());
  if constexpr (std::is_void_v<R>) {
    try { f(); } catch (const UsageError& e) { error = e.what(); }
    agree(comm, error);
  } else {
    R value{};
    try { value = f(); } catch (const UsageError& e) { error = e.what(); }
    agree(comm, error);
    return value;
  }
}

}  // namespace checkmpi
