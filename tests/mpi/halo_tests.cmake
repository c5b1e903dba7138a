# MPI integration tests of checkmpi-halo.
