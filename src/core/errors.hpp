// Error kinds and exit codes shared by every checkmpi tool, and the one
// collective that turns a failure seen on some ranks into the same error on all.
#pragma once

#include <mpi.h>

#include <stdexcept>
#include <string>

namespace checkmpi {

enum ExitCode : int {
  kExitOk = 0,
  kExitInternal = 1,  // a bug or an MPI/system failure we did not anticipate
  kExitUsage = 2,     // bad input: options, input file, sizes, resources
  kExitInvalid = 3,   // a run finished but its results failed validation
};

// Bad input: reported as one line, exit code 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Every rank calls this with its own verdict (empty = fine). If any rank
// failed, all ranks throw UsageError carrying the message of the lowest
// failing rank, so no rank is left waiting in a later collective.
void agree(MPI_Comm comm, const std::string& local_error);

}  // namespace checkmpi
