// checkmpi-p2p's whole run: options, context, the chosen mode, output.
#pragma once

namespace checkmpi::p2p {

// Call between MPI_Init and MPI_Finalize with request_progress_thread's
// value (p2p/progress.hpp); returns the exit code.
int p2p_main(int argc, char** argv, int progress_setting);

}  // namespace checkmpi::p2p
