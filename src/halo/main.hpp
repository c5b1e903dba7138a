// checkmpi-halo's whole run: configuration, checks, every selected strategy,
// report. The app's main() only initialises and finalises MPI around it.
#pragma once

namespace checkmpi {

// Returns the process exit code (see ExitCode). Collective over MPI_COMM_WORLD.
int halo_main(int argc, char** argv);

}  // namespace checkmpi
